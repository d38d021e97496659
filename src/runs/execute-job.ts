// Executing one run, as the worker (src/runs/worker.ts) does it whatever the backend: marks the thread busy,
// streams the graph's events to the run's log and its thread's log, applies a cancellation (interrupt or
// rollback), and records the thread's final state and the run's status.
import { withEncryptionUser } from "../lib/encryption-context.js";
import { runOwner } from "./kwargs.js";
import type { GraphRegistry } from "../graphs/registry.js";
import type { Logger } from "../lib/logger.js";
import type { Assistant, Json, Run, Storage, ThreadStateUpdate, ThreadStatus } from "../storage/types.js";
import type { Broker, EventSink } from "../streams/channel.js";
import { runConfigMetadata, type RunKwargs, type RunOutcome } from "./executor.js";
import { InProcessRunner, threadState as readThreadState, type GraphRunner } from "./graph-runner.js";
import { isConnectionLost } from "../lib/errors.js";
import { interruptsByTask, type ThreadStateJson } from "./state.js";
import { sendWebhook } from "./webhook.js";
import { webhookPolicy, type AddressPolicy } from "./net-policy.js";
import { withBackoff } from "../lib/backoff.js";
import { VERSION } from "../lib/version.js";
import { loopbackUrl } from "../lib/loopback.js";
import { runDeadline, timeoutError } from "./run-timeout.js";
import { RUN_DONE } from "./stream-modes.js";

export type CancelAction = "interrupt" | "rollback";

/**
 * What the official server adds to a run's `config.metadata` when it executes it (so checkpoints, message
 * metadata and traces carry it): the attempt, the LangGraph.js version of the project, the server's version,
 * plan and host, and its URL: `LANGGRAPH_API_URL`, else the address this process listens on (as the official dev
 * server sets it; a worker-only process has none).
 */
function serverMetadata(graphs: GraphRegistry, attempt: number, configuredUrl: string | undefined): Json {
  const apiUrl = configuredUrl ?? loopbackUrl();
  return {
    run_attempt: attempt,
    langgraph_version: graphs.langgraphVersion(),
    langgraph_api_version: VERSION,
    langgraph_plan: "developer",
    langgraph_host: "self-hosted",
    ...(apiUrl ? { langgraph_api_url: apiUrl } : {}),
  };
}

export interface RunResult extends Omit<RunOutcome, "status"> {
  /** The graph's outcome, or `timeout` when the run was stopped at BG_JOB_TIMEOUT_SECS. */
  status: RunOutcome["status"] | "timeout";
  /**
   * Final output for /wait: the last values, or `{__interrupt__}` when the run stopped at an interrupt.
   * Graph values (messages are class instances): serialize with `toJson`.
   */
  output: unknown;
  /**
   * Whether another run of the thread may wait to start now that this one ended; false when none does (its end
   * left the thread idle), absent when not known. A worker of a shared queue looks for work after a run only then.
   */
  nextRunWaits?: boolean;
}

export interface RunDeps {
  storage: Storage;
  graphs: GraphRegistry;
  broker: Broker;
  log: Logger;
  /** What the server's webhooks may reach (HANGAR_WEBHOOK_*). */
  webhooks: AddressPolicy;
  /** The deployment's public URL (LANGGRAPH_API_URL); each run's metadata records it, else the listening address. */
  apiUrl?: string;
  /** Where graphs execute; default: on this thread. */
  runner?: GraphRunner;
  /** BG_JOB_TIMEOUT_SECS in ms: how long an attempt may execute before it is stopped (none: no limit). */
  runTimeoutMs?: number;
}

/** What the run service and worker give the runs they execute; webhooks default to HANGAR_WEBHOOK_*. */
export function runDeps(
  storage: Storage,
  graphs: GraphRegistry,
  broker: Broker,
  log: Logger,
  webhooks: AddressPolicy = webhookPolicy(),
  apiUrl?: string,
): RunDeps {
  return { storage, graphs, broker, log, webhooks, apiUrl };
}

