// The worker side of runs, one for both backends: takes runs from the queue while it has free slots, executes
// them (executeJob), renews its leases and applies the cancellations recorded on them, takes up runs that a dead
// worker or a stopped process left, and at shutdown lets running runs finish for the grace period, then hands
// the rest back. What differs between backends is the queue's (src/runs/queue.ts), not here.
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { findAssistant } from "../graphs/assistants.js";
import type { Logger } from "../lib/logger.js";
import type { RunStatus } from "../storage/types.js";
import type { Broker } from "../streams/channel.js";
import {
  announceEnd,
  executeJob,
  runContext,
  runFailed,
  type CancelAction,
  type RunDeps,
  type RunGraph,
  type RunResult,
} from "./execute-job.js";
import type { RunKwargs } from "./executor.js";
import { isResumable } from "./kwargs.js";
import type { ClaimedRun, Leftovers, RunQueue } from "./queue.js";
import type { FinishListeners } from "./service.js";

export interface WorkerOptions {
  /** Runs executing at once in this process (`--n-jobs-per-worker`, the official N_JOBS_PER_WORKER). */
  maxConcurrent: number;
  /** How long a worker's hold on a run lasts without a heartbeat (a shared queue). */
  leaseMs: number;
  /** How often an idle worker looks at a shared queue without a wake-up (delayed runs, lost signals). */
  pollMs: number;
  /** A run whose worker died is retried until this many attempts. */
  maxAttempts: number;
  /**
   * At shutdown, how long stopped runs get to settle before their runs are handed back (default: as long as
   * they take; a shared queue must not hand back a run that still executes here).
   */
  settleMs?: number;
}

/** What the end marker of a run's log carries (RunService.result reads it). */
export interface EndPayload {
  status: RunStatus;
  output: unknown;
  error?: unknown;
}

interface Executing {
  run: ClaimedRun;
  controller: AbortController;
  cancelAction?: CancelAction;
  /** The lease was lost or the run handed back: its outcome is not this worker's to record. */
  released: boolean;
  /** Set once the graph stopped: whether this worker records the outcome or lets the run go. */
  outcome?: "recorded" | "released";
  finished: Promise<void>;
}

export class RunWorker {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private executing = new Map<string, Executing>();
  private stopping = false;
  private pumping = false;
  private pumpAgain = false;
  /**
   * Whether the queue may hold runs this worker has not looked for: its last look took as many as it had room for,
   * or a wake-up came while it had no free slot. A shared queue is looked at after a run's end only then, or when
   * the run's thread has a next run waiting (every other new run comes with a wake-up signal, or the poll).
   */
  private backlog = true;
  private timers: NodeJS.Timeout[] = [];

  constructor(
    private deps: RunDeps,
    private queue: RunQueue,
    private broker: Broker,
    private finished: FinishListeners,
    private opts: WorkerOptions,
  ) {}

  private get log(): Logger {
    return this.deps.log;
  }

  /** Listens for wake-ups and cancellations; on a shared queue, polls, renews leases and sweeps expired ones. */
  async start(): Promise<void> {
    await this.broker.onSignal("cancel", (msg) => {
      const { run_id, action } = JSON.parse(msg) as { run_id: string; action: CancelAction };
      const ex = this.executing.get(run_id);
      if (ex) this.abort(ex, action);
    });
    await this.broker.onSignal("wake", () => this.pump());
    this.queue.onDue(() => this.pump());
    if (this.queue.shared) {
      const every = (ms: number, fn: () => Promise<void>) => {
        const t = setInterval(
          () => void fn().catch((e) => this.log.warn(`run queue: ${(e as Error).message}`)),
          ms,
        );
        t.unref();
        this.timers.push(t);
      };
      every(this.opts.pollMs, async () => this.pump());
      every(Math.max(100, Math.floor(this.opts.leaseMs / 3)), () => this.heartbeat());
      every(Math.max(200, Math.floor(this.opts.leaseMs / 2)), async () =>
        this.takeUp(await this.queue.sweepExpired(this.opts.maxAttempts)),
      );
    }
    this.pump();
  }

