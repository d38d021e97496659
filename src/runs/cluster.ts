// Runs on the scale-out backend: any API process creates runs in the PostgreSQL queue and reads their logs
// from Redis; worker processes take runs from the queue under a lease, execute them, and publish their
// events. A process can be both (serve --mode all).
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { findAssistant } from "../graphs/assistants.js";
import type { GraphRegistry } from "../graphs/registry.js";
import { notFound } from "../lib/errors.js";
import type { RunCreateStatefulT, RunCreateStatelessT } from "./schemas.js";
import type { Logger } from "../lib/logger.js";
import type { Json, Run, RunStatus, Storage, Thread } from "../storage/types.js";
import type { ClusterBroker, EventSource } from "../streams/channel.js";
import {
  announceEnd,
  executeJob,
  runContext,
  runFailed,
  settleThread,
  type CancelAction,
  runDeps,
  type RunDeps,
  type RunResult,
} from "./execute-job.js";
import type { RunKwargs } from "./executor.js";
import type { ClaimedRun, LeasedRunQueue } from "./queue.js";
import { FinishListeners, type FinishListener, type RunService, type StartedRun } from "./service.js";
import { admitRun, checkRunBody, keptRun, recordRun, runAssistant, statefulRunTarget } from "./create.js";
import type { GraphRunner } from "./graph-runner.js";
import type { AddressPolicy } from "./net-policy.js";
import { isResumable, streamsValues } from "./kwargs.js";
import { toPlain } from "../lib/serde.js";

export interface ClusterOptions {
  /** This process takes runs from the queue (mode worker or all). */
  worker: boolean;
  /** Runs executing at once in this process (`--n-jobs-per-worker`). */
  maxConcurrent: number;
  /** A run whose worker died is retried until this many attempts. */
  maxAttempts: number;
  /** How long a worker's hold on a run lasts without a heartbeat. */
  leaseMs: number;
  /** How often an idle worker looks at the queue without a wake-up (delayed runs, lost signals). */
  pollMs: number;
  /** What webhooks may reach; default the process's settings (HANGAR_WEBHOOK_*). */
  webhooks?: AddressPolicy;
  /** LANGGRAPH_API_URL: the deployment's public URL, recorded in each run's metadata. */
  apiUrl?: string;
  /** Where the graphs execute (graph threads); default this thread. */
  runner?: GraphRunner;
  /** BG_JOB_TIMEOUT_SECS in ms: an attempt running longer is stopped and ends `timeout`. */
  runTimeoutMs?: number;
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

/** What the end marker of a run's log carries. */
interface EndPayload {
  status: RunStatus;
  output: unknown;
  error?: unknown;
}

const FINAL = (s: RunStatus) => s !== "pending" && s !== "running";

export class ClusterRunManager implements RunService {
  readonly workerId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private executing = new Map<string, Executing>();
  private stopping = false;
  private pumping = false;
  private pumpAgain = false;
  private timers: NodeJS.Timeout[] = [];
  private finished: FinishListeners;
  private readonly deps: RunDeps;

  constructor(
    private storage: Storage,
    private queue: LeasedRunQueue,
    private graphs: GraphRegistry,
    private broker: ClusterBroker,
    private log: Logger,
    private opts: ClusterOptions,
  ) {
    this.finished = new FinishListeners(log);
    this.deps = {
      ...runDeps(storage, graphs, broker, log, opts.webhooks, opts.apiUrl),
      runner: opts.runner,
      runTimeoutMs: opts.runTimeoutMs,
    };
  }

  /** Subscribes to the signals; a worker starts taking runs, renewing leases and sweeping expired ones. */
  async start(): Promise<void> {
    await this.broker.onSignal("cancel", (msg) => {
      const { run_id, action } = JSON.parse(msg) as { run_id: string; action: CancelAction };
      const ex = this.executing.get(run_id);
      if (ex) this.abort(ex, action);
    });
    if (!this.opts.worker) return;
    await this.broker.onSignal("wake", () => this.pump());
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
    every(Math.max(200, Math.floor(this.opts.leaseMs / 2)), () => this.sweep());
    this.pump();
  }

  // --- API side ---

  async createStateful(
    threadId: string,
    body: RunCreateStatefulT,
    owner: Json = {},
    known?: Thread,
  ): Promise<StartedRun> {
    const { assistant, thread } = await statefulRunTarget(this.storage, this.graphs, this.deps.webhooks, {
      threadId,
      body,
      owner,
      known,
    });
    const strategy = body.multitask_strategy;
    // Admitted first in line under interrupt/rollback (with after_seconds: not before then).
    const { run, current, delayed } = await admitRun(this.queue, this.storage, thread, body, assistant);
    this.log.info(runContext(run, assistant), "run created");
    if (strategy === "interrupt" || strategy === "rollback") {
      // The running run, and those waiting for their after_seconds (as on the official server).
      for (const id of [...(current ? [current] : []), ...delayed]) await this.requestCancel(id, strategy);
    }
    await this.wake();
    return this.started(run);
  }

