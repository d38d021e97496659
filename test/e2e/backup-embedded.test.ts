// `hangar backup` and `hangar restore` of the embedded backend (embedded only: the PostgreSQL backend's backup is
// pg_dump, test/postgres/backup-pg-dump.test.ts). A backup taken by the CLI while a server runs 200 runs holds
// every thread and checkpoint acknowledged before it began; restore refuses a data directory in use or not empty;
// runs in flight in a backup are taken up again by the next server; a backup of data written by an older release
// (the upgrade fixture) restores and opens; the control plane's data directory is backed up with its key.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expectAcknowledged, expectRunsFinish, RunLoad } from "../helpers/backup-load.ts";
import { job, logNow, logOf, RUNS_CONFIG, Scratch, startHeld, waitForStatus } from "../helpers/runs.ts";
import { noRetryClient, ROOT, runHangar, startHangar } from "../helpers/server.ts";
import { readThread, type Expected } from "../fixtures/upgrade/snapshot.ts";

const scratch = new Scratch();
afterAll(() => scratch.cleanup());

/** A data directory of this file (removed with the scratch directory). */
const dataDirOf = (name: string) => join(scratch.dir, name);

async function hangar(...args: string[]): Promise<string> {
  const r = await runHangar(args);
  expect(r.code, `hangar ${args.join(" ")}:\n${r.output}`).toBe(0);
  return r.output;
}

describe("hangar backup of a running embedded server", () => {
  it("taken during 200 runs over 20 threads, restores every thread and checkpoint acknowledged before it", async () => {
    const dataDir = dataDirOf("load");
    const server = await startHangar({ config: RUNS_CONFIG, dataDir });
    const load = new RunLoad(noRetryClient(server.url), { threads: 20, runsPerThread: 10 });
    load.start();
    await load.reached(40);
    const before = load.snapshot();
    const out = join(scratch.dir, "load-backup");
    const output = await hangar("backup", "--data-dir", dataDir, "--out", `${out}/`);
    expect(output).toMatch(/backup of .* written to .*load-backup\/hangar\.sqlite/);
    expect(output).toMatch(/20 threads, [\d,]+ runs.*, [\d,]+ checkpoints/);
    // The backup is one file: nothing beside it (its summary, read from it, left no -wal or -shm).
    expect(readdirSync(out)).toEqual(["hangar.sqlite"]);
    // The load went on meanwhile; the server is still running: a restore into its data directory is refused.
    const refused = await runHangar(["restore", "--from", out, "--data-dir", dataDir, "--force"]);
    expect(refused.code).toBe(1);
    expect(refused.output).toMatch(/data directory .* is in use: a running process/);
    await load.done;
    await server.stop();
    // Stopped, but not empty: refused without --force.
    const notEmpty = await runHangar(["restore", "--from", out, "--data-dir", dataDir]);
    expect(notEmpty.code).toBe(1);
    expect(notEmpty.output).toMatch(/is not empty; pass --force/);

    const restoredDir = dataDirOf("load-restored");
    expect(await hangar("restore", "--from", out, "--data-dir", restoredDir)).toMatch(/20 threads/);
    const restored = await startHangar({ config: RUNS_CONFIG, dataDir: restoredDir });
    try {
      const client = noRetryClient(restored.url);
      await expectAcknowledged(client, before);
      // The runs that were in flight when the backup began are taken up again and finish.
      await expectRunsFinish(client, before.keys());
    } finally {
      await restored.stop();
    }
  });

  it("a run in flight in the backup, and the one queued behind it, are taken up again after a restore", async () => {
    const gate = scratch.gate();
    const server = await startHangar({ config: RUNS_CONFIG, dataDir: dataDirOf("held") });
    const c = noRetryClient(server.url);
    const threadId = (await c.threads.create()).thread_id;
    // Two steps checkpointed, then held at step 2 until the gate opens (after the restore).
    const held = await startHeld(c, threadId, "held", 2, gate.file);
    const queued = await c.runs.create(threadId, "steps", { input: job({ label: "queued", steps: 1 }) });
    const out = join(scratch.dir, "held.sqlite");
    expect(await hangar("backup", "--data-dir", dataDirOf("held"), "--out", out)).toMatch(
      /2 runs \(2 pending or running\)/,
    );
    const restoredDir = dataDirOf("held-restored");
    expect(await hangar("restore", "--from", out, "--data-dir", restoredDir)).toMatch(
      /the 2 pending or running runs are taken up again/,
    );
    const restored = await startHangar({ config: RUNS_CONFIG, dataDir: restoredDir });
    try {
      gate.open();
      const rc = noRetryClient(restored.url);
      await waitForStatus(rc, threadId, held.run_id, ["success"]);
      // Its checkpoints after the restore are its second attempt's.
      const history = await rc.threads.getHistory(threadId, { limit: 100 });
      const attempts = history
        .filter((h) => h.metadata?.run_id === held.run_id)
        .map((h) => h.metadata?.run_attempt);
      expect(attempts).toContain(1);
      expect(attempts).toContain(2);
      await waitForStatus(rc, threadId, queued.run_id, ["success"]);
      // Resumed from its last checkpoint: steps 0 and 1 are not done again.
      expect(await logNow(rc, threadId)).toEqual([...logOf("held", 5), "queued:0"]);
    } finally {
      await restored.stop();
      await server.stop();
    }
  });
});

