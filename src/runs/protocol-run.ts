// Runs a graph for protocol v2 (the thread-centric event stream): LangGraph's own protocol events
// (`streamEvents` version "v3": lifecycle, values, updates, messages, tools, tasks, checkpoints, custom), put in
// the shape clients expect: a pending interrupt is an `input.requested` event and ends the root's lifecycle as
// `interrupted`, and state values never carry `__interrupt__`.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { AnyGraph } from "../graphs/registry.js";
import { toPlain } from "../lib/serde.js";
import type { EventSource, StreamEvent, StreamFrom } from "../streams/channel.js";
import type { ProtocolMode } from "./schemas.js";

/** The stream mode that marks a run as a protocol v2 run (set by the protocol's commands, never by clients). */
export const PROTOCOL_MODE: ProtocolMode = "protocol";
/** The event name protocol events have in a run's and a thread's event logs. */
export const PROTOCOL_EVENT = "protocol";

export interface ProtocolEvent {
  type: "event";
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

const INTERRUPT_KEY = "__interrupt__";

/** A values event's state apart from its pending interrupts (`__interrupt__`); `values` undefined when empty. */
function splitInterrupts(data: Record<string, unknown>): { raw: unknown; values?: Record<string, unknown> } {
  const { [INTERRUPT_KEY]: raw, ...values } = data;
  return { raw, values: Object.keys(values).length ? values : undefined };
}

/**
 * The official server's normalization of the state in an `updates` event (messages as the protocol shapes them:
 * a type, content blocks, tool calls, only what is set). @langchain/langgraph-api (pinned) does not export it by
 * name: its module is loaded by its file; the differential test's protocol scenario shows it still applies.
 */
const officialState = (await import(
  pathToFileURL(
    join(
      dirname(createRequire(import.meta.url).resolve("@langchain/langgraph-api/package.json")),
      "dist/protocol/session/state-normalizers.mjs",
    ),
  ).href
)) as { normalizeProtocolStatePayload: (value: unknown) => unknown };

/** A state as the protocol sends it: JSON-safe, then normalized as the official server does. */
const protocolState = (value: unknown): unknown =>
  officialState.normalizeProtocolStatePayload(toPlain(value));

/**
 * What a raw event becomes, as the official server shapes it: the root graph's lifecycle named by the run's graph
 * (LangGraph names it "root"); an update's data the node's values alone (the node is `params.node`), and a values
 * event's state, normalized as the official server does (messages as `{type, content, id}` and only what else is
 * set, whatever form LangChain left them in); message events without `params.node`; an interrupt (an `__interrupt__`
 * update, or a values event carrying `__interrupt__`) an `input.requested` event, once per interrupt, and never an
 * update or a value of its own.
 */
export class ProtocolNormalizer {
  /** Interrupts announced already (a values event repeats them). */
  private announced = new Set<string>();
  /** Whether the root graph stopped on an interrupt. */
  interrupted = false;

  /** @param graphName the root graph's name in lifecycle events: the run's graph id */
  constructor(private graphName: string) {}

  /** Input requests for the interrupts in `raw` not announced yet. */
  private inputRequests(ev: ProtocolEvent, raw: unknown): ProtocolEvent[] {
    const out: ProtocolEvent[] = [];
    for (const i of Array.isArray(raw) ? raw : []) {
      const id = String((i as { id?: unknown })?.id ?? "");
      if (!id || this.announced.has(id)) continue;
      this.announced.add(id);
      if (ev.params.namespace.length === 0) this.interrupted = true;
      const { node: _node, ...params } = ev.params;
      out.push({
        type: "event",
        method: "input.requested",
        params: { ...params, data: { interrupt_id: id, payload: (i as { value?: unknown }).value ?? null } },
      });
    }
    return out;
  }

