// The embedded database as a graph thread sees it (src/runs/graph-threads/remote-sqlite.ts), on a real SQLite file and
// a real worker thread: writes are posted without waiting, yet a later read sees them in order, a write's result is
// fetched when read, and a write that failed makes the next call that waits throw its error, once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MessageChannel, Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { serveDatabase } from "../../src/runs/graph-threads/remote-sqlite.ts";

describe("remote-sqlite: a graph thread's statements on the API thread's connection", () => {
  const dir = mkdtempSync(join(tmpdir(), "hangar-remote-sqlite-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("orders writes not waited for before later reads, and reports a failed write at the next wait", async () => {
    const db = new Database(join(dir, "db.sqlite"));
    db.exec("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)");
    const { port1, port2 } = new MessageChannel();
    const flag = new SharedArrayBuffer(4);
    let begun = 0;
    const stop = serveDatabase(
      db,
      () => begun++,
      () => {},
      port1,
      flag,
    );
    const worker = new Worker(new URL("../fixtures/remote-sqlite/worker.mjs", import.meta.url), {
      workerData: { port: port2, flag },
      transferList: [port2],
    });
    try {
      const steps = await new Promise<{ name: string; value?: unknown; error?: { code?: string } }[]>(
        (resolve, reject) => {
          worker.once("message", resolve);
          worker.once("error", reject);
        },
      );
      const by = Object.fromEntries(steps.map((s) => [s.name, s]));
      expect(by["insert a"].value).toBe("posted");
      expect(by["read after a write not waited for"].value).toBe(1);
      expect(by["changes of a write, read later"].value).toBe(1);
      expect(by["flush"].value).toBe(5);
      expect(by["a failing write not waited for"].value).toBe("posted");
      expect(by["the next read gives its error"].error?.code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
      expect(by["the read after that"].value).toBe(5);
      expect(by["a failing write, then flush"].error?.code).toBe("SQLITE_CONSTRAINT_PRIMARYKEY");
      // Every write opened the group commit's transaction on the API thread.
      expect(begun).toBeGreaterThanOrEqual(5);
      expect((db.prepare("SELECT v FROM t WHERE k = 'a'").get() as { v: number }).v).toBe(1);
    } finally {
      await worker.terminate();
      stop();
      db.close();
    }
  });
});
