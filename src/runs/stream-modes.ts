// The stream modes of a run, one entry each: which LangGraph stream modes the graph is asked for, whether the mode
// needs LangChain's callback events (streamEvents), and the names of the events it puts on the run's log. The
// executor, the join of a run's stream and the thread stream read them here rather than each knowing the modes.
import type { StreamEvent } from "../streams/channel.js";
import { PROTOCOL_EVENT, PROTOCOL_MODE } from "./protocol-run.js";
import type { RunStreamMode } from "./schemas.js";

export type { RunStreamMode };

interface ModeSpec {
  /** LangGraph stream modes the graph is asked for. */
  graph: string[];
  /** Needs LangChain's callback events: the run goes through streamEvents. */
  callbacks?: boolean;
  /** The events' names on the run's log (before a subgraph's `|namespace`). */
  events: string[];
}

const same = (mode: string): ModeSpec => ({ graph: [mode], events: [mode] });

const MODES: Record<RunStreamMode, ModeSpec> = {
  values: same("values"),
  updates: same("updates"),
  custom: same("custom"),
  debug: same("debug"),
  checkpoints: same("checkpoints"),
  tasks: same("tasks"),
  // The Agent Server's own message events, made from the chat models' callbacks and the root graph's values; with
  // LangGraph's messages mode on, as the official server has it (its handler names the messages a tool node returns
  // without an id `run-<run>-tool-<call>`, ids the thread's state then keeps), its chunks not sent.
  messages: {
    graph: ["messages"],
    callbacks: true,
    events: ["messages/partial", "messages/complete", "messages/metadata"],
  },
  // LangGraph's messages mode, each chunk with its metadata, as `messages`.
  "messages-tuple": { graph: ["messages"], events: ["messages"] },
  events: { graph: [], callbacks: true, events: ["events"] },
  // Protocol v2 (the server's own runs, never asked by a client): LangGraph's protocol events, one log event each.
  [PROTOCOL_MODE]: { graph: [], events: [PROTOCOL_EVENT] },
};

/** Events every stream carries, whatever its modes: the run's start and its error. */
const ALWAYS = new Set(["metadata", "error"]);

/** The mode's entry; an unknown name (a record of another version) asks for nothing and names no event. */
const spec = (mode: string): ModeSpec => MODES[mode as RunStreamMode] ?? { graph: [], events: [] };

/** What executing a run with these modes asks of LangGraph. */
export function graphStreaming(modes: Iterable<string>): {
  /**
   * LangGraph's stream modes: those of the modes, plus `values` (the run's output), `tasks` (to name a failing node)
   * and `checkpoints` (the thread's state at the run's end, runs/end-state.ts).
   */
  graphModes: Set<string>;
  /** Whether the run goes through streamEvents. */
  callbacks: boolean;
  protocol: boolean;
} {
  const graphModes = new Set<string>(["values", "tasks", "checkpoints"]);
  let callbacks = false;
  let protocol = false;
  for (const m of modes) {
    const s = spec(m);
    for (const g of s.graph) graphModes.add(g);
    callbacks ||= Boolean(s.callbacks);
    protocol ||= m === PROTOCOL_MODE;
  }
  return { graphModes, callbacks, protocol };
}

/** An event's name without its subgraph namespace (`values|child:1` is `values`). */
export const baseEvent = (event: string): string => {
  const bar = event.indexOf("|");
  return bar < 0 ? event : event.slice(0, bar);
};

/**
 * Which events of a run's log a join that asks for `modes` receives: the events those modes make, and every
 * stream's `metadata` and `error`; all of them without `modes`.
 */
export function joinFilter(modes: string[] | undefined): ((ev: StreamEvent) => boolean) | undefined {
  if (!modes?.length) return undefined;
  const names = new Set(ALWAYS);
  for (const m of modes) for (const e of spec(m).events) names.add(e);
  return (ev) => names.has(baseEvent(ev.event));
}

/** The modes of a thread's stream. */
export type ThreadStreamMode = "run_modes" | "lifecycle" | "state_update";

/** The end of a run on its thread's log (RunWorker announces it): a `metadata` event with this status. */
export const RUN_DONE = "run_done";

/** Whether an event of a thread's log is a run's end (its data is a `metadata` event's small object). */
export const isRunDone = (ev: StreamEvent): boolean =>
  ev.event === "metadata" && (JSON.parse(ev.data) as { status?: unknown } | null)?.status === RUN_DONE;

/**
 * Which events of a thread's log a thread stream with `modes` receives: `run_modes` the runs' events (and their
 * starts), `lifecycle` the runs' starts and ends, `state_update` the state after each run. Protocol-v2 runs'
 * events are served by /threads/{id}/stream/events instead.
 */
export function threadStreamFilter(modes: Set<ThreadStreamMode>): (ev: StreamEvent) => boolean {
  return (ev) => {
    if (ev.event === PROTOCOL_EVENT) return false;
    if (ev.event === "state_update") return modes.has("state_update");
    if (ev.event !== "metadata") return modes.has("run_modes");
    return modes.has("lifecycle") || (modes.has("run_modes") && !isRunDone(ev));
  };
}
