// The embedded database seen from a graph thread: a stand-in for better-sqlite3's Database whose statements run on
// the API thread's one connection (one writer; every write joins its group commit, so the sync setting holds as
// for runs on the API thread). A call blocks the graph thread (Atomics.wait on a shared flag) until the API thread
// has run the statement and posted the answer, which the graph thread then takes from its port synchronously
// (receiveMessageOnPort): LangGraph's SQLite saver and Hangar's store, written for a synchronous driver, run
// unchanged on it. The API thread never waits for a graph thread.
import { receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import type Database from "better-sqlite3";
import { statementCache } from "../../storage/sqlite/rows.js";

type Mode = "run" | "get" | "all";

/** A statement, or several in one transaction (the statements of a `transaction()` function). */
export type SqlRequest =
  | { kind: "one"; sql: string; mode: Mode; params: unknown[] }
  | { kind: "batch"; steps: { sql: string; params: unknown[] }[] }
  | { kind: "exec"; sql: string }
  /** The thread's checkpoints are about to change (WriteTracker.touch); not answered. */
  | { kind: "touch"; threadId: string };

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

  private call(req: SqlRequest): unknown {
    this.port.postMessage(req);
    Atomics.wait(this.flag, 0, 0);
    Atomics.store(this.flag, 0, 0);
    const answer = receiveMessageOnPort(this.port)?.message as SqlAnswer | undefined;
    if (!answer) throw new Error("the API thread did not answer a database call");
    if (!answer.ok) throw Object.assign(new Error(answer.error.message), { code: answer.error.code });
    return answer.value;
  }

  prepare(sql: string) {
    const one = (mode: Mode, params: unknown[]) => this.call({ kind: "one", sql, mode, params });
    return {
      run: (...params: unknown[]) => {
        if (this.batch) {
          this.batch.push({ sql, params });
          return { changes: 0, lastInsertRowid: 0 };
        }
        return one("run", params) as Database.RunResult;
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

  /** Marks a thread's checkpoints changed on the API thread, ahead of the write that follows on the same port. */
  touch(threadId: string | undefined): void {
    if (typeof threadId === "string") this.port.postMessage({ kind: "touch", threadId } satisfies SqlRequest);
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
      if (steps.length) this.call({ kind: "batch", steps });
      return out;
    };
  }
}

/**
 * API-thread side: answers one graph thread's calls on `db`. `begin` opens the group commit's transaction before a
 * write; `touch` is WriteTracker.touch. Returns a function that stops answering.
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
  const answer = (req: Exclude<SqlRequest, { kind: "touch" }>): unknown => {
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
  const onMessage = (req: SqlRequest) => {
    if (req.kind === "touch") return touch(req.threadId);
    let reply: SqlAnswer;
    try {
      reply = { ok: true, value: answer(req) };
    } catch (e) {
      const err = e as Error & { code?: string };
      reply = { ok: false, error: { message: err.message, code: err.code } };
    }
    port.postMessage(reply);
    Atomics.store(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  port.on("message", onMessage);
  return () => {
    port.off("message", onMessage);
    port.close();
  };
}
