// PostgreSQL thread store: thread rows, search with JSONB containment, and the operations on a thread's
// checkpoints (in the tables of @langchain/langgraph-checkpoint-postgres, where thread_id is TEXT).
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
import { isUuid, jsonb, requireUuid, type Db, type Queryable } from "./db.js";
import { containment, now, orderBy, toThread } from "./rows.js";

const SORTABLE = {
  thread_id: {},
  status: { text: true },
  created_at: {},
  updated_at: {},
  state_updated_at: {},
};

type Ttl = { ttl: number; strategy: "delete" | "keep_latest" } | null | undefined;

const expiresAt = (ttl: Ttl): string | null =>
  ttl ? new Date(Date.now() + ttl.ttl * 60_000).toISOString() : null;

/** Where a thread's checkpoint history stood: its newest checkpoint and its last pending write. */
interface Mark {
  checkpoint_id: string | null;
  write_seq: string;
}

/** The process's group commit (WalFlusher): a synchronous commit that wrote covers the writes counted before it. */
export interface DurableCommits {
  /** How many asynchronous commits were counted so far. */
  counted(): number;
  /** A synchronous commit that wrote, begun after `upTo` commits were counted, has flushed them. */
  covered(upTo: number): void;
}

export class PostgresThreads implements ThreadStore {
  constructor(
    private db: Db,
    private durable?: DurableCommits,
  ) {}

  private get t() {
    return this.db.t;
  }

  async create(input: ThreadInput): Promise<Thread | null> {
    requireUuid("thread_id", input.thread_id);
    const ts = now();
    const res = await this.db.query(
      `INSERT INTO ${this.t.threads} (thread_id, created_at, updated_at, state_updated_at, metadata, status, config,
         "values", interrupts, ttl_minutes, ttl_strategy, expires_at)
       VALUES ($1, $2, $2, $2, $3::jsonb, 'idle', $4::jsonb, NULL, '{}', $5, $6, $7)
       ON CONFLICT (thread_id) DO NOTHING`,
      [
        input.thread_id,
        ts,
        jsonb(input.metadata ?? {}),
        jsonb(input.config ?? {}),
        input.ttl?.ttl ?? null,
        input.ttl?.strategy ?? null,
        expiresAt(input.ttl),
      ],
    );
    if (res.rowCount === 0) return null;
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
    if (!isUuid(id)) return null;
    const [r] = await this.db.rows(`SELECT * FROM ${this.t.threads} WHERE thread_id = $1`, [id]);
    return r ? toThread(r) : null;
  }

  async patchMetadata(id: string, metadata: Json): Promise<Thread | null> {
    if (!isUuid(id)) return null;
    const [r] = await this.db.rows(
      `UPDATE ${this.t.threads} SET metadata = ${this.mergeMetadata("$1")}, updated_at = $2
       WHERE thread_id = $3 RETURNING *`,
      [jsonb(metadata), now(), id],
    );
    return r ? toThread(r) : null;
  }

  private async deleteCheckpoints(q: Queryable, id: string): Promise<void> {
    for (const table of [this.t.checkpoints, this.t.checkpoint_blobs, this.t.checkpoint_writes]) {
      await q.query(`DELETE FROM ${table} WHERE thread_id = $1`, [id]);
    }
  }

  async delete(id: string): Promise<boolean> {
    return this.db.tx(async (q) => {
      await this.deleteCheckpoints(q, id);
      if (!isUuid(id)) return false;
      const res = await q.query(`DELETE FROM ${this.t.threads} WHERE thread_id = $1`, [id]);
      await q.query(`DELETE FROM ${this.t.runs} WHERE thread_id = $1`, [id]);
      return (res.rowCount ?? 0) > 0;
    });
  }

  private where(q: Omit<ThreadSearch, "limit" | "offset">, params: unknown[]): string {
    const conds: string[] = [];
    if (q.ids?.length) {
      params.push(q.ids.filter(isUuid));
      conds.push(`thread_id = ANY($${params.length}::uuid[])`);
    }
    if (q.status) {
      params.push(q.status);
      conds.push(`status = $${params.length}`);
    }
    conds.push(...containment("metadata", q.metadata, params));
    conds.push(...containment("metadata", q.authMetadata, params));
    conds.push(...containment(`"values"`, q.values, params));
    return conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  }

  async search(q: ThreadSearch): Promise<Thread[]> {
    const params: unknown[] = [];
    const where = this.where(q, params);
    params.push(q.limit, q.offset);
    const rows = await this.db.rows(
      `SELECT * FROM ${this.t.threads} ${where} ${orderBy(SORTABLE, q.sort_by, q.sort_order, "created_at")}
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toThread);
  }

  async count(q: Omit<ThreadSearch, "limit" | "offset">): Promise<number> {
    const params: unknown[] = [];
    const [r] = await this.db.rows<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM ${this.t.threads} ${this.where(q, params)}`,
      params,
    );
    return r.n;
  }