/** How long the writes that record a run's end keep trying while the database is unreachable. */
const END_WRITE_PATIENCE_MS = 60_000;

/**
 * Runs a write that records a run's end (a thread's status, a run's status: absolute values, so running it twice
 * is harmless) again while the database is unreachable, backing off up to 2 s, for at most a minute: an outage
 * of a few seconds must not leave a thread busy after its run ended.
 */
export function persistEnd<T>(write: () => Promise<T>): Promise<T> {
  return withBackoff(write, {
    firstMs: 200,
    maxMs: 2_000,
    patienceMs: END_WRITE_PATIENCE_MS,
    retry: isConnectionLost,
  });
}

/** The graph a run executes, and its assistant. */
export type RunGraph = Pick<Assistant, "graph_id" | "assistant_id">;

/** The context of a run's log lines. */
export function runContext(run: Run, assistant?: RunGraph, attempt?: number): Record<string, unknown> {
  return {
    run_id: run.run_id,
    thread_id: run.thread_id ?? undefined,
    assistant_id: run.assistant_id,
    graph_id: assistant?.graph_id,
    attempt,
  };
}

export interface ExecJob {
  run: Run;
  assistant: RunGraph;
  kwargs: RunKwargs;
  channel: EventSink;
  stateless: boolean;
  signal: AbortSignal;
  /** The attempt number (1 for a first start), as the queue recorded it when the worker took the run. */
  attempt: () => number;
  /** How the run was cancelled, if it was. */
  cancelAction: () => CancelAction | undefined;
  /** True when the process is stopping: the run's outcome is not recorded (it will run again). */
  stopping: () => boolean;
}

/** Executes a run: what it writes is encrypted for its owner (custom encryption's context). */
export function executeJob(deps: RunDeps, job: ExecJob): Promise<RunResult> {
  return withEncryptionUser(runOwner(job.kwargs), () => execute(deps, job));
}

