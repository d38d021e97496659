// What both checkpointers (SQLite, PostgreSQL) record in each checkpoint's metadata besides LangGraph's own:
// the run's identifiers, so a checkpoint can be found by thread, graph, assistant or run.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointMetadata } from "@langchain/langgraph-checkpoint";

// Keys of `configurable` that describe the position in the graph, not the run: not copied to metadata.
const EXCLUDED = new Set(["checkpoint_id", "checkpoint_ns", "checkpoint_map", "task_id"]);

/** Adds `configurable` scalars (thread_id, graph_id, assistant_id, run_id, ...) and run metadata to checkpoint metadata. */
export function enrichMetadata(config: RunnableConfig, metadata: CheckpointMetadata): CheckpointMetadata {
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(config.configurable ?? {})) {
    if (k.startsWith("__") || EXCLUDED.has(k)) continue;
    if (v === null || ["string", "number", "boolean"].includes(typeof v)) extra[k] = v;
  }
  return { ...extra, ...(config.metadata ?? {}), ...metadata } as CheckpointMetadata;
}
