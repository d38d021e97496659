// The embedded storage: one SQLite file (WAL) holding assistants, threads, runs and LangGraph checkpoints.
import { HangarSqliteSaver } from "./checkpointer.js";
import type Database from "better-sqlite3";
import type { Storage } from "../types.js";
import { SqliteAssistants } from "./assistants.js";
import { openDatabase, type Synchronous } from "./db.js";
import { GroupCommit } from "./group-commit.js";
import { registerJsonFunctions } from "./json-filter.js";
import { SqliteCrons } from "./crons.js";
import { SqliteRuns } from "./runs.js";
import { SqliteStore } from "./store.js";
import type { StoreIndex } from "../store-index.js";
import { SqliteThreads } from "./threads.js";
import { WriteTracker } from "./write-tracker.js";
import { startWalCheckpointer } from "./wal-checkpointer.js";
import { rootLogger } from "../../lib/logger.js";

/**
 * Durability: FULL (default) acknowledges a write only after the WAL is fsynced (asynchronously, shared by
 * concurrent writes); NORMAL acknowledges after the commit (survives a process crash, not a power loss).
 */
/** The embedded storage, and what graph threads use of it (their statements run on this connection). */
export interface SqliteStorage extends Storage {
  graphThreadAccess: { db: Database.Database; begin: () => void; touch: (threadId: string) => void };
}

export function openSqliteStorage(
  dataDir: string,
  opts: { synchronous?: Synchronous; storeIndex?: StoreIndex } = {},
): SqliteStorage {
  const mode = opts.synchronous ?? "FULL";
  // SQLite itself never fsyncs on commit here; FULL durability comes from the group commit's fsync.
  const db = openDatabase(dataDir, mode === "OFF" ? "OFF" : "NORMAL");
  registerJsonFunctions(db);
  const durable = mode === "FULL" || mode === "EXTRA";
  const gc = new GroupCommit(db, durable ? `${db.name}-wal` : undefined);
  const walCheckpoints = startWalCheckpointer(db, {
    onFailure: (message) =>
      rootLogger().warn(`hangar: SQLite WAL checkpoint failed (tried again): ${message}`),
  });
  const begin = () => gc.begin();
  const tracker = new WriteTracker();
  const checkpointer = new HangarSqliteSaver(db, begin, tracker);
  const store = new SqliteStore(db, begin, opts.storeIndex);
  // Create the checkpointer's tables now, so thread copy/delete can rely on them.
  (checkpointer as unknown as { setup(): void }).setup();
  return {
    assistants: new SqliteAssistants(db, begin),
    threads: new SqliteThreads(db, begin, tracker),
    runs: new SqliteRuns(db, begin),
    crons: new SqliteCrons(db, begin),
    checkpointer,
    store,
    sync: () => gc.sync(),
    graphThreadAccess: { db, begin, touch: (threadId) => tracker.touch(threadId) },
    checkpointToken: (threadId) => tracker.token(threadId),
    close: async () => {
      store.stop();
      gc.close();
      await walCheckpoints.close();
      db.close();
    },
  };
}
