// Runs the official TypeScript schema extraction of a graph in a worker thread of its own (./extract-worker.mjs), so
// the compiler's seconds of CPU never block the event loop that serves requests and runs graphs.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { JsonSchema } from "./types.js";

/** What the official extraction gives for one exported graph: schemas by name, `export` and `export|node|...`. */
export type StaticSchemas = Record<
  string,
  Partial<Record<"state" | "input" | "output" | "config", JsonSchema>>
>;

/** A graph's module and export, as the official extraction takes them. */
export interface StaticSpec {
  sourceFile: string;
  exportSymbol: string;
}

export interface Extracted {
  result: StaticSchemas;
  /** Every file the compiler read (sources, package.json files, declarations, tsconfig.json) -> sha256 of it. */
  read: Record<string, string>;
  /** Paths outside node_modules the compiler looked for and did not find. */
  missing: string[];
}

/** A line the parser printed (its diagnostics, its warnings). */
export interface ParserOutput {
  level: string;
  text: string;
}

const require = createRequire(import.meta.url);

/** Where the official parser and the compiler it uses are (resolved once). */
export const PARSER = (() => {
  const pkgJson = require.resolve("@langchain/langgraph-api/package.json");
  const fromParser = createRequire(pkgJson);
  const version = (file: string) => (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
  return {
    schemaModule: pathToFileURL(require.resolve("@langchain/langgraph-api/schema")).href,
    typescript: fromParser.resolve("typescript"),
    /** Versions of the packages whose code decides the schemas. */
    versions: {
      "@langchain/langgraph-api": version(pkgJson),
      typescript: version(fromParser.resolve("typescript/package.json")),
      "@typescript/vfs": version(fromParser.resolve("@typescript/vfs/package.json")),
    },
  };
})();

/** The worker's failure, with what the parser printed before it. */
export class ExtractionError extends Error {
  constructor(
    message: string,
    readonly output: ParserOutput[] = [],
  ) {
    super(message);
  }
}

/** A running extraction: its outcome, and a way to stop it (the server closes). */
export interface Extraction {
  done: Promise<{ extracted: Extracted; output: ParserOutput[] }>;
  stop: () => void;
}

/** Extracts one graph's schemas (and its subgraphs') from its types, in a fresh worker thread. */
export function extractInWorker(spec: StaticSpec, timeoutMs: number): Extraction {
  const worker = new Worker(new URL("./extract-worker.mjs", import.meta.url), {
    workerData: { schemaModule: PARSER.schemaModule, typescript: PARSER.typescript, spec },
    stdout: true,
    stderr: true,
  });
  // What the worker prints outside the parser's console (nothing expected) is dropped, never sent to our stdout.
  worker.stdout.resume();
  worker.stderr.resume();
  let stop = () => {};
  const done = new Promise<{ extracted: Extracted; output: ParserOutput[] }>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new ExtractionError(`timed out after ${timeoutMs / 1000} s`));
      void worker.terminate();
    }, timeoutMs);
    stop = () => {
      clearTimeout(timer);
      reject(new ExtractionError("stopped"));
      void worker.terminate();
    };
    type Reply = Partial<Extracted> & { error?: string; stack?: string; output: ParserOutput[] };
    worker.once("message", (msg: Reply) => {
      clearTimeout(timer);
      void worker.terminate();
      if (msg.result) {
        const { result, read = {}, missing = [] } = msg;
        resolve({ extracted: { result, read, missing }, output: msg.output });
      } else {
        const stack = msg.stack ? [{ level: "debug", text: msg.stack }] : [];
        reject(new ExtractionError(msg.error ?? "extraction failed", [...msg.output, ...stack]));
      }
    });
    worker.once("error", (e) => {
      clearTimeout(timer);
      reject(new ExtractionError(e.message));
    });
    worker.once("exit", (code) => {
      clearTimeout(timer);
      reject(new ExtractionError(`worker exited with code ${code}`));
    });
  });
  return { done, stop };
}
