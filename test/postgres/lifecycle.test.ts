// Scale-out backend only (the "postgres" vitest project): what several worker processes must get right
// together. A cron fires each scheduled date exactly once although both workers run the scheduler; a worker
// stopped with SIGTERM lets a short run finish, hands a long one back to the queue, and the other worker
// resumes it from its last checkpoint (attempt 2): no run is lost or left `running`.
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterTargetFor, ident, testPg } from "../helpers/backend.ts";
import {
  BACKEND,
  cleanupDir,
  noRetryClient,
  startHangar,
  tempDir,
  type HangarProcess,
  type SpawnedHangar,
} from "../helpers/server.ts";
import { RUNS_CONFIG, Scratch, job, logOf, markerLines, waitFor } from "../helpers/runs.ts";

const scratch = new Scratch();
const home = tempDir("hangar-lifecycle-");
const target = clusterTargetFor(home);
let api: HangarProcess;
const workers: SpawnedHangar[] = [];
let client: Client;

// A short grace period so the hand-back happens within the test, and a lease far longer than the test so
// that only the hand-back (not an expired lease) can move the run to the other worker.
const env = { HANGAR_SHUTDOWN_GRACE_SECONDS: "1", HANGAR_LEASE_SECONDS: "120" };

beforeAll(async () => {
  expect(BACKEND, "lifecycle.test.ts runs in the postgres project only").toBe("postgres");
  // Processes: a worker is stopped with SIGTERM.
  api = await startHangar({ process: true, config: RUNS_CONFIG, mode: "api", cluster: target, env });
  for (let i = 0; i < 2; i++) {
    workers.push(
      await startHangar({ process: true, config: RUNS_CONFIG, mode: "worker", cluster: target, env }),
    );
  }
  client = noRetryClient(api.url);
});

afterAll(async () => {
  for (const p of [api, ...workers]) await p?.stop();
  scratch.cleanup();
  cleanupDir(home);
});

describe("several workers", () => {
  it("a cron fires each scheduled date once, although both workers run the scheduler", async () => {
    const marker = scratch.marker();
    const endTime = new Date(Date.now() + 5_000).toISOString();
    const cron = await client.crons.create("steps", {
      schedule: "* * * * * *",
      input: job({ label: "tick", steps: 1, marker_file: marker }),
      endTime,
      onRunCompleted: "keep",
    } as any);
    // After end_time the cron stops (next_run_date null).
    await waitFor(
      "the cron to pass its end_time",
      async () => {
        const c = (await client.crons.search({ limit: 100 })).find((x) => x.cron_id === cron.cron_id);
        return Date.now() > Date.parse(endTime) && c?.next_run_date === null;
      },
      15_000,
    );
    const threads = await client.threads.search({ metadata: { cron_id: cron.cron_id }, limit: 100 });
    expect(threads.length).toBeGreaterThanOrEqual(3);
    const dates: string[] = [];
    for (const t of threads) {
      const runs = await client.runs.list(t.thread_id);
      expect(runs).toHaveLength(1);
      dates.push((runs[0].metadata as any).cron_scheduled_at);
    }
    // One thread per scheduled date: no date fired twice, every date is a whole second before end_time.
    expect(new Set(dates).size).toBe(dates.length);
    for (const d of dates) {
      expect(Date.parse(d) % 1000).toBe(0);
      expect(Date.parse(d)).toBeLessThanOrEqual(Date.parse(endTime));
    }
    // Every run executed its step exactly once.
    await waitFor(
      "every cron run to finish",
      () => markerLines(marker).filter((l) => l.startsWith("done")).length === dates.length,
      15_000,
    );
    expect(markerLines(marker).filter((l) => l.startsWith("start"))).toHaveLength(dates.length);
  });

  it("SIGTERM: a worker hands an unfinished run back and the other worker resumes it as attempt 2", async () => {
    const marker = scratch.marker();
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "steps", {
      input: job({ label: "long", steps: 6, delay_ms: 700, marker_file: marker }),
      streamResumable: true,
    } as any);
    // Wait until a worker is a couple of steps in, then stop that worker gracefully.
    await waitFor("two steps done", () => markerLines(marker).includes("done long:1"));
    // worker_id is <host>:<pid>:<random>: the pid says which child holds the run.
    const db = testPg();
    await db.connect();
    const { rows } = await db
      .query(`SELECT worker_id FROM ${ident(target.schema)}.runs WHERE run_id = $1`, [run.run_id])
      .finally(() => db.end());
    const pid = Number(String(rows[0]?.worker_id).split(":")[1]);
    const holder = workers.find((w) => w.proc.pid === pid);
    if (!holder) throw new Error(`no worker of this test holds the run (worker_id ${rows[0]?.worker_id})`);
    await holder.stop();
    expect(holder.output()).toMatch(/handed 1 unfinished run\(s\) back to the queue/);
    const values = (await client.runs.join(thread.thread_id, run.run_id)) as { log: string[] };
    expect(values.log).toEqual(logOf("long", 6));
    const done = await client.runs.get(thread.thread_id, run.run_id);
    expect(done.status).toBe("success");
    // The steps completed before the hand-back were not run again.
    const doneLines = markerLines(marker).filter((l) => l.startsWith("done"));
    expect(new Set(doneLines).size).toBe(doneLines.length);
    // The resumed attempt announced itself in the run's stream.
    const attempts: number[] = [];
    for await (const part of client.runs.joinStream(thread.thread_id, run.run_id, {
      lastEventId: "-1",
    } as any)) {
      if (part.event === "metadata") attempts.push((part.data as any).attempt);
    }
    expect(attempts).toEqual([1, 2]);
  });
});
