// Converts LangGraph state snapshots and checkpoint configs to the Agent Server's ThreadState shape.
import type { StateSnapshot } from "@langchain/langgraph";
import { serializeError } from "./serde.js";

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

function taskConfigToCheckpoint(config: any): CheckpointRef | null {
  const c = config?.configurable;
  if (!c?.thread_id) return null;
  return {
    thread_id: c.thread_id,
    checkpoint_ns: c.checkpoint_ns || "",
    checkpoint_id: c.checkpoint_id || null,
    checkpoint_map: c.checkpoint_map || null,
  };
}

const isSnapshot = (s: unknown): s is StateSnapshot =>
  typeof s === "object" && s !== null && "values" in s && "next" in s;

export interface ThreadStateJson {
  values: unknown;
  next: string[];
  tasks: unknown[];
  metadata: Record<string, unknown> | null;
  created_at: string | null;
  checkpoint: CheckpointRef | null;
  parent_checkpoint: CheckpointRef | null;
  checkpoint_id: string | null;
  parent_checkpoint_id: string | null;
  interrupts: unknown[];
}

/**
 * ThreadState of the official API from a StateSnapshot. Values stay as LangGraph returns them (messages are
 * class instances): serialize with `toJson`, which writes them as dicts, exactly once on the way out.
 */
export function snapshotToState(s: StateSnapshot): ThreadStateJson {
  const checkpoint = configToCheckpoint(s.config);
  const parent = configToCheckpoint(s.parentConfig);
  const tasks = s.tasks.map((t: any) => ({
    id: t.id,
    name: t.name,
    path: t.path ?? [],
    error: t.error != null ? serializeError(t.error).message : null,
    interrupts: t.interrupts ?? [],
    checkpoint: t.state != null && !isSnapshot(t.state) ? taskConfigToCheckpoint(t.state) : null,
    state: t.state != null && isSnapshot(t.state) ? snapshotToState(t.state) : null,
    result: t.result !== undefined ? t.result : null,
  }));
  return {
    values: s.values ?? {},
    next: [...(s.next ?? [])],
    tasks,
    metadata: s.metadata ?? {},
    created_at: s.createdAt ?? null,
    checkpoint,
    parent_checkpoint: parent,
    checkpoint_id: checkpoint?.checkpoint_id ?? null,
    parent_checkpoint_id: parent?.checkpoint_id ?? null,
    interrupts: tasks.flatMap((t) => t.interrupts as unknown[]),
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
