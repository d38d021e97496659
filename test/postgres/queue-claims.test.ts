// Scale-out backend only (the "postgres" vitest project): how often a worker asks PostgreSQL for runs, and how a
// run's admission and end reach it. A worker looks at the queue when a wake-up signal comes (a new run), on its poll
// timer, and after a run's end only when something may wait for it: the ended run's thread has a next run in line,
// or the worker's last look filled every free slot. The poll is set to an hour here, so every run below starts
// through a signal or a run's end.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testPg } from "../helpers/backend.ts";
import { BACKEND, clusterOf, noRetryClient, startHangar, type SpawnedHangar } from "../helpers/server.ts";
import { RUNS_CONFIG, Scratch, job, joinValues, startHeld, waitFor, waitForStatus } from "../helpers/runs.ts";

const scratch = new Scratch();
const db = testPg();
const HOUR_MS = String(3_600_000);

/** A `hangar serve` whose connections count calls of SQL functions under an application name of their own. */
async function countingServer(): Promise<{ server: SpawnedHangar; appName: string }> {
  const appName = `hangar-claims-${randomUUID().slice(0, 8)}`;
  const server = await startHangar({
    process: true,
    config: RUNS_CONFIG,
    env: { HANGAR_QUEUE_POLL_MS: HOUR_MS, PGOPTIONS: "-c track_functions=all", PGAPPNAME: appName },
  });
  return { server, appName };
}

/** Calls of the deployment's SQL functions, by name, once the server stopped and its connections reported them. */
async function callsAfterStop(server: SpawnedHangar, appName: string): Promise<Record<string, number>> {
  const schema = clusterOf(server).schema;
  await server.stop();
  // A backend reports its counts when it exits: wait until none of the server's connections is left.
  await waitFor(`the connections of ${appName} to end`, async () => {
    const { rows } = await db.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
      [appName],
    );
    return rows[0].n === 0;
  });
  const { rows } = await waitFor("claim_runs in pg_stat_user_functions", async () => {
    await db.query("SELECT pg_stat_clear_snapshot()");
    const r = await db.query<{ funcname: string; calls: string }>(
      "SELECT funcname, calls FROM pg_stat_user_functions WHERE schemaname = $1",
      [schema],
    );
    return r.rows.some((f) => f.funcname === "claim_runs") ? r : undefined;
  });
  return Object.fromEntries(rows.map((r) => [r.funcname, Number(r.calls)]));
}

beforeAll(async () => {
  expect(BACKEND, "queue-claims.test.ts runs in the postgres project only").toBe("postgres");
  await db.connect();
});

afterAll(async () => {
  await db.end();
  scratch.cleanup();
});

describe("a worker's looks at the PostgreSQL queue", () => {
  it("once per run for runs one after the other: the wake-up's claim, none after each end", async () => {
    const { server, appName } = await countingServer();
    const client = noRetryClient(server.url);
    const n = 8;
    for (let i = 0; i < n; i++) {
      const { thread_id } = await client.threads.create();
      const out = (await client.runs.wait(thread_id, "steps", {
        input: job({ label: `s${i}`, steps: 1 }),
      })) as {
        log: string[];
      };
      expect(out.log).toEqual([`s${i}:0`]);
    }
    const calls = await callsAfterStop(server, appName);
    // The first look at start, then one per run (its wake-up signal). Before, every run's end added one.
    expect(calls.claim_runs).toBeGreaterThanOrEqual(n);
    expect(calls.claim_runs).toBeLessThanOrEqual(n + 1);
    // Each run's admission and each run's end: one call of a function each (one round trip, where each was a
    // transaction of five or four statements).
    expect(calls.admit_run).toBe(n);
    expect(calls.end_run).toBe(n);
  });

  it("a run queued behind its thread's running run starts at that run's end, without the poll", async () => {
    const { server } = await countingServer();
    const client = noRetryClient(server.url);
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const first = await startHeld(client, thread_id, "a", 1, gate.file);
    // Its wake-up finds the thread busy: the queued run is taken only after the first one's end.
    const second = await client.runs.create(thread_id, "steps", {
      input: job({ label: "b", steps: 1 }),
      multitaskStrategy: "enqueue",
    });
    gate.open();
    const firstOut = await joinValues(client, thread_id, first.run_id);
    expect(firstOut.log).toEqual(["a:0", "a:1", "a:2", "a:3"]);
    const secondOut = await joinValues(client, thread_id, second.run_id);
    expect(secondOut.log).toEqual(["a:0", "a:1", "a:2", "a:3", "b:0"]);
    await server.stop();
  });

  it("and one queued behind a run that fails starts at that run's end too (the thread then says error, not busy)", async () => {
    const { server } = await countingServer();
    const client = noRetryClient(server.url);
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const first = await client.runs.create(thread_id, "steps", {
      input: job({ label: "a", steps: 2, hold_at: 0, gate_file: gate.file, fail_at: 0 }),
    });
    await waitForStatus(client, thread_id, first.run_id, ["running"]);
    const second = await client.runs.create(thread_id, "steps", {
      input: job({ label: "b", steps: 1 }),
      multitaskStrategy: "enqueue",
    });
    gate.open();
    const secondOut = await joinValues(client, thread_id, second.run_id);
    expect(secondOut.log).toEqual(["b:0"]);
    expect((await client.runs.get(thread_id, first.run_id)).status).toBe("error");
    await server.stop();
  });
});
