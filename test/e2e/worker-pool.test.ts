// End-to-end: the worker pool (--n-jobs-per-worker) and the limit on attempts after crashes
// (HANGAR_MAX_ATTEMPTS).
import { afterAll, describe, expect, it } from "vitest";
import { cleanupDir, noRetryClient, startHangar, tempDir, useHangar } from "../helpers/server.ts";
import {
  RUNS_CONFIG,
  Scratch,
  job,
  joinValues,
  startHeld,
  waitForStatus,
  waitForThreadStatus,
} from "../helpers/runs.ts";

const scratch = new Scratch();
afterAll(() => scratch.cleanup());

describe("--n-jobs-per-worker 1", () => {
  const hangar = useHangar({ config: RUNS_CONFIG, args: ["--n-jobs-per-worker", "1"] });

  it("a run on another thread waits pending while the only worker is busy, then runs", async () => {
    const { client } = hangar;
    const gate = scratch.gate();
    const a = await client.threads.create();
    const b = await client.threads.create();
    const held = await startHeld(client, a.thread_id, "a", 1, gate.file);
    const waiting = await client.runs.create(b.thread_id, "steps", { input: job({ label: "b", steps: 1 }) });
    // The held run keeps the only slot until its gate opens: the other stays pending meanwhile.
    expect((await client.runs.get(b.thread_id, waiting.run_id)).status).toBe("pending");
    expect((await client.runs.get(a.thread_id, held.run_id)).status).toBe("running");
    gate.open();
    expect((await joinValues(client, b.thread_id, waiting.run_id)).log).toEqual(["b:0"]);
    expect((await client.runs.get(a.thread_id, held.run_id)).status).toBe("success");
  });
});

describe("HANGAR_MAX_ATTEMPTS", () => {
  const dataDir = tempDir("hangar-attempts-");
  afterAll(() => cleanupDir(dataDir));

  it("a run interrupted by crashes more often than allowed ends in error instead of starting again", async () => {
    const env = { HANGAR_MAX_ATTEMPTS: "1" };
    // A process: it is killed mid-run.
    const first = await startHangar({ process: true, config: RUNS_CONFIG, dataDir, env });
    let threadId = "";
    let runId = "";
    try {
      const c1 = noRetryClient(first.url);
      threadId = (await c1.threads.create()).thread_id;
      runId = (await startHeld(c1, threadId, "x", 1, scratch.gate().file)).run_id;
    } finally {
      await first.kill();
    }
    const second = await startHangar({ config: RUNS_CONFIG, dataDir, env });
    try {
      const c2 = noRetryClient(second.url);
      await waitForStatus(c2, threadId, runId, ["error"]);
      await waitForThreadStatus(c2, threadId, "error");
    } finally {
      await second.stop();
    }
  });
});
