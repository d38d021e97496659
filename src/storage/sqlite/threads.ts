// SQLite thread store: thread rows, search with JSON containment, and atomic copy with checkpoints.
import type Database from "better-sqlite3";
import type {
  AttemptFence,
  Json,
  Thread,
  ThreadInput,
  ThreadSearch,
  ThreadStateUpdate,
  ThreadStatus,
  ThreadStore,
} from "../types.js";
import { containmentSql } from "./json-filter.js";
import { now, orderBy, statementCache, toThread } from "./rows.js";
import type { WriteTracker } from "./write-tracker.js";

const SORTABLE = ["thread_id", "status", "created_at", "updated_at", "state_updated_at"] as const;

export class SqliteThreads implements ThreadStore {
  private stmt: ReturnType<typeof statementCache>;

  constructor(
    private db: Database.Database,
    private begin: () => void,
    private tracker: WriteTracker,
  ) {
    this.stmt = statementCache(db);
  }

  async create(input: ThreadInput): Promise<Thread | null> {
    this.begin();
    const ts = now();
    const res = this.stmt(
      `INSERT INTO threads (thread_id, created_at, updated_at, state_updated_at, metadata, status, config, "values", interrupts)
       VALUES (?, ?, ?, ?, ?, 'idle', ?, NULL, '{}') ON CONFLICT (thread_id) DO NOTHING`,
    ).run(input.thread_id, ts, ts, ts, JSON.stringify(input.metadata), JSON.stringify(input.config ?? {}));
    if (res.changes === 0) return null;
    if (input.ttl) await this.setTtl(input.thread_id, input.ttl);
    return {
      thread_id: input.thread_id,
      created_at: ts,
      updated_at: ts,
      state_updated_at: ts,
      metadata: input.metadata,
      status: "idle",
      config: input.config ?? {},
      values: null,
      interrupts: {},
    };
  }

  async get(id: string): Promise<Thread | null> {
    const r = this.stmt("SELECT * FROM threads WHERE thread_id = ?").get(id);
    return r ? toThread(r) : null;
  }

  async patchMetadata(id: string, metadata: Json): Promise<Thread | null> {
    this.begin();
    const r = this.stmt(
      "UPDATE threads SET metadata = json_merge_top(metadata, ?), updated_at = ? WHERE thread_id = ? RETURNING *",
    ).get(JSON.stringify(metadata), now(), id);
    return r ? toThread(r) : null;
  }

  async delete(id: string): Promise<boolean> {
    this.begin();
    this.tracker.touch(id);
    return this.db.transaction(() => {
      const n = this.stmt("DELETE FROM threads WHERE thread_id = ?").run(id).changes;
      this.stmt("DELETE FROM runs WHERE thread_id = ?").run(id);
      this.stmt("DELETE FROM checkpoints WHERE thread_id = ?").run(id);
      this.stmt("DELETE FROM writes WHERE thread_id = ?").run(id);
      return n > 0;
    })();
  }

  private where(q: Omit<ThreadSearch, "limit" | "offset">, params: unknown[]): string {
    const conds: string[] = [];
    if (q.ids?.length) {
      conds.push(`thread_id IN (${q.ids.map(() => "?").join(", ")})`);
      params.push(...q.ids);
    }
    if (q.status) {
      conds.push("status = ?");
      params.push(q.status);
    }
    if (q.metadata && Object.keys(q.metadata).length)
      conds.push(...containmentSql("metadata", q.metadata, params));
    if (q.authMetadata && Object.keys(q.authMetadata).length) {
      conds.push(...containmentSql("metadata", q.authMetadata, params));
    }
    if (q.values && Object.keys(q.values).length) conds.push(...containmentSql(`"values"`, q.values, params));
    return conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  }

  async search(q: ThreadSearch): Promise<Thread[]> {
    const params: unknown[] = [];
    const sql = `SELECT * FROM threads ${this.where(q, params)} ${orderBy(SORTABLE, q.sort_by, q.sort_order, "created_at")} LIMIT ? OFFSET ?`;
    return this.stmt(sql)
      .all(...params, q.limit, q.offset)
      .map(toThread);
  }

  async count(q: Omit<ThreadSearch, "limit" | "offset">): Promise<number> {
    const params: unknown[] = [];
    const r = this.stmt(`SELECT COUNT(*) AS n FROM threads ${this.where(q, params)}`).get(...params) as {
      n: number;
    };
    return r.n;
  }

