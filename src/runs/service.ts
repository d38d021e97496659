// What the API and the schedulers need of runs, whichever backend executes them: the embedded manager (one
// process, in-memory queue) or the scale-out one (PostgreSQL queue, Redis logs, many workers).
import type { RunBody, RunCreateStatelessT } from "./schemas.js";
import type { Json, Run, Thread } from "../storage/types.js";
import type { EventSource } from "../streams/channel.js";
import type { CancelAction, RunResult } from "./execute-job.js";
import type { Logger } from "../lib/logger.js";

export interface StartedRun {
  run: Run;
  /** The run's events, from its first. */
  channel: EventSource;
  /** Resolves with the outcome when the run ends (never rejects). */
  done: Promise<RunResult>;
  /** Aborts the run (on_disconnect: cancel). */
  cancel: () => void;
}

export interface RunService {
  /**
   * Creates a run on a thread; it starts now, after the thread's current run, or instead of it. `known`: the
   * thread as the caller just read it (not read again); absent, it is read here.
   */
  createStateful(threadId: string, body: RunBody, owner?: Json, known?: Thread): Promise<StartedRun>;
  /** A run with no thread (or on a new kept thread with on_completion "keep"). */
  createStateless(body: RunCreateStatelessT, owner?: Json): Promise<StartedRun>;
  /** Cancels a run of a thread; with `wait`, resolves once it has stopped. Unknown runs are 404. */
  cancel(threadId: string, runId: string, opts: { wait: boolean; action: CancelAction }): Promise<void>;
  /** Cancels runs by id, or every run of a status (optionally of one thread); returns how many. */
  cancelMany(q: {
    thread_id?: string;
    run_ids?: string[];
    status?: "pending" | "running" | "all";
    action: CancelAction;
  }): Promise<number>;
  /** Waits for a run and returns its final values (or `{__error__}`). */
  join(threadId: string, runId: string): Promise<unknown>;
  /** A run's log for joining its stream, if it may still hold events. */
  runLog(run: Run): EventSource | undefined;
  /** True while a run of this thread is executing or next in line. */
  isBusy(threadId: string): Promise<boolean>;
  /** Queue depth and runs executing, for metrics. */
  stats(): Promise<{ pending: number; running: number }>;
  /** Subscribes to each run's final status (metrics); returns the unsubscribe function. */
  onFinished(listener: FinishListener): () => void;
  /**
   * Resumes the runs a stopped predecessor left unfinished; returns how many. The embedded backend does it
   * when told (start-up, or the control plane's switch); on the scale-out one expired leases do it by
   * themselves, and this returns 0.
   */
  recover(): Promise<number>;
  /** Stops taking runs; lets running ones finish within the grace period, then stops them. */
  shutdown(graceMs?: number): Promise<void>;
}

export type FinishListener = (status: string) => void;

/** The subscribers to runs' final statuses; one that throws disturbs neither the run nor the others. */
export class FinishListeners {
  private listeners = new Set<FinishListener>();

  constructor(private log: Logger) {}

  add(listener: FinishListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(status: string): void {
    for (const listener of this.listeners) {
      try {
        listener(status);
      } catch (e) {
        this.log.error({ err: e }, "run finish listener failed");
      }
    }
  }
}
