// Run lifecycle: creation with multitask strategies, one run at a time per thread, a bounded worker pool,
// cancellation (interrupt or rollback), join, retries after a crash, and the events of thread streams.
import { randomUUID } from "node:crypto";
import { findAssistant } from "../graphs/assistants.js";
import type { GraphRegistry } from "../graphs/registry.js";
import { notFound } from "../lib/errors.js";
import type { RunCreateStatefulT, RunCreateStatelessT } from "./schemas.js";
import type { Logger } from "../lib/logger.js";
import type { Assistant, Json, Run, RunStatus, Storage, Thread } from "../storage/types.js";
import type { Broker, EventSink, EventSource } from "../streams/channel.js";
import { FinishListeners, type FinishListener, type RunService, type StartedRun } from "./service.js";
import type { RunKwargs } from "./executor.js";
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
import { buildKwargs, isResumable, streamsValues } from "./kwargs.js";
import { toPlain } from "../lib/serde.js";
import { LocalRunQueue } from "./local-queue.js";
import { admitRun, checkRunBody, keptRun, runAssistant, statefulRunTarget } from "./create.js";
import type { GraphRunner } from "./graph-runner.js";
import type { AddressPolicy } from "./net-policy.js";

export type { StartedRun } from "./service.js";

export type { CancelAction, RunResult } from "./execute-job.js";

interface Job {
  run: Run;
  assistant: Assistant;
  kwargs: RunKwargs;
  channel: EventSink & EventSource;
  controller: AbortController;
  attempt: number;
  resolve: (r: RunResult) => void;
  done: Promise<RunResult>;
  stateless: boolean;
  resumable: boolean;
  /** Set when the run is cancelled: how to treat its progress. */
  cancelAction?: CancelAction;
  /** Started executing (a queued job has not). */
  started: boolean;
}

export interface RunManagerOptions {
  /** Runs executing at once in this process (`--n-jobs-per-worker`). */
  maxConcurrent: number;
  /** A run found in flight after a crash is retried until this many attempts. */
  maxAttempts: number;
  /** What webhooks may reach; default the process's settings (HANGAR_WEBHOOK_*). */
  webhooks?: AddressPolicy;
  /** LANGGRAPH_API_URL: the deployment's public URL, recorded in each run's metadata. */
  apiUrl?: string;
  /** Where the graphs execute (graph threads); default this thread. */
  runner?: GraphRunner;
  /** BG_JOB_TIMEOUT_SECS in ms: an attempt running longer is stopped and ends `timeout`. */
  runTimeoutMs?: number;
}

export class RunManager implements RunService {
  /** Live jobs (queued or executing) by run id. */
  private jobs = new Map<string, Job>();
  private queue: LocalRunQueue<Job>;
  private shuttingDown = false;
  private finished: FinishListeners;
  private readonly deps: RunDeps;

  constructor(
    private storage: Storage,
    private graphs: GraphRegistry,
    private broker: Broker,
    private log: Logger,
    private opts: RunManagerOptions = { maxConcurrent: 10, maxAttempts: 3 },
  ) {
    this.deps = {
      ...runDeps(storage, graphs, broker, log, opts.webhooks, opts.apiUrl),
      runner: opts.runner,
      runTimeoutMs: opts.runTimeoutMs,
    };
    this.queue = new LocalRunQueue(storage.runs, opts.maxConcurrent, (job) => this.execute(job));
    this.finished = new FinishListeners(log);
  }