  /** Takes runs while there are free slots. */
  private pump(): void {
    if (this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.pumpAgain = false;
          while (!this.stopping) {
            const free = this.opts.maxConcurrent - this.executing.size;
            if (free <= 0) {
              this.backlog = true;
              break;
            }
            const claimed = await this.queue.claim(this.workerId, this.opts.leaseMs, free);
            for (const run of claimed) this.begin(run);
            this.backlog = claimed.length === free;
            if (claimed.length < free) break;
          }
        } while (this.pumpAgain && !this.stopping);
      } catch (e) {
        this.log.warn(`run queue: could not take runs: ${(e as Error).message}`);
      } finally {
        this.pumping = false;
      }
    })();
  }

  private begin(run: ClaimedRun): void {
    const ex: Executing = {
      run,
      controller: new AbortController(),
      released: false,
      finished: Promise.resolve(),
    };
    this.executing.set(run.run_id, ex);
    if (run.cancel_action) this.abort(ex, run.cancel_action);
    ex.finished = this.execute(ex).then(
      (nextRunWaits) => this.ended(ex, nextRunWaits),
      (e) => {
        this.log.error({ ...runContext(run), err: e }, "run's worker failed after its end");
        this.ended(ex, undefined);
      },
    );
  }

  /**
   * A run's attempt left this worker: a slot is free. Its entry goes only if it is still this attempt's: a later
   * attempt of the run (this one's lease lost and the run taken up again here) keeps its own.
   */
  private ended(ex: Executing, nextRunWaits: boolean | undefined): void {
    if (this.executing.get(ex.run.run_id) === ex) this.executing.delete(ex.run.run_id);
    if (!this.queue.shared || this.backlog || nextRunWaits !== false) this.pump();
  }

  private abort(ex: Executing, action: CancelAction): void {
    ex.cancelAction ??= action;
    ex.controller.abort();
  }

  /**
   * The graph the run was created for, as its kwargs name it (`config.configurable.graph_id`, which the server
   * sets over the client's; the official server's worker reads it there too): no read of the assistant per run.
   * A record without it (an earlier version's) reads the assistant.
   */
  private async runGraph(run: ClaimedRun): Promise<RunGraph | null> {
    const config = (run.kwargs as { config?: { configurable?: Record<string, unknown> } } | null)?.config;
    const graphId = config?.configurable?.graph_id;
    if (typeof graphId === "string") return { graph_id: graphId, assistant_id: run.assistant_id };
    return findAssistant(this.deps.storage, run.assistant_id);
  }

  /** Executes the run; resolves with whether its thread's next run waits (RunResult.nextRunWaits). */
  private async execute(ex: Executing): Promise<boolean | undefined> {
    const { run } = ex;
    const resumable = isResumable(run.kwargs);
    const channel = this.broker.open(run.run_id);
    // The thread's log stays in memory while the run is in progress (until its end is announced).
    const release = run.thread_id ? this.broker.holdThread(run.thread_id) : undefined;
    try {
      let result: RunResult;
      try {
        const assistant = await this.runGraph(run);
        if (!assistant || !this.deps.graphs.has(assistant.graph_id)) {
          throw new Error(`assistant "${run.assistant_id}" or its graph is not available on this worker`);
        }
        const kwargs = run.kwargs as unknown as RunKwargs;
        // A run taken up again resumes from its last checkpoint rather than replaying its input.
        const resumed: RunKwargs = run.attempt > 1 ? { ...kwargs, input: null, command: null } : kwargs;
        result = await executeJob(this.deps, {
          run,
          assistant,
          kwargs: resumed,
          channel,
          stateless: run.thread_id === null,
          signal: ex.controller.signal,
          attempt: () => run.attempt,
          cancelAction: () => ex.cancelAction,
          stopping: () => {
            ex.outcome = ex.released ? "released" : "recorded";
            return ex.released;
          },
        });
      } catch (e) {
        if (ex.released) return undefined;
        result = await runFailed(this.deps, run, e, run.attempt);
        channel.publish("error", result.error);
      }
      // Handed back or taken over: the run goes on elsewhere; its log stays open for the next attempt.
      if (ex.outcome === "released" || (ex.outcome === undefined && ex.released)) return undefined;
      // A stateless run's record goes with it; failing that, it is logged and left (its result is sent regardless).
      if (run.thread_id === null) {
        await this.queue
          .deleteRun(run.run_id)
          .catch((e) =>
            this.log.warn(runContext(run), `could not delete the stateless run: ${(e as Error).message}`),
          );
      }
      const status = ex.cancelAction ? "interrupted" : result.status;
      const end: EndPayload = { status: status as RunStatus, output: result.output, error: result.error };
      this.broker.finish(run.run_id, resumable, end);
      this.finished.emit(status);
      announceEnd(this.deps, run, result, status);
      // Last: the thread's next run starts after this one's end was announced.
      await this.queue.complete(run.run_id);
      return result.nextRunWaits;
    } finally {
      release?.();
    }
  }

  /** Renews this worker's leases; applies cancellations recorded on them; lets go of runs it lost. */
  private async heartbeat(): Promise<void> {
    const ids = [...this.executing.keys()];
    if (!ids.length) return;
    const held = await this.queue.heartbeat(this.workerId, ids, this.opts.leaseMs);
    for (const id of ids) {
      const ex = this.executing.get(id);
      if (!ex) continue;
      if (!held.has(id)) {
        // Another worker may run it now: stop without recording anything.
        if (ex.outcome || ex.released) continue;
        this.log.warn({ run_id: id }, "run lease lost; stopping it here");
        ex.released = true;
        ex.controller.abort();
        continue;
      }
      const action = held.get(id);
      if (action) this.abort(ex, action);
    }
  }

  /**
   * Runs the queue found left over (expired leases, or a stopped process's runs): the failed ones' logs end with
   * their error; the others are taken as slots allow.
   */
  async takeUp({ requeued, failed }: Leftovers): Promise<void> {
    for (const run of failed) {
      this.log.error(runContext(run, undefined, run.attempt), `run gave up after ${run.attempt} attempts`);
      const error = {
        error: "RunAttemptsExceeded",
        message: `run stopped ${run.attempt} times without finishing`,
      };
      // Its thread was set to error in the same step (RunQueue.sweepExpired / recover).
      this.broker.finish(run.run_id, isResumable(run.kwargs), {
        status: "error",
        output: { __error__: error },
        error,
      });
    }
    if (requeued.length) {
      // Their logs exist from now on: a join waits for their end.
      for (const id of requeued) this.broker.open(id);
      if (this.queue.shared)
        this.log.warn(`re-queued ${requeued.length} run(s) whose worker stopped answering`);
      this.pump();
      await this.broker.signal("wake", "1").catch(() => {});
    }
  }

  /**
   * Stops taking runs; lets running ones finish for up to `graceMs`, then stops them without recording an
   * outcome and hands them back to the queue (they resume from their last checkpoint, here at the next start
   * or on another worker).
   */
  async shutdown(graceMs: number): Promise<void> {
    this.stopping = true;
    for (const t of this.timers) clearInterval(t);
    const all = () => Promise.all([...this.executing.values()].map((e) => e.finished));
    const within = async (ms: number | undefined, p: Promise<unknown>) => {
      if (ms === undefined) return p;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([p, new Promise((r) => (timer = setTimeout(r, ms)))]);
      clearTimeout(timer);
    };
    if (this.executing.size && graceMs > 0) {
      this.log.info(
        `stopping: letting ${this.executing.size} running run(s) finish, for up to ${Math.round(graceMs / 1000)} s`,
      );
      await within(graceMs, all());
    }
    const left = [...this.executing.values()];
    for (const ex of left) {
      ex.released = true;
      ex.controller.abort();
    }
    await within(this.opts.settleMs, all());
    const n = await this.queue.handBack(
      this.workerId,
      left.map((e) => e.run.run_id),
    );
    if (n) {
      this.log.info(`handed ${n} unfinished run(s) back to the queue`);
      await this.broker.signal("wake", "1").catch(() => {});
    }
  }
}
