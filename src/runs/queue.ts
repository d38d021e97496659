// The run queue contract, one for both backends: admission of runs (atomic with the busy check of their thread),
// one run at a time per thread in order, runs taken by workers under a lease, cancellations recorded for the
// worker. The embedded backend keeps the line in this process's memory (src/runs/memory-queue.ts: leases never
// expire there, a restart recovers what was left); the scale-out one keeps it in PostgreSQL
// (src/runs/postgres-queue.ts: leases renewed by heartbeats, taken over by any process when they expire).
import type { AdmittedThread, Run, RunAdmission, RunInput, RunStatus } from "../storage/types.js";
import type { CancelAction } from "./execute-job.js";

export type { RunAdmission } from "../storage/types.js";

/** A run a worker took from the queue. */
export interface ClaimedRun extends Run {
  /** 1 for a first start; more for a run taken up again (it resumes from its last checkpoint). */
  attempt: number;
  cancel_action: CancelAction | null;
}

/** Runs a queue found left over (a worker died, a process restarted): put back in line, or failed for good. */
export interface Leftovers {
  requeued: string[];
  /** Runs that reached the attempt limit: ended `error`, their threads too (in the same step). */
  failed: ClaimedRun[];
}

export interface RunQueue {
  /**
   * True when other processes share the queue: leases expire unless renewed, and workers look at the queue
   * now and then (a wake-up signal may be lost). False for the embedded queue: nobody else takes its runs.
   */
  readonly shared: boolean;
  /**
   * Records a new run on a thread in one atomic step with the look at the thread's current run: under
   * "reject" a busy thread refuses it (nothing recorded); under "interrupt" or "rollback" it goes first in
   * line. Two admissions on one thread never both see it idle. With `thread`, an admitted run marks its thread in
   * the same transaction (see RunStore.admit).
   */
  admit(input: RunInput & { thread_id: string }, thread?: AdmittedThread): Promise<RunAdmission>;
  /** Queues a run with no thread (a stateless run): it goes as soon as a worker is free. */
  enqueue(input: RunInput): Promise<Run>;
  /** The run holding the thread (executing, or first in line and due), if any. */
  current(threadId: string): Promise<string | undefined>;
  /** The thread's pending and running runs, in queue order (running first). */
  active(threadId: string): Promise<{ run_id: string; status: RunStatus; delayed: boolean }[]>;
  /** Ids of the runs (any thread, or one) with one of these statuses, stateless ones included. */
  listActive(threadId: string | null, statuses: RunStatus[]): Promise<string[]>;
  /** Runs waiting (delayed ones too) and executing, for metrics. */
  counts(): Promise<{ pending: number; running: number }>;
  /** Takes up to `limit` due runs for a worker, at most one per thread and only a thread's first in line. */
  claim(workerId: string, leaseMs: number, limit: number): Promise<ClaimedRun[]>;
  /**
   * Renews the worker's leases. Returns, per run still held, the cancellation asked for (if any); runs
   * missing from the answer are no longer this worker's.
   */
  heartbeat(workerId: string, runIds: string[], leaseMs: number): Promise<Map<string, CancelAction | null>>;
  /** Re-queues runs whose lease expired as their next attempt; fails those that reached `maxAttempts`. */
  sweepExpired(maxAttempts: number): Promise<Leftovers>;
  /**
   * Takes up the runs a stopped predecessor left pending or running (embedded: at start-up, or when the control
   * plane says so); a shared queue has nothing to do (expired leases bring them back).
   */
  recover(maxAttempts: number): Promise<Leftovers>;
  /** Gives the worker's runs back to the queue (shutdown: they run again, from their last checkpoint). */
  handBack(workerId: string, runIds: string[]): Promise<number>;
  /** The worker recorded the run's end: its thread's next run may go. */
  complete(runId: string): Promise<void>;
  /**
   * Asks a run to stop: a pending one is settled at once (interrupted, or deleted for a rollback), a running
   * one gets the request recorded for its worker. Null when the run had already ended.
   */
  requestCancel(
    runId: string,
    action: CancelAction,
  ): Promise<{ was: "pending" | "running"; run: ClaimedRun } | null>;
  /** Whether the run has ended (or is gone). */
  ended(runId: string): Promise<boolean>;
  /** Removes a run's record (a stateless run, once it ended). */
  deleteRun(runId: string): Promise<void>;
  /** Calls `fn` when a run becomes due without a new admission (a delay elapsed, a thread freed). */
  onDue(fn: () => void): void;
}
