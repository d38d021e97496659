// SQLite cron store: scheduled runs, and the compare-and-set claim that makes each run date fire once.
import type Database from "better-sqlite3";
import type { Cron, CronSearch, CronStore } from "../types.js";
import { containmentSql } from "./json-filter.js";
import { now, orderBy, parseJson, statementCache } from "./rows.js";

const SORTABLE = [
  "cron_id",
  "assistant_id",
  "thread_id",
  "next_run_date",
  "end_time",
  "created_at",
  "updated_at",
];
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

function toCron(r: any): Cron {
  return {
    cron_id: r.cron_id,
    assistant_id: r.assistant_id,
    thread_id: r.thread_id,
    user_id: r.user_id,
    schedule: r.schedule,
    timezone: r.timezone,
    end_time: r.end_time,
    enabled: Boolean(r.enabled),
    on_run_completed: r.on_run_completed,
    payload: parseJson(r.payload, {}),
    metadata: parseJson(r.metadata, {}),
    next_run_date: r.next_run_date,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

const column = (k: (typeof COLUMNS)[number], v: unknown) =>
  k === "payload" || k === "metadata" ? JSON.stringify(v ?? {}) : k === "enabled" ? (v ? 1 : 0) : (v ?? null);

export class SqliteCrons implements CronStore {
  private stmt: ReturnType<typeof statementCache>;

  constructor(
    db: Database.Database,
    private begin: () => void,
  ) {
    this.stmt = statementCache(db);
  }

  async create(c: Omit<Cron, "created_at" | "updated_at">): Promise<Cron> {
    this.begin();
    const ts = now();
    this.stmt(
      `INSERT INTO crons (cron_id, ${COLUMNS.join(", ")}, created_at, updated_at)
       VALUES (?, ${COLUMNS.map(() => "?").join(", ")}, ?, ?)`,
    ).run(c.cron_id, ...COLUMNS.map((k) => column(k, c[k])), ts, ts);
    return { ...c, created_at: ts, updated_at: ts };
  }

  async get(id: string): Promise<Cron | null> {
    const r = this.stmt("SELECT * FROM crons WHERE cron_id = ?").get(id);
    return r ? toCron(r) : null;
  }

  async update(
    id: string,
    patch: Partial<Omit<Cron, "cron_id" | "created_at" | "updated_at">>,
  ): Promise<Cron | null> {
    this.begin();
    const keys = COLUMNS.filter((k) => k in patch);
    const sets = [...keys.map((k) => `${k} = ?`), "updated_at = ?"];
    const r = this.stmt(`UPDATE crons SET ${sets.join(", ")} WHERE cron_id = ? RETURNING *`).get(
      ...keys.map((k) => column(k, patch[k])),
      now(),
      id,
    );
    return r ? toCron(r) : null;
  }

  async delete(id: string): Promise<boolean> {
    this.begin();
    return this.stmt("DELETE FROM crons WHERE cron_id = ?").run(id).changes > 0;
  }

  private where(q: Partial<CronSearch>, params: unknown[]): string {
    const conds: string[] = [];
    if (q.assistant_id) {
      conds.push("assistant_id = ?");
      params.push(q.assistant_id);
    }
    if (q.thread_id) {
      conds.push("thread_id = ?");
      params.push(q.thread_id);
    }
    if (q.enabled !== undefined) {
      conds.push("enabled = ?");
      params.push(q.enabled ? 1 : 0);
    }
    if (q.metadata && Object.keys(q.metadata).length)
      conds.push(...containmentSql("metadata", q.metadata, params));
    if (q.authMetadata && Object.keys(q.authMetadata).length)
      conds.push(...containmentSql("metadata", q.authMetadata, params));
    return conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  }

  async search(q: CronSearch): Promise<Cron[]> {
    const params: unknown[] = [];
    const sql = `SELECT * FROM crons ${this.where(q, params)} ${orderBy(SORTABLE, q.sort_by, q.sort_order, "created_at")} LIMIT ? OFFSET ?`;
    return this.stmt(sql)
      .all(...params, q.limit, q.offset)
      .map(toCron);
  }

  async count(q: Partial<CronSearch>): Promise<number> {
    const params: unknown[] = [];
    return (
      this.stmt(`SELECT COUNT(*) AS n FROM crons ${this.where(q, params)}`).get(...params) as { n: number }
    ).n;
  }

  async due(at: string): Promise<Cron[]> {
    return this.stmt(
      "SELECT * FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL AND next_run_date <= ? ORDER BY next_run_date",
    )
      .all(at)
      .map(toCron);
  }

  async nextDue(): Promise<number | null> {
    const r = this.stmt(
      "SELECT MIN(next_run_date) AS next FROM crons WHERE enabled = 1 AND next_run_date IS NOT NULL",
    ).get() as { next: string | null } | undefined;
    return r?.next ? Date.parse(r.next) : null;
  }

  async claim(id: string, dueAt: string, next: string | null): Promise<boolean> {
    this.begin();
    return (
      this.stmt(
        "UPDATE crons SET next_run_date = ?, updated_at = ? WHERE cron_id = ? AND next_run_date = ? AND enabled",
      ).run(next, now(), id, dueAt).changes === 1
    );
  }
}