async function execute(deps: RunDeps, job: ExecJob): Promise<RunResult> {
  const { storage, graphs, broker } = deps;
  const { run, assistant, kwargs, channel } = job;
  const threadId = run.thread_id;
  let mark: unknown;
  const attempt = job.attempt();
  if (threadId) {
    const started = await storage.threads.runStarting(threadId, {
      graph_id: assistant.graph_id,
      assistant_id: assistant.assistant_id,
    });
    // The thread was deleted while this run waited (after_seconds): there is nothing to run on.
    if (!started) return { status: "interrupted", values: undefined, output: null };
    mark = started.mark;
  }
  const threadLog = threadId ? broker.thread(threadId) : undefined;
  const publish = (event: string, data: unknown) => {
    channel.publish(event, data);
    threadLog?.publish(event, data);
  };
  const log = deps.log.child(runContext(run, assistant, attempt));
  const started = performance.now();
  log.info("run started");
  // The run and its attempt: exactly what the official servers send first (GUIDE §4).
  publish("metadata", { run_id: run.run_id, attempt });
  // Give the event loop a turn so the metadata event is written to the socket before the graph starts:
  // a graph with no I/O of its own would otherwise run to the end in one chain of microtasks.
  await new Promise<void>((r) => setImmediate(r));
  const runKwargs: RunKwargs = {
    ...kwargs,
    config: {
      ...kwargs.config,
      metadata: { ...runConfigMetadata(kwargs), ...serverMetadata(graphs, attempt, deps.apiUrl) },
    },
  };
  // The graph stops at a cancel or at the run timeout alike (on a graph thread, a spinning one is ended). The clock
  // starts with the graph: a graph thread that is still loading the graphs (a replacement) does not count.
  const deadline = runDeadline(job.signal, deps.runTimeoutMs);
  const ran = await (deps.runner ?? new InProcessRunner(graphs))
    .run(
      {
        graphId: assistant.graph_id,
        runId: run.run_id,
        threadId: job.stateless ? null : threadId,
        kwargs: runKwargs,
      },
      deadline.signal,
      publish,
      log,
      () => deadline.start(),
    )
    .finally(() => deadline.clear());
  let outcome: RunResult = { ...ran.outcome, output: undefined };
  const stopping = job.stopping();
  // Timed out (and not cancelled or stopped with the process meanwhile): ends `timeout`, its stream with the error.
  if (deadline.expired() && !job.cancelAction() && !stopping) {
    const error = timeoutError(deps.runTimeoutMs!);
    log.warn(error.message);
    publish("error", error);
    outcome = { status: "timeout", values: ran.outcome.values, error, output: undefined };
  }
  let output: unknown = outcome.error ? { __error__: outcome.error } : (outcome.values ?? null);
  const finished = () => {
    const status = job.cancelAction() ? "interrupted" : outcome.status;
    const ms = Math.round(performance.now() - started);
    log[status === "error" ? "warn" : "info"]({ status, ms }, `run finished: ${status}`);
  };
  // Stopped by shutdown: the run stays "running" and is resumed later.
  if (stopping) {
    log.info("run stopped with the process; it resumes from its last checkpoint");
    return { ...outcome, output };
  }
  if (!threadId) {
    finished();
    return { ...outcome, output, nextRunWaits: false };
  }

  const cancelAction = job.cancelAction();
  if (cancelAction === "rollback") await storage.threads.rollbackCheckpoints(threadId, mark);
  // The state the run ended with (read where it ran), or after a rollback what is left.
  let state: ThreadStateJson | null = null;
  try {
    if (cancelAction === "rollback" || ran.state === undefined) {
      state = await readThreadState(graphs, assistant.graph_id, kwargs.config, threadId);
    } else if (ran.state === null) {
      throw ran.stateError ?? new Error("the thread's state could not be read");
    } else state = ran.state;
  } catch (e) {
    // After a failed run the checkpoint may hold the writes that failed; the error is already reported.
    if (!outcome.error) throw e;
  }
  if (state && !outcome.error && state.interrupts.length) {
    // As the official server answers: the interrupts only (the values are in the thread's state).
    output = { __interrupt__: state.interrupts };
  }
  // A cancelled run leaves its thread idle (its completed steps stay, unless rolled back); a timed-out one leaves it
  // `error`, as the official server does (it records the TimeoutError as the thread's error).
  const status =
    outcome.status === "error" || outcome.status === "timeout"
      ? "error"
      : cancelAction
        ? "idle"
        : state?.next.length
          ? "interrupted"
          : "idle";
  const threadState: ThreadStateUpdate = {
    status,
    // Another run of the thread waiting to start (enqueued, or delayed by after_seconds) keeps it busy.
    busyWhilePending: status === "idle",
    // Plain JSON already (GraphRunResult.state): not copied again on the API thread.
    ...(state ? { values: state.values as Json, interrupts: interruptsByTask(state) as Json } : {}),
    error: outcome.error ?? null,
  };
  // Fenced by the attempt: if this attempt lost its lease while the database was away and another took the run
  // over, that one records the end (a rolled-back run is deleted: nothing to fence by).
  // The run's status goes with it (one statement on PostgreSQL).
  const fence =
    cancelAction === "rollback" ? undefined : { runId: run.run_id, attempt, runStatus: outcome.status };
  const recorded = await persistEnd(() => storage.threads.setState(threadId, threadState, fence));
  // A rolled-back run's record goes after the thread's state is recorded: on PostgreSQL its row is what keeps the
  // thread's next run from being claimed, which would otherwise start before this end is written and have its
  // thread's state overwritten by it.
  if (cancelAction === "rollback") await storage.runs.delete(run.run_id);
  if (state) threadLog?.publish("state_update", { ...state, run_id: run.run_id });
  finished();
  // Recorded idle: no run of the thread waited (read under its row lock); busy: one does. After an error or an
  // interrupt the status says nothing of the line: a next run may wait.
  return { ...outcome, output, nextRunWaits: recorded !== "idle" };
}

