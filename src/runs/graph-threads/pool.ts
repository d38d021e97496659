// Graph threads (API-thread side): a few worker threads, each with the project's graphs loaded, execute the runs'
// graphs, so a node that computes for seconds holds up neither the HTTP server (`/ok`, other streams) nor runs on
// other threads. A run goes to the thread with the fewest runs; its events come back as JSON text and are published
// as they are. A thread that crashes ends its runs in error and is replaced; a cancelled run whose thread does not
// answer within the grace period (stuck in synchronous code) has its thread ended and replaced, and the thread's
// other runs end in error, saying why.
//
// The threads load the graphs in the background: the server listens at once, and a run waits for a thread that is
// ready. A thread that cannot load the graphs (the API thread could: some module refuses to load twice, or on a
// thread) is left out; when none can, runs execute on the API thread (the fallback runner), said once in the log.
import { MessageChannel, Worker } from "node:worker_threads";
import pino from "pino";
import { isObject } from "../../lib/objects.js";
import type Database from "better-sqlite3";
import type { EncryptionSpec } from "../../storage/encryption/index.js";
import type { Logger } from "../../lib/logger.js";
import { RawJson } from "../../lib/serde.js";
import type { GraphEntry } from "../../lib/settings/project.js";
import type { StoreConfig } from "../../lib/settings/sections.js";
import type { GraphRun, GraphRunner, GraphRunResult, RunEmit } from "../graph-runner.js";
import type { FromHost, ToHost } from "./protocol.js";
import type { HostData } from "./host.js";
import { serveDatabase } from "./remote-sqlite.js";

export type GraphThreadBackend =
  | {
      kind: "sqlite";
      db: Database.Database;
      /** Opens the group commit's transaction (before a write). */
      begin: () => void;
      /** WriteTracker.touch. */
      touch: (threadId: string) => void;
    }
  | {
      kind: "postgres";
      url: string;
      schema: string;
      /** Connections of each of a thread's two pools. */
      poolSize: number;
      /** Checkpoints were written on a graph thread (the WAL flush of sync() covers them). */
      wrote: () => void;
    };

export interface GraphThreadOptions {
  threads: number;
  projectDir: string;
  graphs: GraphEntry[];
  store: StoreConfig | null | undefined;
  backend: GraphThreadBackend;
  /** Encryption at rest, as the server's storage applies it (each thread makes the same cipher). */
  encryption?: EncryptionSpec | null;
  log: Logger;
  /** How long a cancelled run's thread has to stop it before the thread is ended. */
  cancelGraceMs: number;
  /** Where runs execute when no thread could load the graphs (the API thread). */
  fallback: GraphRunner;
}

interface Pending {
  job: GraphRun;
  emit: RunEmit;
  resolve: (r: GraphRunResult) => void;
  /** Set when the run was cancelled and its thread ended for it. */
  cancelled?: boolean;
}

const EXT = import.meta.url.endsWith(".ts") ? ".ts" : ".js";

/** One graph thread. */
class Host {
  readonly worker: Worker;
  readonly runs = new Map<number, Pending>();
  ready: Promise<void>;
  /** Why the thread could not load the graphs (then it takes no run). */
  failed: string | undefined;
  /** The graphs loaded: a thread that ends before that is not replaced (its replacement would fail the same way). */
  loaded = false;
  private stopDb: (() => void) | undefined;
  ended = false;

