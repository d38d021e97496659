// LangGraph's SQLite checkpointer, with the run's identifiers recorded in each checkpoint's metadata.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointMetadata, PendingWrite } from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { enrichMetadata } from "../checkpoint-metadata.js";
import type { WriteTracker } from "./write-tracker.js";
import { statementCache } from "./rows.js";

/** Writes join the group-commit transaction (`begin` is called before each one) and touch the tracker. */
export class HangarSqliteSaver extends SqliteSaver {
  constructor(
    db: Database.Database,
    private begin: () => void,
    private tracker: WriteTracker,
  ) {
    super(db);
    // LangGraph's saver prepares its statements on every call; give it the database with a statement cache (the
    // database's own methods otherwise, called on it).
    const prepare = statementCache(db);
    this.db = Object.create(db, { prepare: { value: prepare } }) as Database.Database;
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