/**
 * A run that failed outside its graph (storage, loading): records the error and returns its result. With its
 * `attempt`, only while that is still the run's current attempt.
 */
export async function runFailed(deps: RunDeps, run: Run, e: unknown, attempt?: number): Promise<RunResult> {
  deps.log.error({ ...runContext(run), err: e }, "run failed outside the graph");
  const error = { error: (e as Error).name ?? "Error", message: (e as Error).message ?? String(e) };
  if (run.thread_id) {
    // Not thrown: this is already the error path, and the caller must still publish the error and end the run's
    // stream. A failed write is logged; the records keep their previous state.
    const unrecorded = (w: unknown) =>
      deps.log.warn(runContext(run), `could not record the run's failure: ${(w as Error).message}`);
    const threadId = run.thread_id;
    // Fenced by the attempt when it is known (see executeJob).
    const fence = attempt === undefined ? undefined : { runId: run.run_id, attempt };
    await persistEnd(() => deps.storage.threads.setState(threadId, { status: "error", error }, fence)).catch(
      unrecorded,
    );
    await persistEnd(() => deps.storage.runs.setStatus(run.run_id, "error", attempt)).catch(unrecorded);
  }
  return { status: "error", values: undefined, error, output: { __error__: error } };
}

/**
 * A thread whose waiting runs were all cancelled before they started: no longer busy; error if its last run
 * failed; interrupted if its state has nodes to run next because the graph stopped there (an interrupt), idle
 * otherwise. A state whose next nodes are the steps a cancel cut short (the run that wrote its checkpoint ended
 * `interrupted`) leaves the thread idle, as that run's own end records when nothing waits: its end found a run
 * waiting and kept the thread busy, or its lease expired and it was cancelled while waiting to be taken up again.
 */
export async function settleThread(deps: RunDeps, threadId: string): Promise<void> {
  const thread = await deps.storage.threads.get(threadId);
  if (!thread || thread.status !== "busy") return;
  let status: ThreadStatus = thread.error ? "error" : "idle";
  const graphId = thread.metadata.graph_id;
  if (status === "idle" && typeof graphId === "string" && deps.graphs.has(graphId)) {
    const config = (thread.config ?? {}) as Json;
    const configurable = { ...((config.configurable as Json | undefined) ?? {}), thread_id: threadId };
    const graph = await deps.graphs.get(graphId, { ...config, configurable });
    const snap = await graph.getState({ configurable: { thread_id: threadId } }).catch(() => null);
    if (snap?.next.length) {
      const writer = (snap.metadata as { run_id?: unknown } | undefined)?.run_id;
      const cut =
        typeof writer === "string" &&
        (await deps.storage.runs.get(threadId, writer))?.status === "interrupted";
      if (!cut) status = "interrupted";
    }
  }
  // A run admitted meanwhile (it marked the thread busy) keeps it busy: the status is decided under the thread's lock.
  await deps.storage.threads.setState(threadId, { status, busyWhilePending: true });
}

/** After a run: the thread stream's run_done event and the webhook. */
export function announceEnd(deps: RunDeps, run: Run, result: RunResult, status: string): void {
  if (run.thread_id) {
    // Thread streams: the run's `metadata` event marked its start; this marks its end.
    deps.broker
      .thread(run.thread_id)
      .publish("metadata", { run_id: run.run_id, status: RUN_DONE, run_status: result.status });
  }
  const webhook = (run.kwargs as { webhook?: string | null }).webhook;
  if (webhook) {
    void sendWebhook(
      webhook,
      {
        ...run,
        status,
        updated_at: new Date().toISOString(),
        values: result.output,
        error: result.error ?? null,
      },
      deps.log.child(runContext(run)),
      deps.webhooks,
    );
  }
}
