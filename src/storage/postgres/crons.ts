// PostgreSQL cron store: scheduled runs, and the compare-and-set claim that makes each run date fire once
// across every process sharing the database.
import type { Cron, CronSearch, CronStore } from "../types.js";
import { isUuid, jsonb, requireUuid, type Db } from "./db.js";
import { containment, now, orderBy, toCron } from "./rows.js";

const SORTABLE = {
  cron_id: {},
  assistant_id: {},
  thread_id: { nullable: true },
  next_run_date: { nullable: true },
  end_time: { nullable: true },
  created_at: {},
  updated_at: {},
};
const COLUMNS = [
  "assistant_id",
  "thread_id",
  "user_id",
  "schedule",
  "timezone",
  "end_time",
  "enabled",
  "on_run_completed",
  "payload",
  "metadata",
  "next_run_date",
] as const;
type Column = (typeof COLUMNS)[number];

const JSON_COLUMNS = new Set<Column>(["payload", "metadata"]);

const value = (k: Column, v: unknown) => {
  if (JSON_COLUMNS.has(k)) return jsonb(v ?? {});
  if (k === "enabled") return Boolean(v);
  if ((k === "assistant_id" || k === "thread_id") && v != null) return requireUuid(k, v as string);
  return v ?? null;
};
const placeholder = (k: Column, n: number) => (JSON_COLUMNS.has(k) ? `$${n}::jsonb` : `$${n}`);

export class PostgresCrons implements CronStore {
  constructor(private db: Db) {}

  private get t() {
    return this.db.t;
  }

  async create(c: Omit<Cron, "created_at" | "updated_at">): Promise<Cron> {
    requireUuid("cron_id", c.cron_id);
    const ts = now();
    const values = COLUMNS.map((k) => value(k, c[k]));
    await this.db.query(
      `INSERT INTO ${this.t.crons} (cron_id, ${COLUMNS.join(", ")}, created_at, updated_at)
       VALUES ($1, ${COLUMNS.map((k, i) => placeholder(k, i + 2)).join(", ")}, $${COLUMNS.length + 2}, $${COLUMNS.length + 2})`,
      [c.cron_id, ...values, ts],
    );
    return { ...c, created_at: ts, updated_at: ts };
  }

  async get(id: string): Promise<Cron | null> {
    if (!isUuid(id)) return null;
    const [r] = await this.db.rows(`SELECT * FROM ${this.t.crons} WHERE cron_id = $1`, [id]);
    return r ? toCron(r) : null;
  }

  async update(
    id: string,
    patch: Partial<Omit<Cron, "cron_id" | "created_at" | "updated_at">>,
  ): Promise<Cron | null> {
    if (!isUuid(id)) return null;
    const keys = COLUMNS.filter((k) => k in patch);
    const params: unknown[] = keys.map((k) => value(k, patch[k]));
    const sets = keys.map((k, i) => `${k} = ${placeholder(k, i + 1)}`);
    params.push(now(), id);
    sets.push(`updated_at = $${params.length - 1}`);
    const [r] = await this.db.rows(
      `UPDATE ${this.t.crons} SET ${sets.join(", ")} WHERE cron_id = $${params.length} RETURNING *`,
      params,
    );
    return r ? toCron(r) : null;
  }

  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await this.db.query(`DELETE FROM ${this.t.crons} WHERE cron_id = $1`, [id]);
    return (res.rowCount ?? 0) > 0;
  }

  private where(q: Partial<CronSearch>, params: unknown[]): string {
    const conds: string[] = [];
    // An id that is not a UUID matches no cron.
    if (q.assistant_id) {
      params.push(isUuid(q.assistant_id) ? q.assistant_id : null);
      conds.push(`assistant_id = $${params.length}::uuid`);
    }
    if (q.thread_id) {
      params.push(isUuid(q.thread_id) ? q.thread_id : null);
      conds.push(`thread_id = $${params.length}::uuid`);
    }
    if (q.enabled !== undefined) {
      params.push(q.enabled);
      conds.push(`enabled = $${params.length}`);
    }
    conds.push(...containment("metadata", q.metadata, params));
    conds.push(...containment("metadata", q.authMetadata, params));
    return conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  }

  async search(q: CronSearch): Promise<Cron[]> {
    const params: unknown[] = [];
    const where = this.where(q, params);
    params.push(q.limit, q.offset);
    const rows = await this.db.rows(
      `SELECT * FROM ${this.t.crons} ${where} ${orderBy(SORTABLE, q.sort_by, q.sort_order, "created_at")}
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toCron);
  }

  async count(q: Partial<CronSearch>): Promise<number> {
    const params: unknown[] = [];
    const [r] = await this.db.rows<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM ${this.t.crons} ${this.where(q, params)}`,
      params,
    );
    return r.n;
  }

  async due(at: string): Promise<Cron[]> {
    const rows = await this.db.rows(
      `SELECT * FROM ${this.t.crons}
       WHERE enabled AND next_run_date IS NOT NULL AND next_run_date <= $1 ORDER BY next_run_date, seq`,
      [at],
    );
    return rows.map(toCron);
  }

  async nextDue(): Promise<number | null> {
    const [r] = await this.db.rows<{ ms: number | null }>(
      `SELECT (EXTRACT(EPOCH FROM MIN(next_run_date)) * 1000)::float8 AS ms FROM ${this.t.crons}
       WHERE enabled AND next_run_date IS NOT NULL`,
    );
    return r?.ms ?? null;
  }

  async claim(id: string, dueAt: string, next: string | null): Promise<boolean> {
    if (!isUuid(id)) return false;
    // One conditional UPDATE: of several processes claiming the same date, exactly one changes the row; none once
    // the cron is disabled (after the scheduler read it as due).
    const res = await this.db.query(
      `UPDATE ${this.t.crons} SET next_run_date = $1, updated_at = $2
       WHERE cron_id = $3 AND next_run_date = $4 AND enabled`,
      [next, now(), id, dueAt],
    );
    return res.rowCount === 1;
  }
}
