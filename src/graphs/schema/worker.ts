// Runs the TypeScript schema extraction in a worker thread, so the compiler's seconds of CPU never block
// the event loop that serves requests and runs graphs.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { StaticResult, StaticTarget } from "./static.js";

/** Upper bound for one extraction (a type check of the graph's file and what it imports). */
const TIMEOUT_MS = 120_000;

// The worker loads the TypeScript extractor through tsx, whether Hangar runs from source or from a build.
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.tsx)
  .then(({ tsImport }) => tsImport(workerData.extractor, workerData.extractor))
  .then((m) => m.extractStaticSchemas(workerData.graphs))
  .then(
    (result) => parentPort.postMessage({ result }),
    (e) => parentPort.postMessage({ error: String((e && e.stack) || e) }),
  );
`;

/**
 * Where tsx's ESM API is: `import.meta.resolve`, or where a module loader lacks it (a server started inside a
 * test runner) the `import` entry of the package's exports.
 */
function tsxApiUrl(): string {
  if (typeof import.meta.resolve === "function") return import.meta.resolve("tsx/esm/api");
  const pkgFile = createRequire(import.meta.url).resolve("tsx/package.json");
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as {
    exports: Record<string, { import: { default: string } }>;
  };
  return pathToFileURL(join(dirname(pkgFile), pkg.exports["./esm/api"].import.default)).href;
}

/** Extracts the schemas of graphs (and of their subgraphs) from their types, in a worker thread. */
export function extractInWorker(graphs: StaticTarget[]): Promise<StaticResult[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        tsx: tsxApiUrl(),
        extractor: new URL("./static.js", import.meta.url).href,
        graphs,
      },
    });
    const timer = setTimeout(() => {
      void worker.terminate();
      reject(new Error(`schema extraction timed out after ${TIMEOUT_MS / 1000}s`));
    }, TIMEOUT_MS);
    const done = () => {
      clearTimeout(timer);
      void worker.terminate();
    };
    worker.once("message", (msg: { result?: StaticResult[]; error?: string }) => {
      done();
      if (msg.result) resolve(msg.result);
      else reject(new Error(msg.error ?? "schema extraction failed"));
    });
    worker.once("error", (e) => {
      done();
      reject(e);
    });
    worker.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`schema extraction worker exited with code ${code}`));
    });
  });
}
