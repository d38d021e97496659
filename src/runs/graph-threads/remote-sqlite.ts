// The embedded database seen from a graph thread: a stand-in for better-sqlite3's Database whose statements run on
// the API thread's one connection (one writer; every write joins its group commit, so the sync setting holds as
// for runs on the API thread). A read blocks the graph thread (Atomics.wait on a shared flag) until the API thread
// has run the statement and posted the answer, which the graph thread then takes from its port synchronously
// (receiveMessageOnPort): LangGraph's SQLite saver and Hangar's store, written for a synchronous driver, run
// unchanged on it. The API thread never waits for a graph thread.
//
// Writes do not wait: a transaction's statements, or a statement run with `run()`, are posted and the graph goes on
// (a checkpoint's put and its writes cost no round trip). The port keeps their order, so a later read sees them. A
// write's result (`changes`, `lastInsertRowid`) is fetched when it is read; a write that failed makes the next call
// that waits throw its error (at the latest the flush at a run's end), as the write itself would have.
import { receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import type Database from "better-sqlite3";
import { statementCache } from "../../storage/sqlite/rows.js";

type Mode = "run" | "get" | "all";

/** A statement, or several in one transaction (the statements of a `transaction()` function). */
export type SqlRequest =
  /** With an id: a write not waited for, its result kept under the id until asked for (`result`). */
  | { kind: "one"; sql: string; mode: Mode; params: unknown[]; id?: number }
  /** Not answered (not waited for). */
  | { kind: "batch"; steps: { sql: string; params: unknown[] }[] }
  | { kind: "exec"; sql: string }
  /** The result of the write posted with this id. */
  | { kind: "result"; id: number }
  /** Answered once every write posted before it ran (or with the error of one that failed). */
  | { kind: "flush" };

/** A request as posted: `touch` names threads whose checkpoints change (WriteTracker.touch, run before it). */
type Posted = SqlRequest & { seq?: number; touch?: string[] };

/** Results of writes not waited for that the API thread keeps until asked for (the oldest are dropped). */
const KEPT_RESULTS = 256;

export type SqlAnswer =
  { ok: true; value: unknown } | { ok: false; error: { message: string; code?: string } };

/** better-sqlite3 wants Buffers for blobs; what crossed threads arrives as Uint8Array. */
function toBuffers(params: unknown[]): unknown[] {
  return params.map((p) =>
    p instanceof Uint8Array && !Buffer.isBuffer(p) ? Buffer.from(p.buffer, p.byteOffset, p.byteLength) : p,
  );
}

function rowBuffers(row: unknown): unknown {
  if (!row || typeof row !== "object") return row;
  for (const [k, v] of Object.entries(row)) {
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) {
      (row as Record<string, unknown>)[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
    }
  }
  return row;
}

/** Graph-thread side: a Database with prepare (run, get, all), exec, transaction and pragma. */
export class RemoteDatabase {
  private flag: Int32Array;
  /** The statements of the transaction function being run, or undefined outside one. */
  private batch: { sql: string; params: unknown[] }[] | undefined;
  readonly open = true;
  readonly inTransaction = false;
  readonly name = "remote";

  constructor(
    private port: MessagePort,
    flag: SharedArrayBuffer,
  ) {
    this.flag = new Int32Array(flag);
  }

  /** Writes posted since the last call that waited. */
  private unsynced = 0;
  /** Id of the last write posted with `run()`. */
  private lastId = 0;

  /** Threads touched since the last request posted (see touch). */
  private touched: string[] = [];

  /** Posts a request, with the threads touched since the last one. */
  private post(req: Posted): void {
    if (this.touched.length) {
      req.touch = this.touched;
      this.touched = [];
    }
    this.port.postMessage(req);
  }

  /** Posts a write without waiting for it. */
  private send(req: SqlRequest): void {
    this.post(req);
    this.unsynced++;
  }

  /** Waits until every write posted so far has run; throws the error of one that failed. */
  flush(): void {
    if (this.unsynced > 0) this.call({ kind: "flush" });
  }

  /** Number of the last call that waited: its answer carries it, so no other answer is ever taken for it. */
  private seq = 0;

  private call(req: SqlRequest): unknown {
    const seq = ++this.seq;
    this.post({ ...req, seq });
    this.unsynced = 0;
    let answer: (SqlAnswer & { seq?: number }) | undefined;
    while (!answer) {
      Atomics.wait(this.flag, 0, 0);
      Atomics.store(this.flag, 0, 0);
      // An answer to an earlier call (one that threw before reading it) is passed over.
      let m: { message: unknown } | undefined;
      while (!answer && (m = receiveMessageOnPort(this.port))) {
        const a = m.message as SqlAnswer & { seq?: number };
        if (a.seq === seq) answer = a;
      }
    }
    if (!answer.ok) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
    return answer.value;
  }

  prepare(sql: string) {
    const one = (mode: "get" | "all", params: unknown[]) => this.call({ kind: "one", sql, mode, params });
    return {
      run: (...params: unknown[]): Database.RunResult => {
        if (this.batch) {
          this.batch.push({ sql, params });
          return { changes: 0, lastInsertRowid: 0 };
        }
        const id = ++this.lastId;
        this.send({ kind: "one", sql, mode: "run", params, id });
        let result: Database.RunResult | undefined;
        const fetch = () => (result ??= this.call({ kind: "result", id }) as Database.RunResult);
        return {
          get changes() {
            return fetch().changes;
          },
          get lastInsertRowid() {
            return fetch().lastInsertRowid;
          },
        };
      },
      get: (...params: unknown[]) => {
        if (this.batch) throw new Error("a read inside a transaction() is not supported on a graph thread");
        return rowBuffers(one("get", params));
      },
      all: (...params: unknown[]) => {
        if (this.batch) throw new Error("a read inside a transaction() is not supported on a graph thread");
        return (one("all", params) as unknown[]).map(rowBuffers);
      },
    };
  }

  /**
   * Marks a thread's checkpoints changed on the API thread, just before the next request posted runs there (the
   * thread's write): its id goes with that request's message, not in a message of its own.
   */
  touch(threadId: string | undefined): void {
    if (typeof threadId === "string") this.touched.push(threadId);
  }

  exec(sql: string): this {
    this.call({ kind: "exec", sql });
    return this;
  }

  /** Schema set-up statements run on the API thread's connection already: nothing to do here. */
  pragma(): unknown {
    return undefined;
  }

  /**
   * As better-sqlite3's: the function's writes in one transaction. They are collected, then run together on the
   * API thread (the savers' transactions only write).
   */
  transaction<A extends unknown[], R>(fn: (...args: A) => R): (...args: A) => R {
    return (...args: A) => {
      if (this.batch) return fn(...args);
      this.batch = [];
      let out: R;
      let steps: { sql: string; params: unknown[] }[];
      try {
        out = fn(...args);
      } finally {
        steps = this.batch;
        this.batch = undefined;
      }
      if (steps.length) this.send({ kind: "batch", steps });
      return out;
    };
  }
}

/**
 * API-thread side: answers one graph thread's calls on `db`. `begin` opens the group commit's transaction before a
 * write; `touch` is WriteTracker.touch. Returns a function that stops answering, once it ran what was posted.
 */
export function serveDatabase(
  db: Database.Database,
  begin: () => void,
  touch: (threadId: string) => void,
  port: MessagePort,
  flag: SharedArrayBuffer,
): () => void {
  const signal = new Int32Array(flag);
  const prepared = statementCache(db);
  const batch = db.transaction((steps: { sql: string; params: unknown[] }[]) => {
    for (const s of steps) prepared(s.sql).run(...toBuffers(s.params));
  });
  // The error of a write that was not waited for, given to the next call that waits; the results of such writes.
  let failed: { message: string; code?: string } | undefined;
  const results = new Map<number, unknown>();
  const answer = (req: SqlRequest): unknown => {
    if (req.kind === "flush") return null;
    if (req.kind === "result") {
      if (!results.has(req.id)) throw new Error("the result of that write is no longer kept");
      const r = results.get(req.id);
      results.delete(req.id);
      return r;
    }
    if (req.kind === "exec") {
      begin();
      db.exec(req.sql);
      return null;
    }
    if (req.kind === "batch") {
      begin();
      batch(req.steps);
      return null;
    }
    const stmt = prepared(req.sql);
    const params = toBuffers(req.params);
    if (req.mode === "run" || !stmt.reader) {
      begin();
      const r = stmt.run(...params);
      return { changes: r.changes, lastInsertRowid: Number(r.lastInsertRowid) };
    }
    return req.mode === "get" ? stmt.get(...params) : stmt.all(...params);
  };
  const onMessage = (req: Posted) => {
    if (req.touch) for (const id of req.touch) touch(id);
    const waited = req.kind !== "batch" && !(req.kind === "one" && req.id !== undefined);
    let reply: SqlAnswer;
    if (waited && failed) {
      reply = { ok: false, error: failed };
      failed = undefined;
    } else {
      try {
        reply = { ok: true, value: answer(req) };
      } catch (e) {
        const err = e as Error & { code?: string };
        reply = { ok: false, error: { message: err.message, code: err.code } };
      }
    }
    if (!waited) {
      if (!reply.ok) failed ??= reply.error;
      else if (req.kind === "one" && req.id !== undefined) {
        results.set(req.id, reply.value);
        if (results.size > KEPT_RESULTS) results.delete(results.keys().next().value!);
      }
      return;
    }
    port.postMessage({ ...reply, seq: req.seq });
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  port.on("message", onMessage);
  return () => {
    port.off("message", onMessage);
    // What the thread posted before it ended runs now, in order, before its runs' ends are recorded (writes it did
    // not wait for must not land after a later run of the same thread started).
    for (let m = receiveMessageOnPort(port); m; m = receiveMessageOnPort(port))
      onMessage(m.message as Posted);
    port.close();
  };
}