  normalize(ev: ProtocolEvent): ProtocolEvent[] {
    const { method, params } = ev;
    const data =
      params.data && typeof params.data === "object" ? (params.data as Record<string, unknown>) : null;
    if (method === "values" && data) {
      const { raw, values } = splitInterrupts(data);
      const out: ProtocolEvent[] = this.inputRequests(ev, raw);
      // An empty state is not sent (as the official server does).
      if (values) out.unshift({ ...ev, params: { ...params, data: protocolState(values) } });
      return out;
    }
    if (method === "updates" && data && "values" in data) {
      if (data.node === INTERRUPT_KEY) return this.inputRequests(ev, data.values);
      return [{ ...ev, params: { ...params, data: protocolState(data.values) } }];
    }
    if (method === "messages" && params.node !== undefined) {
      // The node is not named on message events (the official server leaves it out).
      const { node: _node, ...rest } = params;
      return [{ ...ev, params: rest }];
    }
    if (method === "lifecycle" && params.namespace.length === 0 && data) {
      const event = this.interrupted && data.event === "completed" ? "interrupted" : data.event;
      return [{ ...ev, params: { ...params, data: { ...data, event, graph_name: this.graphName } } }];
    }
    return [ev];
  }
}

/**
 * The root graph's values in a raw event (what the run's outcome records, as LangGraph has them: not normalized for
 * the protocol), without a pending interrupt; undefined for any other event, or one that carries only an interrupt.
 */
export function rootValues(ev: ProtocolEvent): unknown {
  if (ev.method !== "values" || ev.params.namespace.length !== 0) return undefined;
  const data = ev.params.data;
  if (!data || typeof data !== "object" || !(INTERRUPT_KEY in data)) return data;
  return splitInterrupts(data as Record<string, unknown>).values;
}

/** LangGraph's protocol event stream of a run. */
export async function protocolEvents(
  graph: AnyGraph,
  input: unknown,
  options: Record<string, unknown>,
  runId: string,
): Promise<AsyncIterable<ProtocolEvent>> {
  const { streamMode: _modes, subgraphs: _subgraphs, ...rest } = options;
  // The registry hands out a shallow copy of the graph (bound to this server's checkpointer and store), which
  // lacks the class's private members that the "v3" stream uses: a real instance is made from it.
  const g = graph as any;
  const real = typeof g.withConfig === "function" ? g.withConfig({}) : g;
  real.checkpointer = g.checkpointer;
  real.store = g.store;
  return (await real.streamEvents(input, { ...rest, version: "v3", runId })) as AsyncIterable<ProtocolEvent>;
}

/** A protocol event as clients get it: with its `seq` (its id in the thread's event log) and `event_id`. */
export type SequencedEvent = ProtocolEvent & { seq: number; event_id: string };

/** The protocol events of a thread's event log from `from` on (other events skipped), until `signal` aborts. */
export async function* protocolLog(
  log: EventSource,
  from: StreamFrom,
  signal: AbortSignal,
): AsyncGenerator<SequencedEvent> {
  for await (const ev of log.subscribe(from, signal)) {
    const event = sequenced(ev);
    if (event) yield event;
  }
}

/** A log event as a protocol client gets it, with its `seq` and `event_id`; undefined for any other event. */
export function sequenced(ev: StreamEvent): SequencedEvent | undefined {
  if (ev.event !== PROTOCOL_EVENT) return undefined;
  return { ...(JSON.parse(ev.data) as ProtocolEvent), seq: ev.id, event_id: String(ev.id) };
}

/** A command answer's `applied_through_seq`: the highest seq of the thread's log so far (0 for an empty log). */
export const appliedThroughSeq = async (log: EventSource): Promise<number> => Math.max(0, await log.head());

/** A log's events from `from` up to its newest one now (what has happened so far; it does not wait for more). */
export async function* readToHead(log: EventSource, from = 0): AsyncGenerator<StreamEvent> {
  const head = await log.head();
  if (head < from) return;
  for await (const ev of log.subscribe(from)) {
    yield ev;
    if (ev.id >= head) return;
  }
}

/** A protocol error answer to the command `id`. */
export const protocolError = (id: number | null, error: string, message: string) => ({
  type: "error",
  id,
  error,
  message,
});
