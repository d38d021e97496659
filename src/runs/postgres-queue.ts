// The run queue in PostgreSQL (scale-out): runs are admitted under their thread's row lock, taken with
// claim_runs (FOR UPDATE SKIP LOCKED, one per thread, in order), held under a lease that the worker's heartbeat
// renews, and re-queued by any process's sweeper when a lease expires (the worker died). Cancellations are
// recorded on the run for the heartbeat to find.
import type { Pool } from "pg";
import { ident } from "../storage/postgres/migrate.js";
import type {
  AdmittedThread,
  Json,
  MultitaskStrategy,
  RunAdmission,
  RunInput,
  Run,
  RunStatus,
  RunStore,
} from "../storage/types.js";
import type { ClaimedRun, Leftovers, RunQueue } from "./queue.js";
import type { StorageCipher } from "../storage/encryption/index.js";

export type { ClaimedRun } from "./queue.js";

const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));

function toClaimed(r: Record<string, unknown>): ClaimedRun {
  return {
    run_id: r.run_id as string,
    thread_id: (r.thread_id as string | null) ?? null,
    assistant_id: r.assistant_id as string,
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    status: r.status as RunStatus,
    metadata: (r.metadata as Json) ?? {},
    kwargs: (r.kwargs as Json) ?? {},
    multitask_strategy: r.multitask_strategy as MultitaskStrategy,
    attempt: r.attempt as number,
    cancel_action: (r.cancel_action as ClaimedRun["cancel_action"]) ?? null,
  };
}

export class PgRunQueue implements RunQueue {
  readonly shared = true;
  private runs: string;
  private threads: string;

  /**
   * @param store the PostgreSQL run store of the same schema (admission is one of its transactions)
   * @param cipher encryption at rest: the runs this queue reads itself have their input opened with it
   */
  constructor(
    private pool: Pool,
    private schema: string,
    private store: RunStore,
    private cipher: StorageCipher | null = null,
  ) {
    this.runs = `${ident(schema)}.runs`;
    this.threads = `${ident(schema)}.threads`;
  }

  /** A run as read from its row, its input opened (encryption at rest). */
  private async claimed(r: Record<string, unknown>): Promise<ClaimedRun> {
    const run = toClaimed(r);
    if (!this.cipher) return run;
    const where = { model: "run", field: "kwargs" } as const;
    return {
      ...run,
      kwargs: await this.cipher.openValue(run.kwargs, where),
      metadata: await this.cipher.open(run.metadata, { model: "run", field: "metadata" }),
    };
  }

  /** Admission in one transaction holding the thread's row lock (see PostgresRuns.admit). */
  admit(input: RunInput & { thread_id: string }, thread?: AdmittedThread): Promise<RunAdmission> {
    return this.store.admit(input, thread);
  }

  /** A stateless run's record, for any worker to take. */
  enqueue(input: RunInput): Promise<Run> {
    return this.store.create(input);
  }

  async listActive(threadId: string | null, statuses: RunStatus[]): Promise<string[]> {
    return (await this.store.idsByStatus(threadId, statuses)).map((r) => r.run_id);
  }

  /** Nothing to take up: a stopped worker's runs come back when their leases expire (sweepExpired). */
  async recover(): Promise<Leftovers> {
    return { requeued: [], failed: [] };
  }

  /** Nothing to do: the run's end, recorded in the runs table, frees its thread for claim_runs. */
  async complete(): Promise<void> {}

  /** Workers look at the queue on wake-up signals and every HANGAR_QUEUE_POLL_MS. */
  onDue(): void {}

  async current(threadId: string): Promise<string | undefined> {
    return (await this.active(threadId)).find((r) => !r.delayed)?.run_id;
  }

  /** The thread's runs that are pending or running, in queue order (running first). */
  async active(threadId: string): Promise<{ run_id: string; status: RunStatus; delayed: boolean }[]> {
    const { rows } = await this.pool.query(
      `SELECT run_id, status, (not_before IS NOT NULL AND not_before > now()) AS delayed FROM ${this.runs}
       WHERE thread_id = $1 AND status IN ('pending', 'running')
       ORDER BY status = 'running' DESC, priority DESC, seq`,
      [threadId],
    );
    return rows;
  }

  async claim(workerId: string, leaseMs: number, limit: number): Promise<ClaimedRun[]> {
    const { rows } = await this.pool.query(`SELECT * FROM ${ident(this.schema)}.claim_runs($1, $2, $3)`, [
      workerId,
      leaseMs,
      limit,
    ]);
    return Promise.all(rows.map((r) => this.claimed(r)));
  }

