// SQLite's WAL checkpoints off the API's thread (src/storage/sqlite/wal-checkpointer.ts), on a real data directory:
// the storage's own connection never checkpoints; the checkpointer's thread copies the WAL into the database file,
// and everything written reads back after a reopen.
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DB_FILE } from "../../src/storage/sqlite/db.ts";
import { openSqliteStorage } from "../../src/storage/sqlite/index.ts";
import type { SqliteStorage } from "../../src/storage/sqlite/index.ts";
import { cleanupDir, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

let dir: string;
let storage: SqliteStorage | undefined;

afterEach(async () => {
  await storage?.close();
  storage = undefined;
  cleanupDir(dir);
});

describe("WAL checkpoints on a thread of their own", () => {
  it("the server's connection never checkpoints; the thread copies the WAL into the database file", async () => {
    dir = tempDir("hangar-unit-wal-");
    storage = openSqliteStorage(dir, { synchronous: "FULL" });
    const { db } = storage.graphThreadAccess;
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    const file = join(dir, DB_FILE);
    const before = statSync(file).size;
    // About 6 MB of store items: past SQLite's default autocheckpoint (1000 pages), which no longer applies here.
    const value = { text: "x".repeat(6000) };
    for (let i = 0; i < 1000; i++) await storage.store.put(["wal", String(i % 10)], `k${i}`, value);
    await storage.sync();
    // Only the thread can have grown the database file: its checkpoint copied the WAL's pages into it.
    await waitFor(
      "the WAL's pages checkpointed into the file",
      () => statSync(file).size > before + 4_000_000,
    );
    await storage.close();
    storage = openSqliteStorage(dir, { synchronous: "FULL" });
    const items = await storage.store.search(["wal"], { limit: 2000 });
    expect(items).toHaveLength(1000);
  });
});
