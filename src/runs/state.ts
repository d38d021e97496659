// Converts LangGraph state snapshots and checkpoint configs to the Agent Server's ThreadState shape.
import type { StateSnapshot } from "@langchain/langgraph";
import { serializeError } from "../lib/serde.js";

export interface CheckpointRef {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}

export function configToCheckpoint(config: any): CheckpointRef | null {
  const c = config?.configurable;
  if (!c?.thread_id || !c.checkpoint_id) return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns || "",
    checkpoint_id: c.checkpoint_id,
    checkpoint_map: c.checkpoint_map || null,
  };
}

/** A subgraph task's checkpoint in stream events (debug, tasks): its id may be null. */
export function taskConfigToCheckpoint(config: any): CheckpointRef | null {
  const c = config?.configurable;
  if (!c?.thread_id) return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns || "",
    checkpoint_id: c.checkpoint_id || null,
    checkpoint_map: c.checkpoint_map || null,
  };
}

/** The checkpoint of a subgraph task, as the official server gives it: the task config's `configurable`. */
function taskCheckpoint(config: any): Record<string, unknown> | null {
  const c = config?.configurable;
  if (!c || typeof c !== "object") return null;
  return Object.fromEntries(Object.entries(c).filter(([k]) => !k.startsWith("__")));
}

const isSnapshot = (s: unknown): s is StateSnapshot =>
  typeof s === "object" && s !== null && "values" in s && "next" in s;

/** A ThreadState as the official API has it (a nested subgraph state has only these fields). */
export interface NestedStateJson {
  values: unknown;
  next: string[];
  tasks: unknown[];
  metadata: Record<string, unknown> | null;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
}

/** The thread's own state adds the ids of both checkpoints and every task's interrupts. */
export interface ThreadStateJson extends NestedStateJson {
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
  interrupts: unknown[];
}

function nestedState(s: StateSnapshot): NestedStateJson {
  const checkpoint = configToCheckpoint(s.config);
  const tasks = s.tasks.map((t: any) => ({
    id: t.id,
    name: t.name,
    path: t.path ?? [],
    error: t.error != null ? serializeError(t.error).message : null,
    interrupts: t.interrupts ?? [],
    checkpoint: t.state != null && !isSnapshot(t.state) ? taskCheckpoint(t.state) : null,
    state: t.state != null && isSnapshot(t.state) ? nestedState(t.state) : null,
    result: t.result !== undefined ? t.result : null,
  }));
  return {
    values: s.values ?? {},
    next: [...(s.next ?? [])],
    tasks,
    // The checkpoint's own id is part of its metadata, as the seed's state table lists it.
    metadata: { ...(s.metadata ?? {}), ...(checkpoint ? { checkpoint_id: checkpoint.checkpoint_id } : {}) },
    created_at: s.createdAt ?? null,
    checkpoint,
    parent_checkpoint: configToCheckpoint(s.parentConfig),
  };
}

/**
 * ThreadState of the official API from a StateSnapshot. Values stay as LangGraph returns them (messages are
 * class instances): serialize with `toJson`, which writes them as dicts, exactly once on the way out.
 */
export function snapshotToState(s: StateSnapshot): ThreadStateJson {
  const state = nestedState(s);
  return {
    ...state,
    checkpoint_id: state.checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: state.parent_checkpoint?.checkpoint_id ?? null,
    interrupts: state.tasks.flatMap((t) => (t as { interrupts: unknown[] }).interrupts),
  };
}

export const EMPTY_STATE: ThreadStateJson = {
  values: {},
  next: [],
  tasks: [],
  metadata: {},
  created_at: null,
  checkpoint: null,
  parent_checkpoint: null,
  checkpoint_id: null,
  parent_checkpoint_id: null,
  interrupts: [],
};

/** Interrupts by task id, as the Thread record's `interrupts` field holds them. */
export function interruptsByTask(state: ThreadStateJson): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const t of state.tasks as { id: string; interrupts: unknown[] }[]) {
    if (t.interrupts.length) out[t.id] = t.interrupts;
  }
  return out;
}