  async copy(sourceId: string, newId: string, metadata: Json): Promise<Thread | null> {
    this.begin();
    this.tracker.touch(newId);
    return this.db.transaction(() => {
      const ts = now();
      const row = this.stmt(
        `INSERT INTO threads (thread_id, created_at, updated_at, state_updated_at, metadata, status, config, "values", interrupts, error)
         SELECT ?, ?, ?, ?, json_merge_top(metadata, ?), 'idle', '{}', NULL, '{}', NULL FROM threads WHERE thread_id = ?
         RETURNING *`,
      ).get(newId, ts, ts, ts, JSON.stringify(metadata), sourceId);
      if (!row) return null;
      // Checkpoint metadata records the thread id; the copy's checkpoints name the copy.
      this.stmt(
        `INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT ?, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
           CASE WHEN type = 'json' AND json_valid(CAST(metadata AS TEXT)) AND json_type(CAST(metadata AS TEXT), '$.thread_id') IS NOT NULL
                THEN CAST(json_set(CAST(metadata AS TEXT), '$.thread_id', ?) AS BLOB) ELSE metadata END
         FROM checkpoints WHERE thread_id = ?`,
      ).run(newId, newId, sourceId);
      this.stmt(
        `INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value)
         SELECT ?, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value FROM writes WHERE thread_id = ?`,
      ).run(newId, sourceId);
      return toThread(row);
    })();
  }

  async setTtl(id: string, ttl: { ttl: number; strategy: "delete" | "keep_latest" } | null): Promise<void> {
    this.begin();
    this.stmt("UPDATE threads SET ttl_minutes = ?, ttl_strategy = ?, expires_at = ? WHERE thread_id = ?").run(
      ttl?.ttl ?? null,
      ttl?.strategy ?? null,
      ttl ? new Date(Date.now() + ttl.ttl * 60_000).toISOString() : null,
      id,
    );
  }

  async runStarting(id: string, metadata: Json): Promise<{ mark: unknown } | null> {
    const r = this.stmt("SELECT ttl_minutes FROM threads WHERE thread_id = ?").get(id) as
      { ttl_minutes: number | null } | undefined;
    if (!r) return null;
    const mark = await this.checkpointMark(id);
    this.begin();
    const ts = now();
    const expires = r.ttl_minutes ? new Date(Date.now() + r.ttl_minutes * 60_000).toISOString() : null;
    this.stmt(
      `UPDATE threads SET status = 'busy', metadata = json_merge_top(metadata, ?), updated_at = ?,
         expires_at = COALESCE(?, expires_at) WHERE thread_id = ?`,
    ).run(JSON.stringify(metadata), ts, expires, id);
    return { mark };
  }

  async expired(
    at: string,
    limit: number,
  ): Promise<{ thread_id: string; strategy: "delete" | "keep_latest" }[]> {
    return (
      this.stmt(
        "SELECT thread_id, ttl_strategy FROM threads WHERE expires_at IS NOT NULL AND expires_at <= ? AND status <> 'busy' ORDER BY expires_at LIMIT ?",
      ).all(at, limit) as { thread_id: string; ttl_strategy: string | null }[]
    ).map((r) => ({
      thread_id: r.thread_id,
      strategy: r.ttl_strategy === "keep_latest" ? "keep_latest" : "delete",
    }));
  }

  async keepLatest(id: string): Promise<void> {
    this.begin();
    this.tracker.touch(id);
    this.db.transaction(() => {
      this.stmt(
        `DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id NOT IN
           (SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? GROUP BY checkpoint_ns)`,
      ).run(id, id);
      this.stmt(
        `DELETE FROM writes WHERE thread_id = ? AND checkpoint_id NOT IN
           (SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?)`,
      ).run(id, id);
      // With no older checkpoint left, expiry restarts from now (keep_latest keeps the thread).
      this.stmt(
        "UPDATE threads SET expires_at = NULL WHERE thread_id = ? AND ttl_strategy = 'keep_latest'",
      ).run(id);
    })();
  }

