// Run lifecycle: creation with multitask rules, one run at a time per thread, execution, and thread status.
import { randomUUID } from "node:crypto";
import { findAssistant } from "../graphs/assistants.js";
import type { GraphRegistry } from "../graphs/registry.js";
import { conflict, notFound, unprocessable } from "../api/errors.js";
import type { RunCreateStatefulT, RunCreateStatelessT } from "../api/schemas.js";
import type { Assistant, Json, Run, Storage, Thread } from "../storage/types.js";
import type { RunChannel, StreamBroker } from "../streams/channel.js";
import { executeRun, type RunKwargs, type RunOutcome } from "./executor.js";
import { toPlain } from "./serde.js";
import { interruptsByTask, snapshotToState, type ThreadStateJson } from "./state.js";

export interface StartedRun {
  run: Run;
  channel: RunChannel;
  /** Resolves with the outcome when the run ends (never rejects). */
  done: Promise<RunResult>;
  /** Aborts the run (on_disconnect: cancel). */
  cancel: () => void;
}

export interface RunResult extends RunOutcome {
  /**
   * Final output for /wait: the last values, with `__interrupt__` when the run stopped at an interrupt.
   * Graph values (messages are class instances): serialize with `toJson`.
   */
  output: unknown;
}

interface Job {
  run: Run;
  assistant: Assistant;
  kwargs: RunKwargs;
  channel: RunChannel;
  controller: AbortController;
  attempt: number;
  resolve: (r: RunResult) => void;
  stateless: boolean;
}

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

export class RunManager {
  private active = new Map<string, Job>();
  private queued = new Map<string, Job[]>();

  constructor(
    private storage: Storage,
    private graphs: GraphRegistry,
    private broker: StreamBroker,
    private log: (msg: string) => void,
  ) {}

  private async assistant(id: string): Promise<Assistant> {
    const a = await findAssistant(this.storage, id);
    if (!a) throw notFound(`Assistant "${id}" not found`);
    if (!this.graphs.has(a.graph_id))
      throw notFound(`Graph "${a.graph_id}" of assistant "${id}" is not loaded`);
    return a;
  }

