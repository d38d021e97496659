// Runs a graph for protocol v2 (the thread-centric event stream): LangGraph's own protocol events
// (`streamEvents` version "v3": lifecycle, values, updates, messages, tools, tasks, checkpoints, custom), put in
// the shape clients expect: a pending interrupt is an `input.requested` event and ends the root's lifecycle as
// `interrupted`, and state values never carry `__interrupt__`.
import type { AnyGraph } from "../graphs/registry.js";
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

/** What a raw event becomes: itself (values without interrupts), plus an input request per new interrupt. */
export class ProtocolNormalizer {
  /** Interrupts announced already (a values event repeats them). */
  private announced = new Set<string>();
  /** Whether the root graph stopped on an interrupt. */
  interrupted = false;

  normalize(ev: ProtocolEvent): ProtocolEvent[] {
    const { method, params } = ev;
    if (
      method === "values" &&
      params.data &&
      typeof params.data === "object" &&
      INTERRUPT_KEY in params.data
    ) {
      const { [INTERRUPT_KEY]: raw, ...values } = params.data as Record<string, unknown>;
      const out: ProtocolEvent[] = [];
      if (Object.keys(values).length) out.push({ ...ev, params: { ...params, data: values } });
      for (const i of Array.isArray(raw) ? raw : []) {
        const id = String((i as { id?: unknown })?.id ?? "");
        if (!id || this.announced.has(id)) continue;
        this.announced.add(id);
        if (params.namespace.length === 0) this.interrupted = true;
        out.push({
          type: "event",
          method: "input.requested",
          params: {
            namespace: params.namespace,
            timestamp: params.timestamp,
            data: { interrupt_id: id, payload: (i as { value?: unknown }).value ?? null },
          },
        });
      }
      return out;
    }
    if (method === "lifecycle" && params.namespace.length === 0 && this.interrupted) {
      const data = params.data as { event?: string };
      if (data?.event === "completed")
        return [{ ...ev, params: { ...params, data: { ...data, event: "interrupted" } } }];
    }
    return [ev];
  }
}

/** The root graph's last values in a run's events (what the run's outcome records). */
export function rootValues(ev: ProtocolEvent): unknown {
  return ev.method === "values" && ev.params.namespace.length === 0 ? ev.params.data : undefined;
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
    if (ev.event !== PROTOCOL_EVENT) continue;
    yield { ...(JSON.parse(ev.data) as ProtocolEvent), seq: ev.id, event_id: String(ev.id) };
  }
}

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
