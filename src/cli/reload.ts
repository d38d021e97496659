// `hangar dev` with reload: runs the server in a child process and restarts it when a file of the project
// changes. chokidar watches the project's folders, so a file an editor saves by rename (`sed -i`, a temp file
// renamed over it) is still seen, and a save that breaks the server is followed by the one that fixes it.
import { spawn, type ChildProcess } from "node:child_process";
import type { Stats } from "node:fs";
import { dirname, extname, relative, resolve, sep } from "node:path";
import { watch } from "chokidar";
import type { DevOptions } from "./dev.js";
import { rootLogger } from "../lib/logger.js";

/** The files whose change restarts the server: code, and configuration it reads (langgraph.json, package.json). */
const WATCHED = new Set([".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json", ".css"]);

/** Quiet time after the last change before restarting (a save touches several files, or one file twice). */
const DEBOUNCE_MS = 200;

/**
 * What the reload watcher of `projectDir` ignores: node_modules, dot-files and dot-folders (.git, .hangar,
 * editors' swap files), the data directory, and files that are not code or configuration (a log written into
 * the project, a database, an upload): only what the server loads restarts it, so `hangar dev > dev.log` in the
 * project does not restart it for ever.
 */
export function watchIgnored(projectDir: string, dataDir: string): (path: string, stats?: Stats) => boolean {
  return (path, stats) => {
    if (path === dataDir || path.startsWith(dataDir + sep)) return true;
    const rel = relative(projectDir, path);
    if (rel === "") return false;
    if (rel.split(sep).some((part) => part === "node_modules" || part.startsWith("."))) return true;
    if (stats?.isDirectory()) return false;
    const ext = extname(path).toLowerCase();
    // A file of another kind; a path without stats yet: only by its extension (a folder rarely has one).
    return (stats?.isFile() || ext !== "") && !WATCHED.has(ext);
  };
}

/** Runs the server in a child process and restarts it when files of the project change. */
export function supervise(opts: DevOptions): Promise<number> {
  const projectDir = dirname(resolve(opts.config));
  const dataDir = opts.dataDir ? resolve(opts.dataDir) : resolve(projectDir, ".hangar");
  const args = [process.argv[1], "dev", "--no-reload", "--config", opts.config, "--host", opts.host];
  // Unset: the child reads N_JOBS_PER_WORKER from the environment it inherits.
  if (opts.nJobsPerWorker) args.push("--n-jobs-per-worker", opts.nJobsPerWorker);
  if (opts.port) args.push("--port", opts.port);
  if (opts.dataDir) args.push("--data-dir", opts.dataDir);

  const ignored = watchIgnored(projectDir, dataDir);

  let child: ChildProcess | undefined;
  let running = false;
  let restarting = false;
  let started = false;
  let timer: NodeJS.Timeout | undefined;
  return new Promise((done) => {
    const start = () => {
      running = true;
      child = spawn(process.execPath, [...process.execArgv, ...args], {
        stdio: ["inherit", "inherit", "inherit", "ipc"],
      });
      child.on("message", (m: { hangar?: string }) => {
        if (m?.hangar === "listening") started = true;
      });
      child.once("exit", (code) => {
        running = false;
        if (restarting) {
          restarting = false;
          start();
        } else if (!started) {
          // The first start failed (bad config, broken graph, port in use): nothing to reload, exit with it.
          void watcher.close();
          done(code || 1);
        } else if (code !== 0) {
          rootLogger().warn("hangar dev: server stopped; waiting for a change to restart");
        }
      });
    };
    const watcher = watch(projectDir, { ignored, ignoreInitial: true });
    watcher.on("all", (_event, path) => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        rootLogger().info(`hangar dev: ${relative(projectDir, path)} changed, restarting`);
        if (running) {
          restarting = true;
          child?.kill("SIGTERM");
        } else start();
      }, DEBOUNCE_MS);
    });
    watcher.on("error", (e) => rootLogger().warn(`hangar dev: watching ${projectDir}: ${String(e)}`));
    const stop = () => {
      clearTimeout(timer);
      void watcher.close();
      child?.kill("SIGTERM");
      done(0);
      setTimeout(() => process.exit(0), 2000).unref();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
    start();
  });
}