  /** Creates a run on a thread; it starts now, after the thread's current run, or instead of it. */
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
    const { run, kwargs, delayed } = await admitRun(this.queue, this.storage, thread, body, assistant);
    // Debug here: the run's "run started" follows at once unless it waits (the scale-out API logs it at info).
    this.log.debug(runContext(run, assistant), "run created");
    const job = this.newJob(run, assistant, kwargs, false, 1, body.stream_resumable);
    const current = this.queue.holder(threadId);
    if (strategy === "interrupt" || strategy === "rollback") {
      // Runs waiting for their after_seconds are cancelled as the running one is (as on the official server).
      for (const id of delayed) {
        const waiting = this.jobs.get(id);
        if (waiting) this.abort(waiting, strategy);
      }
      if (current) {
        // The new run goes first in line; the running one stops at its next step.
        this.queue.addFirst(job);
        this.abort(current, strategy);
        return this.started(job);
      }
    }
    this.queue.add(job, body.after_seconds ?? 0);
    return this.started(job);
  }

  /**
   * A run with no thread. With on_completion "delete" (the default) nothing is persisted (no checkpointer,
   * no run record); with "keep" it runs on a new thread that stays, so it can be joined and read later.
   */
  async createStateless(body: RunCreateStatelessT, owner: Json = {}): Promise<StartedRun> {
    await checkRunBody(body, this.deps.webhooks);
    const assistant = await runAssistant(this.storage, this.graphs, body.assistant_id);
    if (body.on_completion === "keep") {
      const kept = await keptRun(this.storage, assistant, owner, body);
      return this.createStateful(kept.threadId, kept.body);
    }
    const runId = randomUUID();
    const kwargs = buildKwargs(body, assistant, runId, null);
    const ts = new Date().toISOString();
    const run: Run = {
      run_id: runId,
      thread_id: null,
      assistant_id: assistant.assistant_id,
      created_at: ts,
      updated_at: ts,
      status: "pending",
      metadata: kwargs.config.metadata as Json,
      kwargs: kwargs as unknown as Json,
      multitask_strategy: "reject",
    };
    this.log.debug(runContext(run, assistant), "run created");
    const job = this.newJob(run, assistant, kwargs, true, 1, body.stream_resumable);
    this.queue.add(job, body.after_seconds ?? 0);
    return this.started(job);
  }

  private newJob(
    run: Run,
    assistant: Assistant,
    kwargs: RunKwargs,
    stateless: boolean,
    attempt: number,
    resumable: boolean,
  ): Job {
    let resolve!: (r: RunResult) => void;
    const done = new Promise<RunResult>((r) => (resolve = r));
    const job: Job = {
      run,
      assistant,
      kwargs,
      channel: this.broker.open(run.run_id),
      controller: new AbortController(),
      attempt,
      resolve,
      done,
      stateless,
      resumable,
      started: false,
    };
    this.jobs.set(run.run_id, job);
    return job;
  }

  private started(job: Job): StartedRun {
    return { run: job.run, channel: job.channel, done: job.done, cancel: () => this.abort(job, "interrupt") };
  }

  private async execute(job: Job): Promise<void> {
    const { run } = job;
    // The thread's log stays in memory while the run is in progress (until its end is announced).
    const release = run.thread_id ? this.broker.holdThread(run.thread_id) : undefined;
    let result: RunResult;
    try {
      result = await this.runJob(job);
    } catch (e) {
      result = await runFailed(this.deps, run, e);
      job.channel.publish("error", result.error);
    }
    this.broker.finish(run.run_id, job.resumable);
    this.jobs.delete(run.run_id);
    const status = job.cancelAction ? "interrupted" : result.status;
    this.finished.emit(status);
    announceEnd(this.deps, run, result, status);
    release?.();
    job.resolve(result);
    if (run.thread_id) this.queue.release(run.thread_id);
  }

  /** A job cancelled while queued: it never starts; its thread is no longer busy if nothing else waits. */
  private async finishUnstarted(job: Job): Promise<RunResult> {
    const threadId = job.run.thread_id;
    if (threadId) {
      if (job.cancelAction === "rollback") await this.storage.runs.delete(job.run.run_id);
      else await this.storage.runs.setStatus(job.run.run_id, "interrupted");
      const others = [...this.jobs.values()].some((j) => j !== job && j.run.thread_id === threadId);
      if (!others) await settleThread(this.deps, threadId);
    }
    return { status: "interrupted", values: undefined, output: null };
  }

  private runJob(job: Job): Promise<RunResult> {
    job.started = true;
    return executeJob(this.deps, {
      run: job.run,
      assistant: job.assistant,
      kwargs: job.kwargs,
      channel: job.channel,
      stateless: job.stateless,
      signal: job.controller.signal,
      start: async () => (job.attempt = await this.storage.runs.start(job.run.run_id)),
      attempt: () => job.attempt,
      cancelAction: () => job.cancelAction,
      stopping: () => this.shuttingDown,
    });
  }

  /** Stops a job: a queued one never starts; a running one stops at its next step. */
  private abort(job: Job, action: CancelAction): void {
    job.cancelAction ??= action;
    if (job.started) {
      job.controller.abort();
      return;
    }
    const threadId = job.run.thread_id;
    const { heldThread } = this.queue.remove(job);
    void this.settleUnstarted(job).then(() => {
      if (heldThread && threadId) this.queue.release(threadId);
    });
  }

  /** Settles a job cancelled before it started: it never runs. */
  private async settleUnstarted(job: Job): Promise<void> {
    this.jobs.delete(job.run.run_id);
    const result = await this.finishUnstarted(job).catch((): RunResult => ({
      status: "interrupted",
      values: undefined,
      output: null,
    }));
    this.broker.finish(job.run.run_id, job.resumable);
    job.resolve(result);
  }

  /**
   * Cancels a run of a thread; with `wait`, resolves once it has stopped. Cancelling a run that already
   * ended does nothing (cancel is idempotent); an unknown run is 404.
   */
  async cancel(
    threadId: string,
    runId: string,
    opts: { wait: boolean; action: CancelAction },
  ): Promise<void> {
    const job = this.jobs.get(runId);
    if (!job || job.run.thread_id !== threadId) {
      if (!(await this.storage.runs.get(threadId, runId)))
        throw notFound(`Run "${runId}" not found in thread "${threadId}"`);
      return;
    }
    this.abort(job, opts.action);
    if (opts.wait) await job.done;
  }

  /** Cancels runs by id, or every run of a status (optionally of one thread); returns how many. */
  async cancelMany(q: {
    thread_id?: string;
    run_ids?: string[];
    status?: "pending" | "running" | "all";
    action: CancelAction;
  }): Promise<number> {
    let ids: { run_id: string; thread_id: string | null }[];
    if (q.run_ids?.length) {
      ids = q.run_ids.map((run_id) => ({ run_id, thread_id: this.jobs.get(run_id)?.run.thread_id ?? null }));
    } else {
      const statuses: RunStatus[] =
        q.status === "pending" ? ["pending"] : q.status === "running" ? ["running"] : ["pending", "running"];
      ids = [...this.jobs.values()]
        .filter((j) => statuses.includes(j.started ? "running" : "pending"))
        .filter((j) => !q.thread_id || j.run.thread_id === q.thread_id)
        .map((j) => ({ run_id: j.run.run_id, thread_id: j.run.thread_id }));
    }
    let n = 0;
    for (const { run_id } of ids) {
      const job = this.jobs.get(run_id);
      if (!job || (q.thread_id && job.run.thread_id !== q.thread_id)) continue;
      this.abort(job, q.action);
      n++;
    }
    return n;
  }

  /** Waits for a run and returns its final values (or `{__error__}`); a finished run answers at once. */
  async join(threadId: string, runId: string): Promise<unknown> {
    const job = this.jobs.get(runId);
    if (job && job.run.thread_id === threadId) {
      const r = await job.done;
      if (r.error) return { __error__: r.error };
      // As officially: the last `values` event of a run that streams them (a graph's output may differ from its
      // state), else the thread's values.
      if (streamsValues(job.run.kwargs) && r.output != null) return toPlain(r.output);
    } else {
      const run = await this.storage.runs.get(threadId, runId);
      if (!run) throw notFound(`Run "${runId}" not found in thread "${threadId}"`);
      if (run.status === "error" || run.status === "timeout") {
        const t = await this.storage.threads.get(threadId);
        return { __error__: t?.error ?? { error: "Error", message: "run failed" } };
      }
    }
    const thread = await this.storage.threads.get(threadId);
    return thread?.values ?? {};
  }

  runLog(run: Run): EventSource | undefined {
    return this.jobs.get(run.run_id)?.channel ?? this.broker.get(run.run_id);
  }

  stats(): Promise<{ pending: number; running: number }> {
    return this.queue.counts();
  }

  onFinished(listener: FinishListener): () => void {
    return this.finished.add(listener);
  }

  async isBusy(threadId: string): Promise<boolean> {
    return (await this.queue.current(threadId)) !== undefined;
  }

  /** Re-queues runs left pending or running by a previous process (embedded restart). */
  async recover(): Promise<number> {
    const runs = await this.storage.runs.inFlight();
    for (const run of runs) {
      // Runs this process already has (queued or executing) are not someone else's leftovers.
      if (!run.thread_id || this.jobs.has(run.run_id)) continue;
      const assistant = await findAssistant(this.storage, run.assistant_id);
      if (!assistant || !this.graphs.has(assistant.graph_id)) {
        await this.storage.runs.setStatus(run.run_id, "error");
        continue;
      }
      if (run.status === "running" && run.attempt >= this.opts.maxAttempts) {
        this.log.error(runContext(run, undefined, run.attempt), `run gave up after ${run.attempt} attempts`);
        await this.storage.runs.setStatus(run.run_id, "error");
        await this.storage.threads.setState(run.thread_id, {
          status: "error",
          error: {
            error: "RunAttemptsExceeded",
            message: `run stopped ${run.attempt} times without finishing`,
          },
        });
        continue;
      }
      const kwargs = run.kwargs as unknown as RunKwargs;
      // A run that had started resumes from its last checkpoint rather than replaying its input.
      const resumed: RunKwargs =
        run.status === "running" ? { ...kwargs, input: null, command: null } : kwargs;
      const resumable = isResumable(run.kwargs);
      // A run still waiting for its after_seconds waits out what is left of it.
      const wait = run.not_before ? Math.max(0, (Date.parse(run.not_before) - Date.now()) / 1000) : 0;
      this.queue.add(this.newJob(run, assistant, resumed, false, run.attempt, resumable), wait);
    }
    return runs.length;
  }

  /**
   * Shutdown: aborts every live run without recording an outcome (the next start resumes them), and waits
   * up to `graceMs` for them to settle.
   */
  async shutdown(graceMs = 2000): Promise<void> {
    this.shuttingDown = true;
    this.queue.stop();
    const pending = [...this.jobs.values()].filter((j) => j.started).map((j) => j.done);
    for (const job of this.jobs.values()) job.controller.abort();
    await Promise.race([Promise.all(pending), new Promise((r) => setTimeout(r, graceMs).unref())]);
  }
}
