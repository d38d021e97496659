// The run queue contract: admission of runs (atomic with the busy check of their thread), one run at a time
// per thread, and, for the scale-out queue, runs taken by workers under a renewable lease.
import type { Run, RunAdmission, RunInput } from "../storage/types.js";
import type { CancelAction } from "./execute-job.js";

export type { RunAdmission } from "../storage/types.js";

/** The queue as run creation and the API see it, whatever executes the runs. */
export interface RunQueue {
  /**
   * Records a new run on a thread in one atomic step with the look at the thread's current run: under
   * "reject" a busy thread refuses it (nothing recorded); under "interrupt" or "rollback" it goes first in
   * line. Two admissions on one thread never both see it idle.
   */
  admit(input: RunInput & { thread_id: string }): Promise<RunAdmission>;
  /** The run holding the thread (executing, or first in line and due), if any. */
  current(threadId: string): Promise<string | undefined>;
  /** Runs waiting (delayed ones too) and executing, for metrics. */
  counts(): Promise<{ pending: number; running: number }>;
}

/** A run a worker took from the queue. */
export interface ClaimedRun extends Run {
  attempt: number;
  cancel_action: CancelAction | null;
}

/**
 * A queue shared by processes (scale-out): workers claim runs under a lease and renew it; a run whose
 * worker stopped renewing is re-queued by any process; cancellations are recorded on the run.
 */
export interface LeasedRunQueue extends RunQueue {
  /** Takes up to `limit` due runs for a worker, at most one per thread and only a thread's first in line. */
  claim(workerId: string, leaseMs: number, limit: number): Promise<ClaimedRun[]>;
  /**
   * Renews the worker's leases. Returns, per run still held, the cancellation asked for (if any); runs
   * missing from the answer are no longer this worker's.
   */
  heartbeat(workerId: string, runIds: string[], leaseMs: number): Promise<Map<string, CancelAction | null>>;
  /** Re-queues runs whose lease expired as their next attempt; fails those that reached `maxAttempts`, their threads too. */
  sweepExpired(maxAttempts: number): Promise<{ requeued: string[]; failed: ClaimedRun[] }>;
  /** Gives the worker's runs back to the queue (shutdown); returns how many. */
  handBack(workerId: string, runIds: string[]): Promise<number>;
  /**
   * Asks a run to stop: a pending one is settled at once (interrupted, or deleted for a rollback), a running
   * one gets the request recorded for its worker. Null when the run had already ended.
   */
  requestCancel(
    runId: string,
    action: CancelAction,
  ): Promise<{ was: "pending" | "running"; run: ClaimedRun } | null>;
  /** The thread's pending and running runs, in queue order (running first). */
  active(threadId: string): Promise<{ run_id: string; status: Run["status"]; delayed: boolean }[]>;
  /** Whether the run has ended (or is gone). */
  ended(runId: string): Promise<boolean>;
  /** Removes a run's record (a stateless run, once it ended). */
  deleteRun(runId: string): Promise<void>;
}
