// SQLite run store.
import type Database from "better-sqlite3";
import type { AdmittedThread, Run, RunAdmission, RunInput, RunStatus, RunStore } from "../types.js";
import { now, statementCache, toRun } from "./rows.js";
import { threadLine, type ActiveRun } from "../admission.js";

export class SqliteRuns implements RunStore {
  private stmt: ReturnType<typeof statementCache>;

  constructor(
    private db: Database.Database,
    private begin: () => void,
  ) {
    this.stmt = statementCache(db);
  }

  /** Inserts the run (synchronously: callers compose it into one transaction). */
  private insert(input: RunInput): Run {
    const ts = now();
    const delay = input.delay_seconds ?? 0;
    const notBefore = delay > 0 ? new Date(Date.now() + delay * 1000).toISOString() : null;
    this.stmt(
      `INSERT INTO runs (run_id, thread_id, assistant_id, created_at, updated_at, status, metadata, kwargs,
         multitask_strategy, not_before)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      input.run_id,
      input.thread_id,
      input.assistant_id,
      ts,
      ts,
      input.status,
      JSON.stringify(input.metadata),
      JSON.stringify(input.kwargs),
      input.multitask_strategy,
      notBefore,
    );
    const { delay_seconds: _delay, ...run } = input;
    return { ...run, created_at: ts, updated_at: ts };
  }

  async create(input: RunInput): Promise<Run> {
    this.begin();
    return this.insert(input);
  }

  /**
   * The busy check and the insert in one synchronous transaction: nothing else in this process runs in
   * between, and another process on the same file waits for the write lock.
   */
  async admit(input: RunInput & { thread_id: string }, thread?: AdmittedThread): Promise<RunAdmission> {
    this.begin();
    return this.db.transaction((): RunAdmission => {
      const rows = this.stmt(
        `SELECT run_id, status = 'pending' AND not_before IS NOT NULL AND not_before > ? AS delayed FROM runs
         WHERE thread_id = ? AND status IN ('pending', 'running')
         ORDER BY status = 'running' DESC, created_at, rowid`,
      ).all(now(), input.thread_id) as ActiveRun[];
      const { current, delayed, busyWith } = threadLine(rows);
      if (busyWith && input.multitask_strategy === "reject") return { run: null, current: busyWith };
      const run = this.insert(input);
      if (thread) {
        this.stmt(
          `UPDATE threads SET status = 'busy', updated_at = ?, metadata = json_merge_top(metadata, ?), config = ?
           WHERE thread_id = ?`,
        ).run(
          run.created_at,
          JSON.stringify(thread.metadata),
          JSON.stringify(thread.config),
          input.thread_id,
        );
      }
      return { run, current, delayed };
    })();
  }

  async threadOf(runId: string): Promise<string | null> {
    const r = this.stmt("SELECT thread_id FROM runs WHERE run_id = ?").get(runId) as
      { thread_id: string | null } | undefined;
    return r?.thread_id ?? null;
  }

  async get(threadId: string, runId: string): Promise<Run | null> {
    const r = this.stmt("SELECT * FROM runs WHERE run_id = ? AND thread_id = ?").get(runId, threadId);
    return r ? toRun(r) : null;
  }

  async list(threadId: string, q: { limit: number; offset: number; status?: RunStatus }): Promise<Run[]> {
    const params: unknown[] = [threadId];
    let where = "thread_id = ?";
    if (q.status) {
      where += " AND status = ?";
      params.push(q.status);
    }
    return this.stmt(
      `SELECT * FROM runs WHERE ${where} ORDER BY created_at DESC, rowid DESC LIMIT ? OFFSET ?`,
    )
      .all(...params, q.limit, q.offset)
      .map(toRun);
  }

  async setStatus(runId: string, status: RunStatus, attempt?: number): Promise<void> {
    this.begin();
    this.stmt(
      "UPDATE runs SET status = ?, updated_at = ? WHERE run_id = ? AND (? IS NULL OR attempt = ?)",
    ).run(status, now(), runId, attempt ?? null, attempt ?? null);
  }

  async start(runId: string): Promise<number> {
    this.begin();
    const r = this.stmt(
      "UPDATE runs SET status = 'running', attempt = CASE WHEN status = 'running' THEN attempt + 1 ELSE attempt END, updated_at = ? WHERE run_id = ? RETURNING attempt",
    ).get(now(), runId) as { attempt: number } | undefined;
    return r?.attempt ?? 1;
  }

  async inFlight(): Promise<(Run & { attempt: number; not_before: string | null })[]> {
    return this.stmt("SELECT * FROM runs WHERE status IN ('pending', 'running') ORDER BY created_at, rowid")
      .all()
      .map((r: any) => ({
        ...toRun(r),
        attempt: r.attempt as number,
        not_before: (r.not_before as string | null) ?? null,
      }));
  }

  async idsByStatus(
    threadId: string | null,
    statuses: RunStatus[],
  ): Promise<{ run_id: string; thread_id: string | null }[]> {
    const marks = statuses.map(() => "?").join(", ");
    const where = threadId ? `thread_id = ? AND status IN (${marks})` : `status IN (${marks})`;
    const params = threadId ? [threadId, ...statuses] : statuses;
    return this.stmt(`SELECT run_id, thread_id FROM runs WHERE ${where} ORDER BY created_at, rowid`).all(
      ...params,
    ) as { run_id: string; thread_id: string | null }[];
  }

  async delete(runId: string): Promise<boolean> {
    this.begin();
    return this.stmt("DELETE FROM runs WHERE run_id = ?").run(runId).changes > 0;
  }
}
