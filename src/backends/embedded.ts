// The embedded backend: one process, SQLite in a data directory, the run queue and the event logs in memory.
import { mkdirSync, rmSync } from "node:fs";
import type { Synchronous } from "../storage/sqlite/db.js";
import { lockDataDir, type DirLock } from "../storage/sqlite/dir-lock.js";
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
  /**
   * Whether to hold the data directory for this server alone (src/storage/sqlite/dir-lock.ts); false only for a
   * successor revision the control plane starts beside its predecessor on the same data (HANGAR_RECOVER_ON_START
   * false: it resumes nothing until told).
   */
  exclusive: boolean;
}

export function openEmbeddedBackend(opts: EmbeddedOptions): Backend {
  let lock: DirLock | undefined;
  // The first directory this open created (the data directory or a parent of it), if any.
  let created: string | undefined;
  if (opts.exclusive) {
    created = mkdirSync(opts.dataDir, { recursive: true });
    lock = lockDataDir(opts.dataDir);
  }
  let storage: ReturnType<typeof openSqliteStorage>;
  try {
    storage = openSqliteStorage(opts.dataDir, {
      synchronous: opts.synchronous,
      storeIndex: opts.storeIndex,
      cipher: opts.cipher,
    });
  } catch (e) {
    lock?.release();
    throw e;
  }
  const broker = new StreamBroker(opts.resumableTtlMs, undefined, undefined, opts.threadLogsCacheBytes);
  const close = async () => {
    try {
      await broker.close();
    } finally {
      await storage.close().finally(() => lock?.release());
    }
  };
  return {
    storage,
    queue: new MemoryRunQueue(storage),
    broker,
    graphThreads: { kind: "sqlite", ...storage.graphThreadAccess },
    where: opts.dataDir,
    close,
    abandon: async () => {
      try {
        if (created) rmSync(created, { recursive: true, force: true });
      } finally {
        await close();
      }
    },
  };
}
