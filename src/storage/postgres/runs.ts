// PostgreSQL run store.
import type { AdmittedThread, Run, RunAdmission, RunInput, RunStatus, RunStore } from "../types.js";
import { isUuid, jsonb, requireUuid, type Db } from "./db.js";
import { now, toRun } from "./rows.js";
import { threadLine, type ActiveRun } from "../admission.js";

export class PostgresRuns implements RunStore {
  constructor(private db: Db) {}

  private get t() {
    return this.db.t;
  }

  /** A new run's values, in the order of create's INSERT and of admit_run's parameters, and the record it becomes. */
  private values(input: RunInput): { params: unknown[]; run: Run } {
    requireUuid("run_id", input.run_id);
    requireUuid("assistant_id", input.assistant_id);
    if (input.thread_id !== null) requireUuid("thread_id", input.thread_id);
    const ts = now();
    const { delay_seconds: delay, ...run } = input;
    const params = [
      input.run_id,
      input.thread_id,
      input.assistant_id,
      ts,
      input.status,
      jsonb(input.metadata ?? {}),
      jsonb(input.kwargs ?? {}),
      input.multitask_strategy,
      delay ?? 0,
    ];
    return { params, run: { ...run, created_at: ts, updated_at: ts } };
  }

  async create(input: RunInput): Promise<Run> {
    const { params, run } = this.values(input);
    await this.db.query(
      `INSERT INTO ${this.t.runs}
         (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs, multitask_strategy,
          not_before)
       VALUES ($1, $2, $3, $4, $4, $5, $6::jsonb, $7::jsonb, $8,
          CASE WHEN $9::float8 > 0 THEN now() + make_interval(secs => $9::float8) END)`,
      params,
    );
    return run;
  }

  /**
   * One call of admit_run (migration 5): under the thread's row lock, so admissions on one thread, from any
   * process, take turns and each sees the runs the others recorded; the run and its thread's mark in the same
   * transaction. (Workers claim runs under their own lock; a claim never waits for this one.)
   */
  async admit(input: RunInput & { thread_id: string }, thread?: AdmittedThread): Promise<RunAdmission> {
    const { params, run } = this.values(input);
    const [r] = await this.db.call<{ admitted: { active: ActiveRun[]; admitted: boolean } }>(
      `SELECT ${this.t.admit_run}($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8, $9, $10::jsonb, $11::jsonb)
         AS admitted`,
      [...params, thread ? jsonb(thread.metadata) : null, thread ? jsonb(thread.config) : null],
    );
    const { current, delayed, busyWith } = threadLine(r.admitted.active);
    if (!r.admitted.admitted) return { run: null, current: busyWith! };
    return { run, current, delayed };
  }

  async threadOf(runId: string): Promise<string | null> {
    if (!isUuid(runId)) return null;
    const [r] = await this.db.rows(`SELECT thread_id FROM ${this.t.runs} WHERE run_id = $1`, [runId]);
    return (r?.thread_id as string | null | undefined) ?? null;
  }

  async get(threadId: string, runId: string): Promise<Run | null> {
    if (!isUuid(threadId) || !isUuid(runId)) return null;
    const [r] = await this.db.rows(`SELECT * FROM ${this.t.runs} WHERE run_id = $1 AND thread_id = $2`, [
      runId,
      threadId,
    ]);
    return r ? toRun(r) : null;
  }

  async list(threadId: string, q: { limit: number; offset: number; status?: RunStatus }): Promise<Run[]> {
    if (!isUuid(threadId)) return [];
    const params: unknown[] = [threadId];
    let where = "thread_id = $1";
    if (q.status) {
      params.push(q.status);
      where += ` AND status = $${params.length}`;
    }
    params.push(q.limit, q.offset);
    const rows = await this.db.rows(
      `SELECT * FROM ${this.t.runs} WHERE ${where} ORDER BY created_at DESC, seq DESC
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toRun);
  }

  async setStatus(runId: string, status: RunStatus, attempt?: number): Promise<void> {
    if (!isUuid(runId)) return;
    await this.db.query(
      `UPDATE ${this.t.runs} SET status = $1, updated_at = $2 WHERE run_id = $3 AND ($4::int IS NULL OR attempt = $4)`,
      [status, now(), runId, attempt ?? null],
    );
  }

  async start(runId: string): Promise<number> {
    if (!isUuid(runId)) return 1;
    // A run starts at attempt 1 (the column's default); starting it again while it is marked running
    // (it was in flight when a process stopped) is the next attempt.
    const [r] = await this.db.rows<{ attempt: number }>(
      `UPDATE ${this.t.runs} SET status = 'running',
         attempt = CASE WHEN status = 'running' THEN attempt + 1 ELSE attempt END, updated_at = $1
       WHERE run_id = $2 RETURNING attempt`,
      [now(), runId],
    );
    return r?.attempt ?? 1;
  }

  async inFlight(): Promise<(Run & { attempt: number; not_before: string | null })[]> {
    const rows = await this.db.rows(
      `SELECT * FROM ${this.t.runs} WHERE status IN ('pending', 'running') ORDER BY created_at, seq`,
    );
    return rows.map((r) => ({
      ...toRun(r),
      attempt: r.attempt as number,
      not_before: r.not_before ? new Date(r.not_before as string | Date).toISOString() : null,
    }));
  }

  async idsByStatus(
    threadId: string | null,
    statuses: RunStatus[],
  ): Promise<{ run_id: string; thread_id: string | null }[]> {
    if (threadId && !isUuid(threadId)) return [];
    const params: unknown[] = [statuses];
    let where = "status = ANY($1::text[])";
    if (threadId) {
      params.push(threadId);
      where += " AND thread_id = $2";
    }
    return this.db.rows<{ run_id: string; thread_id: string | null }>(
      `SELECT run_id, thread_id FROM ${this.t.runs} WHERE ${where} ORDER BY created_at, seq`,
      params,
    );
  }

  async delete(runId: string): Promise<boolean> {
    if (!isUuid(runId)) return false;
    const res = await this.db.query(`DELETE FROM ${this.t.runs} WHERE run_id = $1`, [runId]);
    return (res.rowCount ?? 0) > 0;
  }
}
