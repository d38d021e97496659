// LangGraph's SQLite checkpointer, with the run's identifiers recorded in each checkpoint's metadata.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointMetadata, PendingWrite } from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { WriteTracker } from "./write-tracker.js";

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

/** Writes join the group-commit transaction (`begin` is called before each one) and touch the tracker. */
export class HangarSqliteSaver extends SqliteSaver {
  constructor(
    db: Database.Database,
    private begin: () => void,
    private tracker: WriteTracker,
  ) {
    super(db);
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
  ): Promise<RunnableConfig> {
    this.begin();
    this.tracker.touch(config.configurable?.thread_id);
    return super.put(config, checkpoint, enrichMetadata(config, metadata));
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    this.begin();
    this.tracker.touch(config.configurable?.thread_id);
    return super.putWrites(config, writes, taskId);
  }

  async deleteThread(threadId: string): Promise<void> {
    this.begin();
    this.tracker.touch(threadId);
    return super.deleteThread(threadId);
  }
}
