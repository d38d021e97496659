// The run service, one for both backends: creates runs (multitask strategies, delays, stateless runs), cancels
// them, joins them, reports the queue; a worker in the same process (RunWorker) executes them, or workers in
// other processes do (scale-out). A run goes one way: API -> this service -> queue -> worker -> storage, and its
// events worker -> broker -> API (docs/runs.md draws it).
import type { GraphRegistry } from "../graphs/registry.js";
import { notFound } from "../lib/errors.js";
import type { Logger } from "../lib/logger.js";
import type { Json, Run, RunStatus, Storage, Thread } from "../storage/types.js";
import type { Broker, EventSource } from "../streams/channel.js";
import { admitRun, checkRunBody, keptRun, newRun, runAssistant, statefulRunTarget } from "./create.js";
import {
  runContext,
  runDeps,
  settleThread,
  type CancelAction,
  type RunDeps,
  type RunResult,
} from "./execute-job.js";
import type { GraphRunner } from "./graph-runner.js";
import { isResumable, streamsValues } from "./kwargs.js";
import type { AddressPolicy } from "./net-policy.js";
import type { RunQueue } from "./queue.js";
import type { RunBody, RunCreateStatelessT } from "./schemas.js";
import { FinishListeners, type FinishListener, type RunService, type StartedRun } from "./service.js";
import { RunWorker, type EndPayload, type WorkerOptions } from "./worker.js";

export type { CancelAction, RunResult } from "./execute-job.js";
export type { StartedRun } from "./service.js";

export interface RunEngineOptions extends WorkerOptions {
  /** This process executes runs (embedded: always; scale-out: mode worker or all). */
  worker: boolean;
  /** At shutdown, how long running runs may go on before they are stopped and handed back. */
  graceMs: number;
  /** What webhooks may reach; default the process's settings (HANGAR_WEBHOOK_*). */
  webhooks?: AddressPolicy;
  /** LANGGRAPH_API_URL: the deployment's public URL, recorded in each run's metadata. */
  apiUrl?: string;
  /** Where the graphs execute (graph threads); default this thread. */
  runner?: GraphRunner;
  /** BG_JOB_TIMEOUT_SECS in ms: an attempt running longer is stopped and ends `timeout`. */
  runTimeoutMs?: number;
}

const FINAL = (s: RunStatus) => s !== "pending" && s !== "running";

export class RunEngine implements RunService {
  private finished: FinishListeners;
  private readonly deps: RunDeps;
  private readonly worker: RunWorker | undefined;

  constructor(
    private storage: Storage,
    private queue: RunQueue,
    graphs: GraphRegistry,
    private broker: Broker,
    private log: Logger,
    private opts: RunEngineOptions,
  ) {
    this.finished = new FinishListeners(log);
    this.deps = {
      ...runDeps(storage, graphs, broker, log, opts.webhooks, opts.apiUrl),
      runner: opts.runner,
      runTimeoutMs: opts.runTimeoutMs,
    };
    this.worker = opts.worker ? new RunWorker(this.deps, queue, broker, this.finished, opts) : undefined;
  }

  /** Starts this process's worker, if it has one (it takes runs from the queue from now on). */
  async start(): Promise<void> {
    await this.worker?.start();
  }

  async createStateful(
    threadId: string,
    body: RunBody,
    owner: Json = {},
    known?: Thread,
  ): Promise<StartedRun> {
    const { assistant, thread } = await statefulRunTarget(
      this.storage,
      this.deps.graphs,
      this.deps.webhooks,
      {
        threadId,
        body,
        owner,
        known,
      },
    );
    const strategy = body.multitask_strategy;
    // Admitted first in line under interrupt/rollback (with after_seconds: not before then).
    const { run, current, delayed } = await admitRun(this.queue, thread, body, assistant);
    this.created(run, assistant.graph_id);
    if (strategy === "interrupt" || strategy === "rollback") {
      // The running run, and those waiting for their after_seconds (as on the official server).
      for (const id of [...(current ? [current] : []), ...delayed]) await this.requestCancel(id, strategy);
    }
    return this.started(run);
  }

