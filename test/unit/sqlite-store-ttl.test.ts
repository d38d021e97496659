// The embedded store's TTL on a real SQLite file: reads restart the TTL of items that have one unless told not to,
// and refreshTtl (what the store routes call under an auth filter, for the items a user may see) restarts it for
// the items named, leaving items without a TTL without one.
import Database from "better-sqlite3";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { openSqliteStorage } from "../../src/storage/sqlite/index.ts";
import type { Storage } from "../../src/storage/types.ts";
import { cleanupDir, tempDir } from "../helpers/server.ts";

let dir: string;
let storage: Storage;

beforeEach(async () => {
  dir = tempDir();
  storage = openSqliteStorage(dir);
});
afterEach(async () => {
  await storage.close();
  cleanupDir(dir);
});

it("refreshTtl restarts the TTL of the items named that have one", async () => {
  const s = storage.store;
  const ns = ["ttl"];
  await s.putItem(ns, "long", { v: 1 }, { ttl: 10 });
  await s.putItem(ns, "forever", { v: 2 }, {});
  await storage.sync();
  const file = join(dir, "hangar.sqlite");
  const expiresAt = (key: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return (
        db.prepare("SELECT expires_at FROM store_items WHERE key = ?").get(key) as {
          expires_at: number | null;
        }
      ).expires_at;
    } finally {
      db.close();
    }
  };
  const soon = Date.now() + 60_000;
  const db = new Database(file);
  db.prepare("UPDATE store_items SET expires_at = ? WHERE key = 'long'").run(soon);
  db.close();
  await s.getItem(ns, "long", { refreshTtl: false });
  expect(expiresAt("long")).toBe(soon);
  await s.refreshTtl([
    { namespace: ns, key: "long" },
    { namespace: ns, key: "forever" },
  ]);
  await storage.sync();
  expect(expiresAt("long")).toBeGreaterThan(Date.now() + 9 * 60_000);
  expect(expiresAt("forever")).toBeNull();
});
