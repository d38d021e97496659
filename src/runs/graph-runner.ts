// Where a run's graph executes: on the API thread (InProcessRunner), or on a graph thread (graph-threads/pool.ts),
// so that a node computing for seconds delays neither the API nor other runs. The run's bookkeeping (its status,
// its thread's, its event logs) stays with the caller (execute-job.ts) on the API thread either way.
import type { GraphRegistry } from "../graphs/registry.js";
import type { Logger } from "../lib/logger.js";
import { executeRun, type RunKwargs, type RunOutcome } from "./executor.js";
import { snapshotToState, type ThreadStateJson } from "./state.js";
import { RawJson, toJson, toPlain } from "../lib/serde.js";
import { finishedRunState } from "./end-state.js";

/** One run of a graph, as the runner needs it. */
export interface GraphRun {
  graphId: string;
  runId: string;
  /** Null for a stateless run (no checkpointer). */
  threadId: string | null;
  /** With the run's `config.metadata` as the graph sees it. */
  kwargs: RunKwargs;
}

export interface GraphRunResult {
  /** Its `values` plain JSON (messages as dicts), as `state` (InProcessRunner). */
  outcome: RunOutcome;
  /**
   * The thread's state once the run ended, plain JSON (messages as dicts; a graph thread's crossed as such), null
   * when it could not be read, undefined when not read (stateless runs).
   */
  state?: ThreadStateJson | null;
  /** Why the state could not be read. */
  stateError?: Error;
}

/** An event of the run: its name and its data (to be serialized), or its data already as JSON text. */
export type RunEmit = (event: string, data: unknown) => void;

export interface GraphRunner {
  /** Whether the graphs run on threads of their own (then the events' data comes as JSON text, see RawJson). */
  readonly threaded: boolean;
  /** `started` is called when the graph starts executing (a graph thread may first have to load the graphs). */
  run(
    job: GraphRun,
    signal: AbortSignal,
    emit: RunEmit,
    log: Logger,
    started?: () => void,
  ): Promise<GraphRunResult>;
  close(): Promise<void>;
}

/** Reads a thread's state at a run's end through a graph bound to the durable checkpointer. */
export async function threadState(
  graphs: GraphRegistry,
  graphId: string,
  config: RunKwargs["config"],
  threadId: string,
): Promise<ThreadStateJson> {
  return readState(await graphs.get(graphId, config), threadId);
}

/** The thread's state read back from its last checkpoint (LangGraph's getState), as plain JSON. */
async function readState(
  graph: Awaited<ReturnType<GraphRegistry["get"]>>,
  threadId: string,
): Promise<ThreadStateJson> {
  return toPlain(snapshotToState(await graph.getState({ configurable: { thread_id: threadId } })));
}

/**
 * Two reads of a graph's channels with the same keys and, key by key, the same objects (the values stream and the
 * last checkpoint read the channels apart, but a channel gives the same object while nothing writes it): their
 * JSON is the same.
 */
function sameValues(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || a === null || typeof b !== "object" || b === null) return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && (a as never)[k] === (b as never)[k]);
}

/**
 * A run's root `values` events, each serialized once as it is emitted (the stream publishes the text as it is); the
 * run's output and its thread's state at its end are the last of them, taken from that text (a native JSON.parse)
 * rather than serialized again: on a long thread (a chat's messages) each costs as much as the event.
 */
export class ValuesText {
  private last: { values: unknown; json: string } | undefined;

  emitting(emit: RunEmit): RunEmit {
    return (event, data) => {
      if (event !== "values" || typeof data !== "object" || data === null || data instanceof RawJson) {
        emit(event, data);
        return;
      }
      const json = toJson(data);
      this.last = { values: data, json };
      emit(event, new RawJson(json));
    };
  }

  /** Plain JSON of values (messages as dicts). */
  plain<T>(values: T): T {
    if (values === undefined) return values;
    const last = this.last;
    return (last && sameValues(values, last.values) ? JSON.parse(last.json) : toPlain(values)) as T;
  }
}

/** Runs graphs on the calling thread (the API's), as Hangar did before graph threads. */
export class InProcessRunner implements GraphRunner {
  readonly threaded = false;

  constructor(private graphs: GraphRegistry) {}

  async run(
    job: GraphRun,
    signal: AbortSignal,
    emit: RunEmit,
    log: Logger,
    started?: () => void,
  ): Promise<GraphRunResult> {
    const graph =
      job.threadId === null
        ? await this.graphs.getWith(job.graphId, job.kwargs.config, undefined)
        : await this.graphs.get(job.graphId, job.kwargs.config);
    started?.();
    const values = new ValuesText();
    const { lastCheckpoint, ...outcome } = await executeRun(
      graph,
      job.kwargs,
      job.runId,
      signal,
      values.emitting(emit),
      log,
    );
    // The last checkpoint's live objects stay here (a graph thread's result crosses to the API thread).
    const output = outcome.values;
    outcome.values = values.plain(output);
    if (job.threadId === null) return { outcome };
    try {
      const state =
        finishedRunState(graph, job.threadId, job.runId, lastCheckpoint, (v) =>
          sameValues(v, output) ? outcome.values : values.plain(v),
        ) ?? (await readState(graph, job.threadId));
      return { outcome, state };
    } catch (e) {
      return { outcome, state: null, stateError: e as Error };
    }
  }

  async close(): Promise<void> {}
}
