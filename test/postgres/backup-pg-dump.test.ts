// The PostgreSQL backend's backup, as docs/backup.md documents it (postgres only: the embedded backend's is
// `hangar backup`, test/e2e/backup-embedded.test.ts): `pg_dump --format=custom --schema=<schema>` taken while a
// server runs 200 runs, `pg_restore` into a new database, `hangar serve` on it: every thread and checkpoint
// acknowledged before the dump began is there (read through the SDK), and the runs in flight finish.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { clusterTargetFor, DATABASE_URL, ident, testPg } from "../helpers/backend.ts";
import { expectAcknowledged, expectRunsFinish, RunLoad } from "../helpers/backup-load.ts";
import { RUNS_CONFIG, Scratch } from "../helpers/runs.ts";
import { noRetryClient, startHangar } from "../helpers/server.ts";

const run = promisify(execFile);
const scratch = new Scratch();
/** The database the dump is restored into: made by this file, dropped after it. */
const restoredDb = `hangar_backup_${process.pid}_${Date.now()}`;
const restoredUrl = (() => {
  const u = new URL(DATABASE_URL);
  u.pathname = `/${restoredDb}`;
  return u.toString();
})();

async function admin(sql: string): Promise<void> {
  const db = testPg();
  await db.connect();
  try {
    await db.query(sql);
  } finally {
    await db.end();
  }
}

afterAll(async () => {
  await admin(`DROP DATABASE IF EXISTS ${ident(restoredDb)} WITH (FORCE)`);
  scratch.cleanup();
});

describe("pg_dump and pg_restore of a deployment's schema (postgres)", () => {
  it("a dump taken during 200 runs restores every acknowledged thread and checkpoint; in-flight runs finish", async () => {
    const dataDir = join(scratch.dir, "source");
    const server = await startHangar({ config: RUNS_CONFIG, dataDir });
    const schema = server.cluster!.schema;
    const load = new RunLoad(noRetryClient(server.url), { threads: 20, runsPerThread: 10 });
    load.start();
    await load.reached(40);
    const before = load.snapshot();
    // The documented command (docs/backup.md): one consistent snapshot of the schema, in pg_dump's custom format.
    const dump = join(scratch.dir, "hangar.dump");
    await run("pg_dump", [
      "--format=custom",
      `--schema=${schema}`,
      "--no-owner",
      "--no-privileges",
      `--file=${dump}`,
      `--dbname=${DATABASE_URL}`,
    ]);
    await load.done;
    await server.stop();

    await admin(`CREATE DATABASE ${ident(restoredDb)}`);
    await run("pg_restore", [
      "--no-owner",
      "--no-privileges",
      "--exit-on-error",
      `--dbname=${restoredUrl}`,
      dump,
    ]);

    // `hangar serve` on the restored database, same schema name; a Redis prefix of its own (Redis holds nothing
    // that needs a backup). The harness's target gives the prefix (and cleans it); the env names the database.
    const target = clusterTargetFor(join(scratch.dir, "restored"));
    const restored = await startHangar({
      process: true,
      command: "serve",
      config: RUNS_CONFIG,
      dataDir: join(scratch.dir, "restored"),
      cluster: target,
      env: { DATABASE_URL: restoredUrl, HANGAR_DATABASE_SCHEMA: schema },
    });
    try {
      const client = noRetryClient(restored.url);
      await expectAcknowledged(client, before);
      // Runs pending or running in the dump (their leases expired) are taken up and finish.
      await expectRunsFinish(client, before.keys());
      const threads = await client.threads.search({ limit: 100, metadata: { load: "backup" } });
      expect(threads).toHaveLength(20);
    } finally {
      await restored.stop();
    }
  });
});