  async createStateless(body: RunCreateStatelessT, owner: Json = {}): Promise<StartedRun> {
    await checkRunBody(body, this.deps.webhooks);
    const assistant = await runAssistant(this.storage, this.graphs, body.assistant_id);
    if (body.on_completion === "keep") {
      const kept = await keptRun(this.storage, assistant, owner, body);
      return this.createStateful(kept.threadId, kept.body);
    }
    // The run is recorded (with after_seconds: not before then) so a worker can take it; the worker deletes
    // the record when it ends.
    const run = await recordRun(this.storage, body, assistant);
    this.log.info(runContext(run, assistant), "run created");
    await this.wake();
    return this.started(run);
  }

  private async wake(): Promise<void> {
    // Only a hint: workers also poll the queue every pollMs, so a lost wake-up delays the run, never loses it.
    await this.broker.signal("wake", "1").catch(() => {});
  }

  private started(run: Run): StartedRun {
    let done: Promise<RunResult> | undefined;
    const result = () => (done ??= this.result(run));
    return {
      run,
      channel: this.broker.get(run.run_id),
      // Waiting for the end reads the run's log: only done when someone asks.
      get done() {
        return result();
      },
      cancel: () => {
        void this.requestCancel(run.run_id, "interrupt").catch(() => {});
      },
    };
  }

  /** Waits for a run's end marker; if it was lost (Redis restarted), reads the outcome from the database. */
  private async result(run: Run): Promise<RunResult> {
    const end = (await this.broker.result(run.run_id).catch(() => undefined)) as EndPayload | undefined;
    if (end)
      return {
        status: end.status as RunResult["status"],
        values: undefined,
        output: end.output,
        error: end.error as RunResult["error"],
      };
    const row = run.thread_id ? await this.storage.runs.get(run.thread_id, run.run_id) : null;
    const thread = run.thread_id ? await this.storage.threads.get(run.thread_id) : null;
    const status = (row?.status ?? "error") as RunResult["status"];
    const output =
      thread?.error && (status === "error" || status === "timeout")
        ? { __error__: thread.error }
        : (thread?.values ?? null);
    return { status, values: undefined, output };
  }

  /** Records a cancellation; a pending run is settled here, a running one is signalled to its worker. */
  private async requestCancel(runId: string, action: CancelAction): Promise<boolean> {
    const r = await this.queue.requestCancel(runId, action);
    if (!r) return false;
    if (r.was === "pending") {
      const resumable = isResumable(r.run.kwargs);
      const payload: EndPayload = { status: "interrupted", output: null };
      this.broker.finish(runId, resumable, payload);
      this.finished.emit("interrupted");
      // The thread is no longer busy if no other run of it waits.
      const threadId = r.run.thread_id;
      if (threadId && !(await this.queue.active(threadId)).length) await settleThread(this.deps, threadId);
      return true;
    }
    await this.broker.signal("cancel", JSON.stringify({ run_id: runId, action }));
    return true;
  }

  async cancel(
    threadId: string,
    runId: string,
    opts: { wait: boolean; action: CancelAction },
  ): Promise<void> {
    const run = await this.storage.runs.get(threadId, runId);
    if (!run) throw notFound(`Run "${runId}" not found in thread "${threadId}"`);
    if (FINAL(run.status)) return;
    await this.requestCancel(runId, opts.action);
    if (opts.wait) await this.result(run);
  }

  async cancelMany(q: {
    thread_id?: string;
    run_ids?: string[];
    status?: "pending" | "running" | "all";
    action: CancelAction;
  }): Promise<number> {
    let ids: string[];
    if (q.run_ids?.length) ids = q.run_ids;
    else {
      const statuses: RunStatus[] =
        q.status === "pending" ? ["pending"] : q.status === "running" ? ["running"] : ["pending", "running"];
      ids = (await this.storage.runs.idsByStatus(q.thread_id ?? null, statuses)).map((r) => r.run_id);
    }
    let n = 0;
    for (const id of ids) if (await this.requestCancel(id, q.action)) n++;
    return n;
  }

  async join(threadId: string, runId: string): Promise<unknown> {
    const run = await this.storage.runs.get(threadId, runId);
    if (!run) throw notFound(`Run "${runId}" not found in thread "${threadId}"`);
    if (!FINAL(run.status)) {
      const r = await this.result(run);
      if (r.error) return { __error__: r.error };
      // As officially: the last `values` event of a run that streams them, else the thread's values.
      if (streamsValues(run.kwargs) && r.output != null) return toPlain(r.output);
    } else if (run.status === "error" || run.status === "timeout") {
      const t = await this.storage.threads.get(threadId);
      return { __error__: t?.error ?? { error: "Error", message: "run failed" } };
    }
    const thread = await this.storage.threads.get(threadId);
    return thread?.values ?? {};
  }