  async copy(sourceId: string, newId: string, metadata: Json): Promise<Thread | null> {
    if (!isUuid(sourceId)) return null;
    requireUuid("thread_id", newId);
    const t = this.t;
    return this.db.tx(async (q) => {
      const ts = now();
      const { rows } = await q.query(
        `INSERT INTO ${t.threads} (thread_id, created_at, updated_at, state_updated_at, metadata, status, config,
           "values", interrupts, error)
         SELECT $1, $2, $2, $2, metadata || $3::jsonb, 'idle', '{}'::jsonb, NULL, '{}'::jsonb, NULL
         FROM ${t.threads} WHERE thread_id = $4
         RETURNING *`,
        [newId, ts, jsonb(metadata ?? {}), sourceId],
      );
      if (!rows.length) return null;
      // Checkpoint metadata records the thread id; the copy's checkpoints name the copy.
      await q.query(
        `INSERT INTO ${t.checkpoints}
           (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata)
         SELECT $1, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint,
           CASE WHEN jsonb_typeof(metadata) = 'object' AND metadata ? 'thread_id'
                THEN jsonb_set(metadata, '{thread_id}', to_jsonb($1::text)) ELSE metadata END
         FROM ${t.checkpoints} WHERE thread_id = $2`,
        [newId, sourceId],
      );
      await q.query(
        `INSERT INTO ${t.checkpoint_blobs} (thread_id, checkpoint_ns, channel, version, type, blob)
         SELECT $1, checkpoint_ns, channel, version, type, blob FROM ${t.checkpoint_blobs} WHERE thread_id = $2`,
        [newId, sourceId],
      );
      await q.query(
        `INSERT INTO ${t.checkpoint_writes}
           (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
         SELECT $1, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob
         FROM ${t.checkpoint_writes} WHERE thread_id = $2 ORDER BY hangar_seq`,
        [newId, sourceId],
      );
      return toThread(rows[0]);
    });
  }

  async setTtl(id: string, ttl: Ttl): Promise<void> {
    if (!isUuid(id)) return;
    await this.db.query(
      `UPDATE ${this.t.threads} SET ttl_minutes = $1, ttl_strategy = $2, expires_at = $3 WHERE thread_id = $4`,
      [ttl?.ttl ?? null, ttl?.strategy ?? null, expiresAt(ttl), id],
    );
  }

  /**
   * SQL merging the JSON object in parameter `param` into the thread's metadata: a top-level merge, as the official
   * server does (each given key's value, null or an object included, replaces the stored one; nothing is deleted).
   */
  private mergeMetadata(param: string): string {
    return `metadata || ${param}::jsonb`;
  }

  async runStarting(id: string, metadata: Json): Promise<{ mark: unknown } | null> {
    if (!isUuid(id)) return null;
    // One statement: the thread busy, its TTL restarted, and the mark (read before the run writes anything).
    const [r] = await this.db.rows<Mark>(
      `UPDATE ${this.t.threads} SET status = 'busy', updated_at = $1,
         metadata = ${this.mergeMetadata("$2")},
         expires_at = CASE WHEN ttl_minutes IS NOT NULL AND ttl_minutes <> 0
           THEN $1::timestamptz + ttl_minutes * interval '1 minute' ELSE expires_at END
       WHERE thread_id = $3::uuid
       RETURNING ${this.markColumns("$3::text")}`,
      [now(), jsonb(metadata), id],
    );
    return r ? { mark: { checkpoint_id: r.checkpoint_id, write_seq: r.write_seq } satisfies Mark } : null;
  }

  async expired(
    at: string,
    limit: number,
  ): Promise<{ thread_id: string; strategy: "delete" | "keep_latest" }[]> {
    const rows = await this.db.rows<{ thread_id: string; ttl_strategy: string | null }>(
      `SELECT thread_id, ttl_strategy FROM ${this.t.threads}
       WHERE expires_at IS NOT NULL AND expires_at <= $1 AND status <> 'busy' ORDER BY expires_at, seq LIMIT $2`,
      [at, limit],
    );
    return rows.map((r) => ({
      thread_id: r.thread_id,
      strategy: r.ttl_strategy === "keep_latest" ? "keep_latest" : "delete",
    }));
  }