  /**
   * Renews the leases of the runs this worker holds. Returns, per run still held, the cancellation asked for
   * (if any); runs missing from the answer are no longer this worker's (their lease expired and another took
   * them, or they were handed back).
   */
  async heartbeat(
    workerId: string,
    runIds: string[],
    leaseMs: number,
  ): Promise<Map<string, ClaimedRun["cancel_action"]>> {
    if (!runIds.length) return new Map();
    const { rows } = await this.pool.query(
      `UPDATE ${this.runs} SET lease_expires_at = now() + make_interval(secs => $3 / 1000.0)
       WHERE run_id = ANY($1::uuid[]) AND worker_id = $2 AND status = 'running'
       RETURNING run_id, cancel_action`,
      [runIds, workerId, leaseMs],
    );
    return new Map(rows.map((r) => [r.run_id as string, r.cancel_action ?? null]));
  }

  /**
   * Runs whose lease expired (their worker died): re-queued as their next attempt, or failed once they
   * reached `maxAttempts`. Returns both lists.
   */
  async sweepExpired(maxAttempts: number): Promise<Leftovers> {
    // The runs that ran out of attempts, and their threads, in one statement: nobody sees such a run ended while
    // its thread is still busy.
    const failed = await this.pool.query(
      `WITH failed AS (
         UPDATE ${this.runs} SET status = 'error', worker_id = NULL, lease_expires_at = NULL, updated_at = now()
         WHERE status = 'running' AND lease_expires_at < now() AND attempt >= $1 RETURNING *
       ), settled AS (
         UPDATE ${this.threads} t SET status = 'error', updated_at = now(),
           error = jsonb_build_object('error', 'RunAttemptsExceeded',
             'message', 'run stopped ' || f.attempt || ' times without finishing')
         FROM failed f WHERE t.thread_id = f.thread_id
       )
       SELECT * FROM failed`,
      [maxAttempts],
    );
    const requeued = await this.pool.query(
      `UPDATE ${this.runs} SET status = 'pending', attempt = attempt + 1, worker_id = NULL,
         lease_expires_at = NULL, updated_at = now()
       WHERE status = 'running' AND lease_expires_at < now() RETURNING run_id`,
    );
    return {
      requeued: requeued.rows.map((r) => r.run_id),
      failed: await Promise.all(failed.rows.map((r) => this.claimed(r))),
    };
  }

  /** Gives runs this worker holds back to the queue (shutdown); they resume as their next attempt. */
  async handBack(workerId: string, runIds: string[]): Promise<number> {
    if (!runIds.length) return 0;
    const { rowCount } = await this.pool.query(
      `UPDATE ${this.runs} SET status = 'pending', attempt = attempt + 1, worker_id = NULL,
         lease_expires_at = NULL, updated_at = now()
       WHERE run_id = ANY($1::uuid[]) AND worker_id = $2 AND status = 'running'`,
      [runIds, workerId],
    );
    return rowCount ?? 0;
  }

  /**
   * Asks a run to stop. A pending one is settled here (interrupted, or deleted for a rollback) and never
   * starts; a running one gets the request recorded for its worker. Returns what the run was, or null when
   * it had already ended.
   */
  async requestCancel(
    runId: string,
    action: "interrupt" | "rollback",
  ): Promise<{ was: "pending" | "running"; run: ClaimedRun } | null> {
    // Under the thread's row lock, as a run's end is recorded (PostgresThreads.setState): of this cancel and
    // the end of the thread's running run, the later sees the other and the thread does not stay busy.
    const client = await this.pool.connect();
    let pending;
    try {
      await client.query("BEGIN");
      await client.query(
        `SELECT 1 FROM ${this.threads} WHERE thread_id = (SELECT thread_id FROM ${this.runs} WHERE run_id = $1)
         FOR UPDATE`,
        [runId],
      );
      pending = await client.query(
        action === "rollback"
          ? `DELETE FROM ${this.runs} WHERE run_id = $1 AND status = 'pending' RETURNING *`
          : `UPDATE ${this.runs} SET status = 'interrupted', updated_at = now()
             WHERE run_id = $1 AND status = 'pending' RETURNING *`,
        [runId],
      );
      await client.query("COMMIT");
      client.release();
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      client.release(e as Error);
      throw e;
    }
    if (pending.rows.length) return { was: "pending", run: await this.claimed(pending.rows[0]) };
    const running = await this.pool.query(
      `UPDATE ${this.runs} SET cancel_action = COALESCE(cancel_action, $2)
       WHERE run_id = $1 AND status = 'running' RETURNING *`,
      [runId, action],
    );
    if (running.rows.length) return { was: "running", run: await this.claimed(running.rows[0]) };
    return null;
  }

  /** Whether the run has ended (or is gone). */
  async ended(runId: string): Promise<boolean> {
    const { rows } = await this.pool.query(`SELECT status FROM ${this.runs} WHERE run_id = $1`, [runId]);
    return !rows.length || !["pending", "running"].includes(rows[0].status);
  }

  async counts(): Promise<{ pending: number; running: number }> {
    const { rows } = await this.pool.query(
      `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
              count(*) FILTER (WHERE status = 'running')::int AS running
       FROM ${this.runs} WHERE status IN ('pending', 'running')`,
    );
    return rows[0];
  }

  async deleteRun(runId: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.runs} WHERE run_id = $1`, [runId]);
  }
}