  constructor(
    private opts: GraphThreadOptions,
    private onExit: (host: Host, why: string) => void,
  ) {
    const b = opts.backend;
    let backend: HostData["backend"];
    const transfer: import("node:worker_threads").TransferListItem[] = [];
    if (b.kind === "sqlite") {
      const { port1, port2 } = new MessageChannel();
      const flag = new SharedArrayBuffer(4);
      this.stopDb = serveDatabase(b.db, b.begin, b.touch, port1, flag);
      backend = { kind: "sqlite", port: port2, flag };
      transfer.push(port2);
    } else {
      backend = { kind: "postgres", url: b.url, schema: b.schema, poolSize: b.poolSize };
    }
    const data: HostData & { ext: string } = {
      projectDir: opts.projectDir,
      graphs: opts.graphs,
      store: opts.store,
      logLevel: opts.log.level,
      backend,
      encryption: opts.encryption ?? null,
      ext: EXT,
    };
    this.worker = new Worker(new URL("./boot.mjs", import.meta.url), {
      workerData: data,
      transferList: transfer,
    });
    this.ready = new Promise<void>((resolve, reject) => {
      const first = (m: FromHost) => {
        if (m.t === "ready") resolve();
        else if (m.t === "failed") reject(new Error(m.message));
        else return;
        this.worker.off("message", first);
      };
      this.worker.on("message", first);
      this.worker.once("error", reject);
      this.worker.once("exit", (code) =>
        reject(new Error(`the graph thread exited (code ${code}) before it was ready`)),
      );
    });
    this.ready.then(
      () => (this.loaded = true),
      (e: Error) => (this.failed = e.message),
    );
    this.worker.on("message", (m: FromHost) => this.onMessage(m));
    this.worker.on("error", (e) => this.end(`the graph thread crashed: ${e?.stack ?? e}`));
    this.worker.on("exit", (code) => this.end(`the graph thread exited (code ${code})`));
  }

  private onMessage(m: FromHost): void {
    switch (m.t) {
      case "event":
        this.runs.get(m.id)?.emit(m.event, new RawJson(m.json));
        if (m.wrote && this.opts.backend.kind === "postgres") this.opts.backend.wrote();
        return;
      case "wrote":
        if (this.opts.backend.kind === "postgres") this.opts.backend.wrote();
        return;
      case "done":
        this.settle(m.id, {
          outcome: m.outcome,
          state: m.state,
          ...(m.stateError ? { stateError: new Error(m.stateError) } : {}),
        });
        return;
      case "crashed":
        this.settle(m.id, {
          outcome: { status: "error", values: undefined, error: { error: "Error", message: m.message } },
        });
        return;
      case "log":
        relay(this.opts.log, m.line);
        return;
      default:
        return;
    }
  }

  /** Ends a run of this thread with its result (once). */
  private settle(id: number, result: GraphRunResult): void {
    const p = this.runs.get(id);
    if (!p) return;
    this.runs.delete(id);
    p.resolve(result);
  }

  post(m: ToHost): void {
    if (!this.ended) this.worker.postMessage(m);
  }

  /** Ends the thread's runs (unless already ended) and tells the pool. */
  end(why: string): void {
    if (this.ended) return;
    this.ended = true;
    this.stopDb?.();
    for (const p of this.runs.values()) {
      p.resolve({
        outcome: p.cancelled
          ? { status: "interrupted", values: undefined }
          : { status: "error", values: undefined, error: { error: "GraphThreadEnded", message: why } },
      });
    }
    this.runs.clear();
    this.onExit(this, why);
  }
}

/** A JSON log line of a graph thread, logged again by the API thread's logger at its level. */
function relay(log: Logger, line: string): void {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    log.info(line.trim());
    return;
  }
  const { level, msg, time: _time, pid: _pid, hostname: _host, ...rest } = entry;
  if (isObject(rest.err)) rest.err = revive(rest.err);
  const name = (pino.levels.labels[level as number] ?? "info") as "info";
  log[name](rest, typeof msg === "string" ? msg : "");
}

/**
 * An error the thread's logger already serialized ({type, message, stack, ...}) as an error again, of a class named
 * by its type, so that this logger's serializer writes it as the thread's did (not as an `Object`).
 */
function revive(err: Record<string, unknown>): Error {
  const type = typeof err.type === "string" && err.type ? err.type : "Error";
  const Named = { [type]: class extends Error {} }[type];
  const { type: _type, message, stack, ...fields } = err;
  const revived = Object.assign(new Named(typeof message === "string" ? message : ""), fields);
  if (typeof stack === "string") revived.stack = stack;
  return revived;
}

