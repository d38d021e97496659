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
import { checkKeys, type StorageCipher } from "../encryption/index.js";
import { encryptedStorage } from "../encryption/storage.js";
import { LazyResealer } from "../encryption/reseal.js";
import { sqliteRawColumns } from "./raw-columns.js";

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
  opts: { synchronous?: Synchronous; storeIndex?: StoreIndex; cipher?: StorageCipher | null } = {},
): SqliteStorage {
  const mode = opts.synchronous ?? "FULL";
  // SQLite itself never fsyncs on commit here; FULL durability comes from the group commit's fsync.
  const db = openDatabase(dataDir, mode === "OFF" ? "OFF" : "NORMAL");
  registerJsonFunctions(db);
  const cipher = opts.cipher ?? null;
  // With encryption at rest, what a write replaces or deletes is overwritten on disk, not left in free pages.
  if (cipher) db.pragma("secure_delete = ON");
  try {
    const used = (db.prepare("SELECT key_id FROM encryption_keys").all() as { key_id: string }[]).map(
      (r) => r.key_id,
    );
    const record = checkKeys(used, cipher, db.name);
    if (record) {
      db.prepare("INSERT INTO encryption_keys (key_id, first_used_at) VALUES (?, ?)").run(
        record,
        new Date().toISOString(),
      );
    }
  } catch (e) {
    db.close();
    throw e;
  }
  const durable = mode === "FULL" || mode === "EXTRA";
  const gc = new GroupCommit(db, durable ? `${db.name}-wal` : undefined);
  const walCheckpoints = startWalCheckpointer(db, {
    onFailure: (message) =>
      rootLogger().warn(`hangar: SQLite WAL checkpoint failed (tried again): ${message}`),
  });
  const begin = () => gc.begin();
  const tracker = new WriteTracker();
  const lazy = cipher
    ? new LazyResealer(sqliteRawColumns(db, begin), cipher, (e) =>
        rootLogger().warn(`hangar: could not encrypt values again with the current key: ${e.message}`),
      )
    : undefined;
  const checkpointer = new HangarSqliteSaver(db, begin, tracker, cipher, (threadId) => {
    lazy?.request("checkpoints", "thread_id", threadId);
    lazy?.request("writes", "thread_id", threadId);
  });
  const store = new SqliteStore(db, begin, opts.storeIndex);
  // Create the checkpointer's tables now, so thread copy/delete can rely on them.
  (checkpointer as unknown as { setup(): void }).setup();
  const storage: SqliteStorage = {
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
  return cipher ? encryptedStorage(storage, cipher, lazy) : storage;
}