describe("hangar backup and restore: refusals", () => {
  it("names a missing data directory, one that is not Hangar's, an existing output and a bad backup", async () => {
    const missing = await runHangar(["backup", "--data-dir", dataDirOf("nope"), "--out", dataDirOf("x")]);
    expect(missing.code).toBe(1);
    expect(missing.output).toMatch(/the data directory .*nope does not exist/);

    const empty = dataDirOf("empty");
    mkdirSync(empty);
    const notHangar = await runHangar(["backup", "--data-dir", empty, "--out", dataDirOf("x")]);
    expect(notHangar.output).toMatch(/is not a Hangar data directory \(it has no hangar\.sqlite\)/);
    writeFileSync(join(empty, "hangar.sqlite"), "not a database");
    const garbage = await runHangar(["backup", "--data-dir", empty, "--out", dataDirOf("x")]);
    expect(garbage.output).toMatch(/hangar\.sqlite is not an SQLite database/);

    const exists = join(scratch.dir, "exists.sqlite");
    writeFileSync(exists, "");
    const upgrade = dataDirOf("refusals");
    mkdirSync(upgrade);
    copyFileSync(join(ROOT, "test/fixtures/upgrade/embedded/hangar.sqlite"), join(upgrade, "hangar.sqlite"));
    const taken = await runHangar(["backup", "--data-dir", upgrade, "--out", exists]);
    expect(taken.code).toBe(1);
    expect(taken.output).toMatch(/exists\.sqlite exists; pass --force to overwrite it/);
    expect(await hangar("backup", "--data-dir", upgrade, "--out", exists, "--force")).toMatch(/8 threads/);

    const bad = await runHangar([
      "restore",
      "--from",
      join(empty, "hangar.sqlite"),
      "--data-dir",
      dataDirOf("y"),
    ]);
    expect(bad.code).toBe(1);
    expect(bad.output).toMatch(/the backup: .* is not an SQLite database/);
    expect(existsSync(dataDirOf("y"))).toBe(false);
  });
});

describe("a backup of data written by commit 8d60327", () => {
  it("restores, and `hangar dev` opens it with the old threads, their state and history", async () => {
    const FIXTURES = join(ROOT, "test/fixtures/upgrade");
    const expected = JSON.parse(readFileSync(join(FIXTURES, "embedded/expected.json"), "utf8")) as Expected;
    const old = dataDirOf("old-release");
    mkdirSync(old);
    copyFileSync(join(FIXTURES, "embedded/hangar.sqlite"), join(old, "hangar.sqlite"));
    const out = join(scratch.dir, "old-release-backup");
    await hangar("backup", "--data-dir", old, "--out", `${out}/`);
    const restoredDir = dataDirOf("old-release-restored");
    await hangar("restore", "--from", out, "--data-dir", restoredDir);
    const server = await startHangar({
      process: true,
      config: join(FIXTURES, "project/langgraph.json"),
      dataDir: restoredDir,
    });
    try {
      const client = noRetryClient(server.url);
      for (const [id, t] of Object.entries(expected.snapshot.threads.byId)) {
        const now = await readThread(client, id);
        expect(now.state.values, `state of ${id}`).toEqual(t.state.values);
        expect(now.history.length, `history of ${id}`).toBe(t.history.length);
        expect(now.runList, `runs of ${id}`).toEqual(t.runList);
      }
    } finally {
      await server.stop();
    }
  });
});

describe("hangar backup --control-plane", () => {
  it("copies the store, the secrets' key, uploads and the deployments' data; the restored store opens", async () => {
    const cp = dataDirOf("cp");
    const created = await hangar("control-plane", "admin", "create-org", "--name", "acme", "--data-dir", cp);
    const orgId = /Created organization (\S+)/.exec(created)![1];
    // A deployment's embedded data, and an uploaded source, as the control plane keeps them.
    const deployment = join(cp, "deployments", "d1", "data");
    mkdirSync(deployment, { recursive: true });
    copyFileSync(
      join(ROOT, "test/fixtures/upgrade/embedded/hangar.sqlite"),
      join(deployment, "hangar.sqlite"),
    );
    mkdirSync(join(cp, "uploads", "d1"), { recursive: true });
    writeFileSync(join(cp, "uploads", "d1", "src.tar.gz"), "tarball");

    const out = join(scratch.dir, "cp-backup");
    expect(await hangar("backup", "--control-plane", "--data-dir", cp, "--out", out)).toMatch(
      /control-plane\.db, 1 deployments' embedded data/,
    );
    expect(existsSync(join(out, "secret.key"))).toBe(true);
    const restoredDir = dataDirOf("cp-restored");
    await hangar("restore", "--control-plane", "--from", out, "--data-dir", restoredDir);
    expect(readFileSync(join(restoredDir, "secret.key"), "utf8")).toBe(
      readFileSync(join(cp, "secret.key"), "utf8"),
    );
    expect(readFileSync(join(restoredDir, "uploads", "d1", "src.tar.gz"), "utf8")).toBe("tarball");
    expect(existsSync(join(restoredDir, "deployments", "d1", "data", "hangar.sqlite"))).toBe(true);
    // The restored store holds the organization and opens with the restored key (another key is refused).
    expect(
      await hangar(
        "control-plane",
        "admin",
        "create-workspace",
        "--org",
        orgId,
        "--name",
        "w",
        "--data-dir",
        restoredDir,
      ),
    ).toMatch(/Created workspace/);
  });
});
