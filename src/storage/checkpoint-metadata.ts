// What both checkpointers (SQLite, PostgreSQL) record in each checkpoint's metadata besides LangGraph's own:
// the run's identifiers, so a checkpoint can be found by thread, graph, assistant or run.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointMetadata } from "@langchain/langgraph-checkpoint";

// Keys of `configurable` that describe the position in the graph, not the run: not copied to metadata.
const EXCLUDED = new Set(["checkpoint_id", "checkpoint_ns", "task_id"]);

/**
 * Adds the run's `configurable` (thread_id, graph_id, assistant_id, run_id, user_id, the caller's
 * langgraph_auth_* and request headers, ...) and its run metadata to checkpoint metadata, as the official server
 * records them.
 */
export function enrichMetadata(config: RunnableConfig, metadata: CheckpointMetadata): CheckpointMetadata {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config.configurable ?? {})) {
    if (k.startsWith("__") || EXCLUDED.has(k) || v === undefined || typeof v === "function") continue;
    if (typeof v === "object" && v !== null && !isPlainData(v)) continue;
    extra[k] = v;
  }
  return { ...extra, ...(config.metadata ?? {}), ...metadata } as CheckpointMetadata;
}

/** Plain JSON data (objects and arrays of it), not a class instance such as a store or a callback manager. */
function isPlainData(v: object): boolean {
  if (Array.isArray(v)) return v.every((x) => typeof x !== "object" || x === null || isPlainData(x));
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(v).every((x) => typeof x !== "object" || x === null || isPlainData(x));
}