  private kwargs(
    body: RunCreateStatefulT | RunCreateStatelessT,
    assistant: Assistant,
    runId: string,
    threadId: string | null,
  ): RunKwargs {
    const aConfig = assistant.config as Json;
    const bConfig = (body.config ?? {}) as Json;
    const configurable: Json = {
      ...(isObj(aConfig.configurable) ? aConfig.configurable : {}),
      ...(isObj(bConfig.configurable) ? bConfig.configurable : {}),
      run_id: runId,
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
    };
    if (threadId) configurable.thread_id = threadId;
    if ("checkpoint" in body && body.checkpoint) {
      for (const [k, v] of Object.entries(body.checkpoint))
        if (v != null && k !== "thread_id") configurable[k] = v;
    }
    if ("checkpoint_id" in body && body.checkpoint_id) configurable.checkpoint_id = body.checkpoint_id;
    const tags = [...((aConfig.tags as string[]) ?? []), ...((bConfig.tags as string[]) ?? [])];
    const recursion = (bConfig.recursion_limit ?? aConfig.recursion_limit) as number | undefined;
    const modes = Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode];
    const context = { ...(assistant.context ?? {}), ...(body.context ?? {}) };
    return {
      input: body.input,
      command: body.command ?? null,
      config: { ...aConfig, ...bConfig, configurable, tags, recursion_limit: recursion },
      context: Object.keys(context).length ? context : undefined,
      metadata: {
        ...(body.metadata ?? {}),
        graph_id: assistant.graph_id,
        assistant_id: assistant.assistant_id,
        run_id: runId,
        ...(threadId ? { thread_id: threadId } : {}),
      },
      stream_mode: [...new Set(modes)],
      subgraphs: body.stream_subgraphs,
      interrupt_before: body.interrupt_before,
      interrupt_after: body.interrupt_after,
      durability: body.durability,
    };
  }

  /** Creates a run on a thread; it starts now, or after the thread's current run (enqueue). */
  async createStateful(threadId: string, body: RunCreateStatefulT): Promise<StartedRun> {
    const assistant = await this.assistant(body.assistant_id);
    let thread: Thread | null = await this.storage.threads.get(threadId);
    if (!thread) {
      if (body.if_not_exists !== "create") throw notFound(`Thread "${threadId}" not found`);
      thread =
        (await this.storage.threads.create({
          thread_id: threadId,
          metadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id },
        })) ?? (await this.storage.threads.get(threadId));
      if (!thread) throw notFound(`Thread "${threadId}" not found`);
    }
    const busy = this.active.has(threadId);
    if (busy && body.multitask_strategy === "reject") {
      throw conflict(`Thread "${threadId}" is busy with another run; multitask_strategy is "reject"`);
    }
    if (body.command && body.input !== undefined && body.input !== null) {
      throw unprocessable("input: give either input or command, not both");
    }
    const runId = randomUUID();
    const kwargs = this.kwargs(body, assistant, runId, threadId);
    const run = await this.storage.runs.create({
      run_id: runId,
      thread_id: threadId,
      assistant_id: assistant.assistant_id,
      status: "pending",
      metadata: body.metadata ?? {},
      kwargs: kwargs as unknown as Json,
      multitask_strategy: body.multitask_strategy,
    });
    return this.schedule(run, assistant, kwargs, false, 1);
  }

  /** A run with no thread: nothing is persisted (no checkpointer, no run record). */
  async createStateless(body: RunCreateStatelessT): Promise<StartedRun> {
    const assistant = await this.assistant(body.assistant_id);
    if (body.command && body.input !== undefined && body.input !== null) {
      throw unprocessable("input: give either input or command, not both");
    }
    const runId = randomUUID();
    const kwargs = this.kwargs(body, assistant, runId, null);
    const ts = new Date().toISOString();
    const run: Run = {
      run_id: runId,
      thread_id: null,
      assistant_id: assistant.assistant_id,
      created_at: ts,
      updated_at: ts,
      status: "pending",
      metadata: body.metadata ?? {},
      kwargs: kwargs as unknown as Json,
      multitask_strategy: "reject",
    };
    return this.schedule(run, assistant, kwargs, true, 1);
  }

  private schedule(
    run: Run,
    assistant: Assistant,
    kwargs: RunKwargs,
    stateless: boolean,
    attempt: number,
  ): StartedRun {
    const channel = this.broker.open(run.run_id);
    const controller = new AbortController();
    let resolve!: (r: RunResult) => void;
    const done = new Promise<RunResult>((r) => (resolve = r));
    const job: Job = { run, assistant, kwargs, channel, controller, attempt, resolve, stateless };
    const threadId = run.thread_id;
    if (threadId && this.active.has(threadId)) {
      const q = this.queued.get(threadId) ?? [];
      q.push(job);
      this.queued.set(threadId, q);
    } else {
      if (threadId) this.active.set(threadId, job);
      void this.execute(job);
    }
    return { run, channel, done, cancel: () => controller.abort() };
  }

  private async execute(job: Job): Promise<void> {
    const { run, channel } = job;
    const threadId = run.thread_id;
    let result: RunResult;
    try {
      result = await this.runJob(job);
    } catch (e) {
      this.log(`run ${run.run_id} failed outside the graph: ${(e as Error).stack ?? e}`);
      const error = { error: (e as Error).name ?? "Error", message: (e as Error).message ?? String(e) };
      channel.publish("error", error);
      result = { status: "error", values: undefined, error, output: { __error__: error } };
      if (threadId) {
        await this.storage.threads.setState(threadId, { status: "error", error }).catch(() => {});
        await this.storage.runs.setStatus(run.run_id, "error").catch(() => {});
      }
    }
    this.broker.finish(run.run_id);
    job.resolve(result);
    if (threadId) {
      const next = this.queued.get(threadId)?.shift();
      if (next) {
        this.active.set(threadId, next);
        void this.execute(next);
      } else {
        this.active.delete(threadId);
        this.queued.delete(threadId);
      }
    }
  }

  private async runJob(job: Job): Promise<RunResult> {
    const { run, assistant, kwargs, channel, controller } = job;
    const threadId = run.thread_id;
    channel.publish("metadata", { run_id: run.run_id, thread_id: threadId, attempt: job.attempt });
    // Give the event loop a turn so the metadata event is written to the socket before the graph starts:
    // a graph with no I/O of its own would otherwise run to the end in one chain of microtasks.
    await new Promise<void>((r) => setImmediate(r));
    if (threadId) {
      await this.storage.runs.setStatus(run.run_id, "running");
      await this.storage.threads.setState(threadId, {
        status: "busy",
        metadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id },
      });
    }
    const graph = job.stateless
      ? await this.graphs.getWith(assistant.graph_id, kwargs.config, undefined)
      : await this.graphs.get(assistant.graph_id, kwargs.config);
    const outcome = await executeRun(graph, kwargs, run.run_id, controller.signal, (e, d) =>
      channel.publish(e, d),
    );
    let output: unknown = outcome.error ? { __error__: outcome.error } : (outcome.values ?? null);
    if (threadId) {
      let state: ThreadStateJson | null = null;
      try {
        state = snapshotToState(await graph.getState({ configurable: { thread_id: threadId } }));
      } catch (e) {
        // After a failed run the checkpoint may hold the writes that failed; the error is already reported.
        if (!outcome.error) throw e;
      }
      if (state && !outcome.error && state.interrupts.length) {
        output = { ...(state.values as Json), __interrupt__: state.interrupts };
      }
      await this.storage.threads.setState(threadId, {
        status: outcome.status === "error" ? "error" : state?.next.length ? "interrupted" : "idle",
        ...(state
          ? { values: toPlain<Json>(state.values), interrupts: toPlain<Json>(interruptsByTask(state)) }
          : {}),
        error: outcome.error ?? null,
      });
      await this.storage.runs.setStatus(run.run_id, outcome.status);
    }
    return { ...outcome, output };
  }

  /** True while a run of this thread is executing. */
  isBusy(threadId: string): boolean {
    return this.active.has(threadId);
  }

  /** Re-queues runs left pending or running by a previous process (embedded restart). */
  async recover(): Promise<number> {
    const runs = await this.storage.runs.inFlight();
    for (const run of runs) {
      if (!run.thread_id) continue;
      const assistant = await findAssistant(this.storage, run.assistant_id);
      if (!assistant || !this.graphs.has(assistant.graph_id)) {
        await this.storage.runs.setStatus(run.run_id, "error");
        continue;
      }
      const kwargs = run.kwargs as unknown as RunKwargs;
      // A run that had started resumes from its last checkpoint rather than replaying its input.
      const resumed: RunKwargs =
        run.status === "running" ? { ...kwargs, input: null, command: null } : kwargs;
      this.schedule(run, assistant, resumed, false, run.status === "running" ? 2 : 1);
    }
    return runs.length;
  }

  /** Aborts every active run (shutdown). */
  abortAll(): void {
    for (const job of this.active.values()) job.controller.abort();
  }
}