  /**
   * A run with no thread. With on_completion "delete" (the default) its record goes when it ends (the embedded
   * queue keeps none); with "keep" it runs on a new thread that stays, so it can be joined and read later.
   */
  async createStateless(body: RunCreateStatelessT, owner: Json = {}): Promise<StartedRun> {
    await checkRunBody(body, this.deps.webhooks);
    const assistant = await runAssistant(this.storage, this.deps.graphs, body.assistant_id);
    if (body.on_completion === "keep") {
      const kept = await keptRun(this.storage, assistant, owner, body);
      return this.createStateful(kept.threadId, kept.body);
    }
    const run = await this.queue.enqueue(newRun(null, body, assistant, "reject").input);
    this.created(run, assistant.graph_id);
    return this.started(run);
  }

  /** Logs the new run and wakes the workers. */
  private created(run: Run, graphId: string): void {
    const context = { ...runContext(run), graph_id: graphId };
    // Debug where a worker of this process says "run started" at once; info for an API-only process.
    if (this.worker) this.log.debug(context, "run created");
    else this.log.info(context, "run created");
    // Only a hint: workers of a shared queue also poll it, so a lost wake-up delays the run, never loses it. An
    // in-process queue tells its worker itself (onDue) when a run is ready.
    if (this.queue.shared) void this.broker.signal("wake", "1").catch(() => {});
  }

  private started(run: Run): StartedRun {
    let done: Promise<RunResult> | undefined;
    const result = () => (done ??= this.result(run));
    return {
      run,
      channel: this.broker.open(run.run_id),
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
      const payload: EndPayload = { status: "interrupted", output: null };
      this.broker.finish(runId, isResumable(r.run.kwargs), payload);
      this.finished.emit("interrupted");
      // The thread is no longer busy if no other run of it waits.
      const threadId = r.run.thread_id;
      if (threadId && !(await this.queue.active(threadId)).length) await settleThread(this.deps, threadId);
      return true;
    }
    await this.broker.signal("cancel", JSON.stringify({ run_id: runId, action }));
    return true;
  }

  /**
   * Cancels a run of a thread; with `wait`, resolves once it has stopped. Cancelling a run that already ended
   * does nothing (cancel is idempotent); an unknown run is 404.
   */
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
      ids = await this.queue.listActive(q.thread_id ?? null, statuses);
    }
    let n = 0;
    for (const id of ids) if (await this.requestCancel(id, q.action)) n++;
    return n;
  }

  /** Waits for a run and returns its final values (or `{__error__}`); a finished run answers at once. */
  async join(threadId: string, runId: string): Promise<unknown> {
    const run = await this.storage.runs.get(threadId, runId);
    if (!run) throw notFound(`Run "${runId}" not found in thread "${threadId}"`);
    if (!FINAL(run.status)) {
      const r = await this.result(run);
      if (r.error) return { __error__: r.error };
      // As officially: the last `values` event of a run that streams them (a graph's output may differ from its
      // state), else the thread's values. Plain JSON already (the runner's, or the broker's copy).
      if (streamsValues(run.kwargs) && r.output != null) return r.output;
    } else if (run.status === "error" || run.status === "timeout") {
      const t = await this.storage.threads.get(threadId);
      return { __error__: t?.error ?? { error: "Error", message: "run failed" } };
    }
    const thread = await this.storage.threads.get(threadId);
    return thread?.values ?? {};
  }

  runLog(run: Run): EventSource | undefined {
    if (FINAL(run.status) && !isResumable(run.kwargs)) return undefined;
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

  /** Takes up the runs a stopped predecessor left (embedded); returns how many. */
  async recover(): Promise<number> {
    const leftovers = await this.queue.recover(this.opts.maxAttempts);
    await this.worker?.takeUp(leftovers);
    return leftovers.requeued.length + leftovers.failed.length;
  }

  /** Stops taking runs; lets running ones finish within the grace period, then stops them and hands them back. */
  async shutdown(graceMs = this.opts.graceMs): Promise<void> {
    await this.worker?.shutdown(graceMs);
  }
}