export class GraphThreadPool implements GraphRunner {
  readonly threaded = true;
  private hosts: Host[] = [];
  private nextId = 1;
  private closing = false;
  /** Settles once the threads of the start are ready or failed (for tests and the log). */
  readonly started: Promise<void>;

  /** Starts the threads, which load the graphs in the background (see the top of this file). */
  constructor(private opts: GraphThreadOptions) {
    const began = performance.now();
    for (let i = 0; i < opts.threads; i++) this.hosts.push(this.spawn());
    this.started = Promise.allSettled(this.hosts.map((h) => h.ready)).then((settled) => {
      const failed = settled.filter((s): s is PromiseRejectedResult => s.status === "rejected");
      if (this.closing) return;
      if (failed.length === settled.length) {
        opts.log.error(
          `no graph thread could load the graphs, so runs execute on the API thread (a node that computes for ` +
            `seconds holds up the API): ${(failed[0].reason as Error).message}`,
        );
      } else {
        for (const f of failed)
          opts.log.error(`a graph thread could not load the graphs: ${(f.reason as Error).message}`);
        const ms = Math.round(performance.now() - began);
        opts.log.info(`graph threads ready: ${settled.length - failed.length}, in ${ms} ms`);
      }
    });
  }

  private spawn(): Host {
    return new Host(this.opts, (host, why) => {
      const at = this.hosts.indexOf(host);
      if (at < 0 || this.closing) return;
      if (!host.loaded) {
        host.failed ??= why;
        return;
      }
      this.opts.log.warn(`graph thread ended: ${why}; starting another`);
      this.hosts[at] = this.spawn();
      this.hosts[at].ready.catch((e: Error) =>
        this.opts.log.error(`a replacement graph thread could not load the graphs: ${e.message}`),
      );
    });
  }

  /** The thread with the fewest runs among those not failed (started, or about to be); none when all failed. */
  private pick(): Host | undefined {
    let best: Host | undefined;
    for (const h of this.hosts) if (!h.failed && (!best || h.runs.size < best.runs.size)) best = h;
    return best;
  }

  async run(
    job: GraphRun,
    signal: AbortSignal,
    emit: RunEmit,
    log: Logger,
    started?: () => void,
  ): Promise<GraphRunResult> {
    // None when every thread failed to load the graphs: the fallback (the API thread).
    const host = this.pick();
    if (!host) return this.opts.fallback.run(job, signal, emit, log, started);
    try {
      await host.ready;
    } catch {
      // That thread could not load the graphs: another, or the fallback once the start has shown none can.
      await this.started;
      return this.run(job, signal, emit, log, started);
    }
    if (host.ended) return this.run(job, signal, emit, log, started);
    started?.();
    const id = this.nextId++;
    return new Promise<GraphRunResult>((resolve) => {
      const pending: Pending = { job, emit, resolve };
      host.runs.set(id, pending);
      const bindings = (log as unknown as { bindings?: () => Record<string, unknown> }).bindings?.() ?? {};
      host.post({ t: "run", id, job, bindings });
      const onAbort = () => {
        host.post({ t: "abort", id });
        // A thread busy in synchronous code reads no message: past the grace period it is ended for this run.
        const timer = setTimeout(() => {
          if (!host.runs.has(id) || host.ended) return;
          pending.cancelled = true;
          log.warn(
            `the run's graph thread did not stop it within ${this.opts.cancelGraceMs} ms of its cancellation; ending the thread`,
          );
          host.end(`ended to stop run ${job.runId}, which did not answer its cancellation`);
          void host.worker.terminate();
        }, this.opts.cancelGraceMs);
        timer.unref();
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.hosts.map(async (h) => {
        h.post({ t: "close" });
        await h.worker.terminate().catch(() => {});
        h.end("the server is stopping");
      }),
    );
  }
}
