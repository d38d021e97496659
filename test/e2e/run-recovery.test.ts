// End-to-end: a server killed (SIGKILL) in the middle of a background run; a new server on the same data
// directory resumes the run from its last checkpoint with `attempt: 2`, and runs the queued one after it.
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, noRetryClient, startHangar, tempDir, type HangarProcess } from "../helpers/server.ts";
import {
  RUNS_CONFIG,
  Scratch,
  type StepsValues,
  drain,
  iteratorOf,
  job,
  joinValues,
  markerLines,
  readUntil,
  waitFor,
  waitForLogEntry,
  waitForStatus,
  waitForThreadStatus,
} from "../helpers/runs.ts";

const scratch = new Scratch();
const gate = scratch.gate();
const marker = scratch.marker();
let dataDir = "";
let first: HangarProcess | undefined;
let second: HangarProcess | undefined;
let client: Client;
let threadId = "";
let runId = "";
let queuedId = "";
/** A thread with a run delayed by an hour (after_seconds), created before the kill. */
const delayedMarker = scratch.marker();
let delayedThread = "";
let delayedId = "";

beforeAll(async () => {
  dataDir = tempDir("hangar-recovery-");
  // A process: it is killed mid-run.
  first = await startHangar({ process: true, config: RUNS_CONFIG, dataDir });
  const c1 = noRetryClient(first.url);
  threadId = (await c1.threads.create()).thread_id;
  // Two quick steps, then step 2 holds until the gate opens (which happens only after the restart).
  const run = await c1.runs.create(threadId, "steps", {
    input: job({ label: "k", steps: 4, delay_ms: 1, hold_at: 2, gate_file: gate.file, marker_file: marker }),
    streamMode: ["updates", "values"],
    streamResumable: true,
  });
  runId = run.run_id;
  const queued = await c1.runs.create(threadId, "steps", {
    input: job({ label: "after", steps: 1, marker_file: marker }),
  });
  queuedId = queued.run_id;
  expect(queued.status).toBe("pending");
  delayedThread = (await c1.threads.create()).thread_id;
  delayedId = (
    await c1.runs.create(delayedThread, "steps", {
      input: job({ label: "later", steps: 1, marker_file: delayedMarker }),
      afterSeconds: 3600,
    })
  ).run_id;
  await waitForLogEntry(c1, threadId, "k:1");
  await waitFor("step k:2 to be in flight", () => markerLines(marker).includes("start k:2"));

  await first.kill();
  second = await startHangar({ config: RUNS_CONFIG, dataDir });
  client = noRetryClient(second.url);
});

afterAll(async () => {
  if (first) await first.kill();
  if (second) await second.stop();
  if (dataDir) cleanupDir(dataDir);
  scratch.cleanup();
});

describe("a run whose server was killed mid-run", () => {
  it("is taken up again on restart, from its last checkpoint, with attempt 2, and finishes", async () => {
    // Taken up again: it is running (held at step 2 once more), not left stuck.
    await waitForStatus(client, threadId, runId, ["running"]);
    await waitFor("step k:2 to be entered again", () =>
      markerLines(marker).filter((l) => l === "start k:2").length === 2 ? true : undefined,
    );

    const ac = new AbortController();
    try {
      const stream = iteratorOf(
        client.runs.joinStream(threadId, runId, { lastEventId: "-1", signal: ac.signal }),
      );
      const head = await readUntil("the first replayed event", stream, () => true);
      gate.open();
      const parts = [...head, ...(await drain("the rest of the run", stream))];
      const metas = parts
        .filter((p) => p.event === "metadata")
        .map((p) => p.data as { run_id: string; attempt: number });
      expect(metas.length, `events: ${JSON.stringify(parts.map((p) => p.event))}`).toBeGreaterThan(0);
      for (const m of metas) expect(m.run_id).toBe(runId);
      expect(metas.map((m) => m.attempt)).toContain(2);
      expect(Math.max(...metas.map((m) => m.attempt))).toBe(2);
    } finally {
      ac.abort();
    }

    // Join answers with the thread's values: the queued run may already have added to them.
    const out = await joinValues(client, threadId, runId);
    expect(out.log.slice(0, 4)).toEqual(["k:0", "k:1", "k:2", "k:3"]);
    expect((await client.runs.get(threadId, runId)).status).toBe("success");
  });

  it("the run queued behind it runs after it", async () => {
    const out = await joinValues(client, threadId, queuedId, "join of the queued run");
    expect(out.log).toEqual(["k:0", "k:1", "k:2", "k:3", "after:0"]);
    expect((await client.runs.get(threadId, queuedId)).status).toBe("success");
    await waitForThreadStatus(client, threadId, "idle");
  });

  it("after the restart, each step's side effect happened once", () => {
    const done = markerLines(marker).filter((l) => l.startsWith("done"));
    // The held step and everything after it ran once, in order, after the restart.
    expect(done.slice(-3)).toEqual(["done k:2", "done k:3", "done after:0"]);
    for (const step of ["k:0", "k:1", "k:2", "k:3", "after:0"]) {
      expect(done.filter((l) => l === `done ${step}`).length, `done ${step}`).toBeGreaterThanOrEqual(1);
    }
    for (const step of ["k:2", "k:3", "after:0"]) {
      expect(
        done.filter((l) => l === `done ${step}`),
        `done ${step}`,
      ).toHaveLength(1);
    }
  });

  it("steps the API reported completed before the kill are not run again", () => {
    // Before the kill, GET /threads/{id}/state showed k:0 and k:1 done: their checkpoints must survive
    // the kill, so the resumed attempt starts at step 2.
    const lines = markerLines(marker);
    expect(lines.filter((l) => l === "start k:0")).toHaveLength(1);
    expect(lines.filter((l) => l === "start k:1")).toHaveLength(1);
    expect(lines.filter((l) => l === "start k:2")).toHaveLength(2);
  });

  it("the run's history is continuous across the restart", async () => {
    const history = await client.threads.getHistory<StepsValues>(threadId, { limit: 1000 });
    const ofRun = history.filter((s) => s.metadata?.run_id === runId).map((s) => s.values.log ?? []);
    for (const log of [["k:0"], ["k:0", "k:1"], ["k:0", "k:1", "k:2"], ["k:0", "k:1", "k:2", "k:3"]]) {
      expect(ofRun.map((l) => JSON.stringify(l))).toContain(JSON.stringify(log));
    }
    // No checkpoint repeats a step (the resumed attempt did not start over).
    for (const log of ofRun) expect(new Set(log).size).toBe(log.length);
  });

  it("a run delayed by after_seconds still waits out its delay after the restart", async () => {
    // A run created now on its thread goes first (the delayed one does not hold the thread); had the restart
    // started the delayed run at once, it would have run before.
    const now = (await client.runs.wait(delayedThread, "steps", {
      input: job({ label: "now", steps: 1 }),
    })) as unknown as StepsValues;
    expect(now.log).toEqual(["now:0"]);
    expect((await client.runs.get(delayedThread, delayedId)).status).toBe("pending");
    expect(markerLines(delayedMarker)).toEqual([]);
    await client.runs.cancel(delayedThread, delayedId);
    await waitForStatus(client, delayedThread, delayedId, ["interrupted"]);
  });
});
