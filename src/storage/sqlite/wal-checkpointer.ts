// SQLite's WAL checkpoints off the API's event loop. By default SQLite checkpoints on the commit that takes the WAL
// past 1000 pages: that commit, on the thread serving requests, copies megabytes into the database file and fsyncs
// it. Here the server's connection never checkpoints (wal_autocheckpoint = 0); a worker thread with a connection
// of its own runs PASSIVE checkpoints (they never block the writer) every `intervalMs`. Durability is SQLite's as
// before: the WAL holds every commit until a checkpoint has copied (and, unless synchronous is OFF, fsynced) it, and
// the next write after a complete checkpoint starts the WAL over, so it stays bounded.
import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import type Database from "better-sqlite3";

/** The worker's code (plain JavaScript, evaluated: nothing to compile, whether Hangar runs from src/ or dist/). */
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.file, { fileMustExist: true });
db.pragma("busy_timeout = 1000");
const checkpoint = () => {
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    if (r && r.log > 0) parentPort.postMessage({ t: "checkpointed", frames: r.checkpointed, log: r.log });
  } catch (e) {
    parentPort.postMessage({ t: "failed", message: String(e && e.message || e) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on("message", (m) => {
  if (m !== "close") return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface WalCheckpointer {
  /** Stops the thread after a last checkpoint (the server's connection then closes as usual). */
  close(): Promise<void>;
}

/**
 * Turns off the connection's own checkpoints and starts the thread that takes them over. `onFailure` hears a
 * checkpoint that failed (the WAL then grows until one succeeds: the next tries again).
 */
export function startWalCheckpointer(
  db: Database.Database,
  opts: { intervalMs?: number; onFailure?: (message: string) => void } = {},
): WalCheckpointer {
  db.pragma("wal_autocheckpoint = 0");
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: {
      module: createRequire(import.meta.url).resolve("better-sqlite3"),
      file: db.name,
      intervalMs: opts.intervalMs ?? 1000,
    },
  });
  worker.unref();
  worker.on("message", (m: { t: string; message?: string }) => {
    if (m.t === "failed") opts.onFailure?.(m.message ?? "");
  });
  // A thread that cannot run (its module failed to load) leaves the connection checkpointing by itself again.
  worker.on("error", (e) => {
    db.pragma("wal_autocheckpoint = 1000");
    opts.onFailure?.(e.message);
  });
  let exited = false;
  worker.once("exit", () => (exited = true));
  let closed: Promise<void> | undefined;
  return {
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        if (exited) return resolve();
        worker.once("exit", () => resolve());
        // Kept alive until it has closed: a process that is otherwise done must not end with this still pending.
        worker.ref();
        worker.postMessage("close");
      })),
  };
}