  async storageStats(id: string): Promise<Json> {
    const cp = this.stmt(
      "SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) AS b FROM checkpoints WHERE thread_id = ?",
    ).get(id) as { n: number; b: number };
    // Channel values live inside the checkpoint JSON: measure them there (and count them once).
    const channels = this.stmt(
      `SELECT ch.key AS channel, COUNT(*) AS versions, SUM(LENGTH(ch.value)) AS bytes
         FROM checkpoints c, json_each(json_extract(CAST(c.checkpoint AS TEXT), '$.channel_values')) ch
        WHERE c.thread_id = ? AND c.type = 'json' AND json_valid(CAST(c.checkpoint AS TEXT))
        GROUP BY ch.key ORDER BY ch.key`,
    ).all(id) as { channel: string; versions: number; bytes: number }[];
    const w = this.stmt(
      "SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(value)), 0) AS b FROM writes WHERE thread_id = ?",
    ).get(id) as { n: number; b: number };
    const channelBytes = channels.reduce((a, c) => a + c.bytes, 0);
    const checkpointBytes = Math.max(0, cp.b - channelBytes);
    return {
      thread_id: id,
      total_bytes: checkpointBytes + channelBytes + w.b,
      checkpoints: { count: cp.n, bytes: checkpointBytes },
      channel_values: {
        count: channels.reduce((a, c) => a + c.versions, 0),
        bytes: channelBytes,
        by_channel: Object.fromEntries(
          channels.map((c) => [c.channel, { versions: c.versions, bytes: c.bytes }]),
        ),
      },
      pending_writes: { count: w.n, bytes: w.b },
    };
  }

  async checkpointMark(threadId: string): Promise<unknown> {
    // Rowids only grow while one process writes: everything of this thread above them came later.
    const c = this.stmt("SELECT COALESCE(MAX(rowid), 0) AS m FROM checkpoints").get() as { m: number };
    const w = this.stmt("SELECT COALESCE(MAX(rowid), 0) AS m FROM writes").get() as { m: number };
    void threadId;
    return { checkpoints: c.m, writes: w.m };
  }

  async rollbackCheckpoints(threadId: string, mark: unknown): Promise<void> {
    const m = mark as { checkpoints: number; writes: number };
    this.begin();
    this.tracker.touch(threadId);
    this.stmt("DELETE FROM checkpoints WHERE thread_id = ? AND rowid > ?").run(threadId, m.checkpoints);
    this.stmt("DELETE FROM writes WHERE thread_id = ? AND rowid > ?").run(threadId, m.writes);
  }

  async setState(id: string, u: ThreadStateUpdate, fence?: AttemptFence): Promise<ThreadStatus | null> {
    this.begin();
    const sets: string[] = ["updated_at = ?"];
    const ts = now();
    const params: unknown[] = [ts];
    if (u.status !== undefined) {
      sets.push(
        u.busyWhilePending
          ? `status = CASE WHEN EXISTS (SELECT 1 FROM runs WHERE runs.thread_id = threads.thread_id
               AND runs.status = 'pending') THEN 'busy' ELSE ? END`
          : "status = ?",
      );
      params.push(u.status);
    }
    if (u.values !== undefined) {
      sets.push(`"values" = ?`, "state_updated_at = ?");
      params.push(u.values === null ? null : JSON.stringify(u.values), ts);
    }
    if (u.interrupts !== undefined) {
      sets.push("interrupts = ?");
      params.push(JSON.stringify(u.interrupts));
    }
    if (u.error !== undefined) {
      sets.push("error = ?");
      params.push(u.error === null ? null : JSON.stringify(u.error));
    }
    if (u.metadata !== undefined) {
      sets.push("metadata = json_merge_top(metadata, ?)");
      params.push(JSON.stringify(u.metadata));
    }
    if (u.config !== undefined) {
      sets.push("config = ?");
      params.push(JSON.stringify(u.config));
    }
    const fenced = fence ? " AND EXISTS (SELECT 1 FROM runs WHERE run_id = ? AND attempt = ?)" : "";
    const row = this.stmt(
      `UPDATE threads SET ${sets.join(", ")} WHERE thread_id = ?${fenced} RETURNING status`,
    ).get(...params, id, ...(fence ? [fence.runId, fence.attempt] : [])) as
      { status: ThreadStatus } | undefined;
    if (fence?.runStatus) {
      this.stmt("UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ? AND attempt = ?").run(
        fence.runStatus,
        ts,
        fence.runId,
        fence.attempt,
      );
    }
    return row?.status ?? null;
  }
}