  runLog(run: Run): EventSource | undefined {
    const resumable = isResumable(run.kwargs);
    if (FINAL(run.status) && !resumable) return undefined;
    return this.broker.get(run.run_id);
  }

  async isBusy(threadId: string): Promise<boolean> {
    return (await this.queue.current(threadId)) !== undefined;
  }

  stats(): Promise<{ pending: number; running: number }> {
    return this.queue.counts();
  }

  onFinished(listener: FinishListener): () => void {
    return this.finished.add(listener);
  }

  /** Nothing to do: runs of a stopped worker come back to the queue when their lease expires. */
  async recover(): Promise<number> {
    return 0;
  }

  // --- worker side ---

  /** Takes runs while there are free slots. */
  private pump(): void {
    if (!this.opts.worker || this.stopping) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    void (async () => {
      try {
        do {
          this.pumpAgain = false;
          while (!this.stopping && this.executing.size < this.opts.maxConcurrent) {
            const free = this.opts.maxConcurrent - this.executing.size;
            const claimed = await this.queue.claim(this.workerId, this.opts.leaseMs, free);
            for (const run of claimed) this.begin(run);
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
    ex.finished = this.execute(ex).finally(() => {
      this.executing.delete(run.run_id);
      this.pump();
    });
  }

  private abort(ex: Executing, action: CancelAction): void {
    ex.cancelAction ??= action;
    ex.controller.abort();
  }

  private async execute(ex: Executing): Promise<void> {
    const { run } = ex;
    const resumable = isResumable(run.kwargs);
    const channel = this.broker.open(run.run_id);
    let result: RunResult;
    try {
      const assistant = await findAssistant(this.storage, run.assistant_id);
      if (!assistant || !this.graphs.has(assistant.graph_id)) {
        throw new Error(`assistant "${run.assistant_id}" or its graph is not available on this worker`);
      }
      const kwargs = run.kwargs as unknown as RunKwargs;
      // A run that was started before resumes from its last checkpoint rather than replaying its input.
      const resumed: RunKwargs = run.attempt > 1 ? { ...kwargs, input: null, command: null } : kwargs;
      result = await executeJob(this.deps, {
        run,
        assistant,
        kwargs: resumed,
        channel,
        stateless: run.thread_id === null,
        signal: ex.controller.signal,
        start: async () => run.attempt,
        attempt: () => run.attempt,
        cancelAction: () => ex.cancelAction,
        stopping: () => {
          ex.outcome = ex.released ? "released" : "recorded";
          return ex.released;
        },
      });
    } catch (e) {
      if (ex.released) return;
      result = await runFailed(this.deps, run, e, run.attempt);
      channel.publish("error", result.error);
    }
    // Handed back or taken over: the run goes on elsewhere; its log stays open for the next attempt.
    if (ex.outcome === "released" || (ex.outcome === undefined && ex.released)) return;
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

  /** Re-queues runs of dead workers; fails those that ran out of attempts. */
  private async sweep(): Promise<void> {
    const { requeued, failed } = await this.queue.sweepExpired(this.opts.maxAttempts);
    for (const run of failed) {
      this.log.error(runContext(run, undefined, run.attempt), `run gave up after ${run.attempt} attempts`);
      const error = {
        error: "RunAttemptsExceeded",
        message: `run stopped ${run.attempt} times without finishing`,
      };
      // Its thread was set to error in the same statement (LeasedRunQueue.sweepExpired).
      const resumable = isResumable(run.kwargs);
      this.broker.finish(run.run_id, resumable, { status: "error", output: { __error__: error }, error });
    }
    if (requeued.length) {
      this.log.warn(`re-queued ${requeued.length} run(s) whose worker stopped answering`);
      await this.wake();
    }
  }

  /**
   * Stops taking runs; lets running ones finish for up to `graceMs`, then stops them and hands them back to
   * the queue (another worker resumes them from their last checkpoint).
   */
  async shutdown(graceMs = 20_000): Promise<void> {
    this.stopping = true;
    const all = () => Promise.all([...this.executing.values()].map((e) => e.finished));
    if (this.executing.size) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([all(), new Promise((r) => (timer = setTimeout(r, graceMs)))]);
      clearTimeout(timer);
    }
    const left = [...this.executing.values()];
    for (const ex of left) {
      ex.released = true;
      ex.controller.abort();
    }
    await all();
    const n = await this.queue.handBack(
      this.workerId,
      left.map((e) => e.run.run_id),
    );
    if (n) {
      this.log.info(`handed ${n} unfinished run(s) back to the queue`);
      await this.wake();
    }
    for (const t of this.timers) clearInterval(t);
  }
}
