// LangGraph's SQLite checkpointer, with the run's identifiers recorded in each checkpoint's metadata.
import type { RunnableConfig } from "@langchain/core/runnables";
import type {
  Checkpoint,
  CheckpointListOptions,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { enrichMetadata } from "../checkpoint-metadata.js";
import type { WriteTracker } from "./write-tracker.js";
import { statementCache } from "./rows.js";
import type { StorageCipher } from "../encryption/cipher.js";
import { CheckpointCrypto } from "../encryption/checkpoints.js";
import { RecentPuts } from "../recent-puts.js";

/**
 * Writes join the group-commit transaction (`begin` is called before each one) and touch the tracker. With a
 * cipher, what is stored is encrypted (see CheckpointCrypto).
 */
export class HangarSqliteSaver extends SqliteSaver {
  private crypto: CheckpointCrypto | undefined;
  /** The checkpoints written last (runs/end-state.ts). */
  readonly recentPuts = new RecentPuts();

  constructor(
    db: Database.Database,
    private begin: () => void,
    private tracker: WriteTracker,
    cipher?: StorageCipher | null,
    onStaleThread?: (threadId: string) => void,
  ) {
    const crypto = cipher ? new CheckpointCrypto(cipher, onStaleThread) : undefined;
    super(db, crypto?.serde);
    this.crypto = crypto;
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
    const enriched = enrichMetadata(config, metadata);
    let written: RunnableConfig;
    if (!this.crypto) written = await super.put(config, checkpoint, enriched);
    else {
      const sealed = await this.crypto.sealMetadata(enriched);
      // Sealing awaited: the write joins the group commit open now.
      this.begin();
      written = await super.put(config, checkpoint, sealed);
    }
    this.recentPuts.record(config, checkpoint, enriched);
    return written;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = await super.getTuple(config);
    return this.crypto ? this.crypto.openTuple(tuple) : tuple;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    if (!this.crypto) return yield* super.list(config, options);
    this.crypto.checkFilter(options?.filter);
    for await (const tuple of super.list(config, options)) yield (await this.crypto.openTuple(tuple))!;
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
