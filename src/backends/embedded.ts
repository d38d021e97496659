// The embedded backend: one process, SQLite in a data directory, the run queue and the event logs in memory.
import type { Synchronous } from "../storage/sqlite/db.js";
import { openSqliteStorage } from "../storage/sqlite/index.js";
import type { StoreIndex } from "../storage/store-index.js";
import type { StorageCipher } from "../storage/encryption/index.js";
import { MemoryRunQueue } from "../runs/memory-queue.js";
import { StreamBroker } from "../streams/channel.js";
import type { Backend } from "./types.js";

export interface EmbeddedOptions {
  dataDir: string;
  /** SQLite's durability (HANGAR_SQLITE_SYNC). */
  synchronous: Synchronous;
  storeIndex?: StoreIndex;
  /** How long a resumable run's events stay joinable after it ends. */
  resumableTtlMs: number;
  /** The size of the idle thread logs kept in memory, in all (HANGAR_THREAD_LOGS_CACHE_BYTES). */
  threadLogsCacheBytes: number;
  /** Encryption at rest; null: off. */
  cipher?: StorageCipher | null;
}

export function openEmbeddedBackend(opts: EmbeddedOptions): Backend {
  const storage = openSqliteStorage(opts.dataDir, {
    synchronous: opts.synchronous,
    storeIndex: opts.storeIndex,
    cipher: opts.cipher,
  });
  const broker = new StreamBroker(opts.resumableTtlMs, undefined, undefined, opts.threadLogsCacheBytes);
  return {
    storage,
    queue: new MemoryRunQueue(storage),
    broker,
    graphThreads: { kind: "sqlite", ...storage.graphThreadAccess },
    where: opts.dataDir,
    close: async () => {
      await broker.close();
      await storage.close();
    },
  };
}