  /** Deletes the thread's channel values that no remaining checkpoint refers to. */
  private async deleteUnreferencedBlobs(q: Queryable, id: string): Promise<void> {
    const t = this.t;
    await q.query(
      `WITH live AS (
         SELECT c.checkpoint_ns, v.key AS channel, v.value AS version
         FROM ${t.checkpoints} c CROSS JOIN LATERAL jsonb_each_text(c.checkpoint -> 'channel_versions') v
         WHERE c.thread_id = $1)
       DELETE FROM ${t.checkpoint_blobs} b WHERE b.thread_id = $1 AND NOT EXISTS (
         SELECT 1 FROM live l
         WHERE l.checkpoint_ns = b.checkpoint_ns AND l.channel = b.channel AND l.version = b.version)`,
      [id],
    );
  }

  async keepLatest(id: string): Promise<void> {
    const t = this.t;
    await this.db.tx(async (q) => {
      await q.query(
        `DELETE FROM ${t.checkpoints} WHERE thread_id = $1 AND (checkpoint_ns, checkpoint_id) NOT IN (
           SELECT checkpoint_ns, MAX(checkpoint_id) FROM ${t.checkpoints} WHERE thread_id = $1 GROUP BY checkpoint_ns)`,
        [id],
      );
      await q.query(
        `DELETE FROM ${t.checkpoint_writes} w WHERE w.thread_id = $1 AND NOT EXISTS (
           SELECT 1 FROM ${t.checkpoints} c WHERE c.thread_id = w.thread_id
             AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
        [id],
      );
      await this.deleteUnreferencedBlobs(q, id);
      // With no older checkpoint left, expiry restarts from now (keep_latest keeps the thread).
      if (isUuid(id)) {
        await q.query(
          `UPDATE ${t.threads} SET expires_at = NULL WHERE thread_id = $1 AND ttl_strategy = 'keep_latest'`,
          [id],
        );
      }
    });
  }

  async storageStats(id: string): Promise<Json> {
    const t = this.t;
    const [cp] = await this.db.rows<{ n: number; b: string }>(
      `SELECT COUNT(*)::int AS n,
         COALESCE(SUM(octet_length(checkpoint::text) + octet_length(metadata::text)), 0)::bigint AS b
       FROM ${t.checkpoints} WHERE thread_id = $1`,
      [id],
    );
    // Channel values are stored once per version (checkpoint_blobs), not inside each checkpoint.
    const channels = await this.db.rows<{ channel: string; versions: number; bytes: string }>(
      `SELECT channel, COUNT(*)::int AS versions, COALESCE(SUM(octet_length(blob)), 0)::bigint AS bytes
       FROM ${t.checkpoint_blobs} WHERE thread_id = $1 AND type <> 'empty'
       GROUP BY channel ORDER BY channel COLLATE "C"`,
      [id],
    );
    const [w] = await this.db.rows<{ n: number; b: string }>(
      `SELECT COUNT(*)::int AS n, COALESCE(SUM(octet_length(blob)), 0)::bigint AS b
       FROM ${t.checkpoint_writes} WHERE thread_id = $1`,
      [id],
    );
    const checkpointBytes = Number(cp.b);
    const channelBytes = channels.reduce((a, c) => a + Number(c.bytes), 0);
    const writeBytes = Number(w.b);
    return {
      thread_id: id,
      total_bytes: checkpointBytes + channelBytes + writeBytes,
      checkpoints: { count: cp.n, bytes: checkpointBytes },
      channel_values: {
        count: channels.reduce((a, c) => a + c.versions, 0),
        bytes: channelBytes,
        by_channel: Object.fromEntries(
          channels.map((c) => [c.channel, { versions: c.versions, bytes: Number(c.bytes) }]),
        ),
      },
      pending_writes: { count: w.n, bytes: writeBytes },
    };
  }

  /**
   * The columns of a mark, for the thread id in parameter `param` (text). Checkpoint ids are uuid6 (time-ordered;
   * LangGraph itself takes the greatest as the latest). Pending writes of a resumed run attach to the checkpoint
   * it resumes, so they are told apart by insertion order.
   */
  private markColumns(param: string): string {
    const t = this.t;
    return `(SELECT MAX(checkpoint_id) FROM ${t.checkpoints} WHERE thread_id = ${param}) AS checkpoint_id,
      (SELECT COALESCE(MAX(hangar_seq), 0) FROM ${t.checkpoint_writes} WHERE thread_id = ${param})::text AS write_seq`;
  }

  async checkpointMark(threadId: string): Promise<unknown> {
    const [r] = await this.db.rows<Mark>(`SELECT ${this.markColumns("$1")}`, [threadId]);
    return { checkpoint_id: r.checkpoint_id, write_seq: r.write_seq } satisfies Mark;
  }

  async rollbackCheckpoints(threadId: string, mark: unknown): Promise<void> {
    const m = mark as Partial<Mark> | null | undefined;
    // Not a mark of checkpointMark: nothing is known to be newer.
    if (!m || typeof m.write_seq !== "string" || !/^\d+$/.test(m.write_seq)) return;
    const cp = typeof m.checkpoint_id === "string" ? m.checkpoint_id : null;
    const t = this.t;
    await this.db.tx(async (q) => {
      await q.query(
        `DELETE FROM ${t.checkpoints} WHERE thread_id = $1 AND ($2::text IS NULL OR checkpoint_id > $2::text)`,
        [threadId, cp],
      );
      await q.query(
        `DELETE FROM ${t.checkpoint_writes} WHERE thread_id = $1
           AND (hangar_seq > $3::bigint OR $2::text IS NULL OR checkpoint_id > $2::text)`,
        [threadId, cp, m.write_seq],
      );
      await this.deleteUnreferencedBlobs(q, threadId);
    });
  }

  async setState(id: string, u: ThreadStateUpdate, fence?: AttemptFence): Promise<ThreadStatus | null> {
    if (!isUuid(id)) return null;
    const ts = now();
    if (u.busyWhilePending) return this.endRun(id, ts, u, fence);
    const params: unknown[] = [ts];
    const sets: string[] = ["updated_at = $1"];
    const set = (sql: (n: string) => string, v: unknown) => {
      params.push(v);
      sets.push(sql(`$${params.length}`));
    };
    if (u.status !== undefined) set((n) => `status = ${n}`, u.status);
    if (u.values !== undefined) {
      set((n) => `"values" = ${n}::jsonb`, u.values === null ? null : jsonb(u.values));
      sets.push("state_updated_at = $1");
    }
    if (u.interrupts !== undefined) set((n) => `interrupts = ${n}::jsonb`, jsonb(u.interrupts));
    if (u.error !== undefined) set((n) => `error = ${n}::jsonb`, u.error === null ? null : jsonb(u.error));
    if (u.metadata !== undefined) set((n) => `metadata = ${this.mergeMetadata(n)}`, jsonb(u.metadata));
    if (u.config !== undefined) set((n) => `config = ${n}::jsonb`, jsonb(u.config));
    params.push(id);
    let where = `thread_id = $${params.length}`;
    let run = "";
    if (fence) {
      params.push(fence.runId, fence.attempt);
      const attemptIs = `run_id = $${params.length - 1}::uuid AND attempt = $${params.length}`;
      if (fence.runStatus) {
        // The run's status in the same statement, under the same fence.
        params.push(fence.runStatus);
        run = `WITH run AS (UPDATE ${this.t.runs} SET status = $${params.length}, updated_at = $1
          WHERE ${attemptIs} RETURNING 1) `;
        where += " AND EXISTS (SELECT 1 FROM run)";
      } else {
        where += ` AND EXISTS (SELECT 1 FROM ${this.t.runs} WHERE ${attemptIs})`;
      }
    }
    const sql = `${run}UPDATE ${this.t.threads} SET ${sets.join(", ")} WHERE ${where} RETURNING status`;
    return (await this.db.rows<{ status: ThreadStatus }>(sql, params))[0]?.status ?? null;
  }

  /**
   * A run's end (busyWhilePending): one call of end_run (migration 5), which takes the thread's row lock and then,
   * each in a statement of its own (so with a snapshot taken after the lock), the fenced update of the run and the
   * thread's, the thread kept busy if another run waits. A pending run cancelled at this moment
   * (PgRunQueue.requestCancel, under the same lock) is seen either as cancelled here, or its canceller sees this run
   * ended and settles the thread. Read in the same statement as the lock, both could miss the other and leave the
   * thread busy. Its synchronous commit also makes the run's checkpoints durable (they were written before it).
   */
  private async endRun(
    id: string,
    ts: string,
    u: ThreadStateUpdate,
    fence?: AttemptFence,
  ): Promise<ThreadStatus | null> {
    const set: Record<string, unknown> = {};
    for (const k of ["status", "values", "interrupts", "error", "metadata", "config"] as const) {
      if (u[k] !== undefined) set[k] = u[k];
    }
    const upTo = this.durable?.counted() ?? 0;
    const [r] = await this.db.call<{ thread_status: ThreadStatus | null; wrote: boolean }>(
      `SELECT * FROM ${this.t.end_run}($1, $2, $3::jsonb, $4, $5, $6)`,
      [id, ts, jsonb(set), fence?.runId ?? null, fence?.attempt ?? null, fence?.runStatus ?? null],
    );
    if (r.wrote) this.durable?.covered(upTo);
    return r.thread_status;
  }
}
