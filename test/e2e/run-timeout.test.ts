// End-to-end, both backends: the run timeout, `BG_JOB_TIMEOUT_SECS` as in the official Agent Server. A run that holds
// past it is stopped as a cancel stops it and ends `timeout`, its stream with an `error` event naming the limit; its
// thread is left `error` (as the official server leaves it) and its next queued run starts. A node spinning in
// synchronous code on a graph thread is ended as a cancel ends it; a run resumed by another server (attempt 2) is
// held to the limit too. A malformed value stops the start, naming the variable. Ordered by events (marker files,
// gates that never open, statuses), never by the clock.
import { afterAll, describe, expect, it } from "vitest";
import {
  RUNS_CONFIG,
  Scratch,
  drain,
  iteratorOf,
  job,
  logNow,
  markerLines,
  readUntil,
  waitFor,
  waitForStatus,
  joinValues,
  valuesWithin,
  waitForThreadStatus,
} from "../helpers/runs.ts";
import { cleanupDir, noRetryClient, startHangar, tempDir, useHangar } from "../helpers/server.ts";

/** Seconds: short enough for a quick test, long enough that a plain run never reaches it on a loaded machine. */
const LIMIT = "2";
const hangar = useHangar({ config: RUNS_CONFIG, env: { BG_JOB_TIMEOUT_SECS: LIMIT } });
const scratch = new Scratch();
afterAll(() => scratch.cleanup());

interface RunError {
  error: string;
  message: string;
}

/** The error a timed-out run reports: the official exception name, and the variable with its value. */
function expectTimeoutError(e: unknown): void {
  const err = e as RunError;
  expect(err.error).toBe("TimeoutError");
  expect(err.message).toContain(`BG_JOB_TIMEOUT_SECS (${LIMIT} s)`);
}

describe("run timeout (BG_JOB_TIMEOUT_SECS)", () => {
  it("a run held past the limit ends `timeout` with an error event; its thread is `error`; the next run starts", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate(); // never opened
    const marker = scratch.marker();
    const stream = iteratorOf(
      client.runs.stream(thread_id, "steps", {
        input: job({ label: "t", steps: 3, hold_at: 1, gate_file: gate.file, marker_file: marker }),
        streamMode: ["values"],
      }),
    );
    const head = await readUntil("the run's metadata", stream, (p) => p.event === "metadata");
    const runId = (head.at(-1)!.data as { run_id: string }).run_id;
    await waitFor("the run to hold at step 1", () => markerLines(marker).includes("start t:1"));
    // Joined while it holds; and a run queued behind it on the thread.
    const joined = client.runs.join(thread_id, runId);
    const next = await client.runs.create(thread_id, "steps", {
      input: job({ label: "n", steps: 1 }),
      multitaskStrategy: "enqueue",
    });

    const rest = await drain("the rest of the timed-out run's stream", stream);
    const last = rest.at(-1)!;
    expect(last.event).toBe("error");
    expectTimeoutError(last.data);
    expect(rest.filter((p) => p.event === "error")).toHaveLength(1);
    expectTimeoutError((await valuesWithin("join of the timed-out run", joined)).__error__);
    expect((await client.runs.get(thread_id, runId)).status).toBe("timeout");
    // The step it held at never completed, nor any after it.
    expect(markerLines(marker)).toEqual(["start t:0", "done t:0", "start t:1"]);

    // The queued run starts once the timed-out one ended, and succeeds with the completed step kept.
    await waitForStatus(client, thread_id, next.run_id, ["success"]);
    await waitForThreadStatus(client, thread_id, "idle");
    expect(await logNow(client, thread_id)).toEqual(["t:0", "n:0"]);
    const runs = await client.runs.list(thread_id);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual(
      expect.arrayContaining([
        [runId, "timeout"],
        [next.run_id, "success"],
      ]),
    );
  });

  it("alone on its thread, a timed-out run leaves it `error` with the timeout; a new run makes it idle again", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate(); // never opened
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "a", steps: 2, hold_at: 0, gate_file: gate.file }),
    });
    await waitForStatus(client, thread_id, run.run_id, ["timeout"]);
    const thread = (await waitForThreadStatus(client, thread_id, "error")) as { error?: unknown };
    expectTimeoutError(thread.error);
    // A finished timed-out run joins with its error.
    expectTimeoutError((await joinValues(client, thread_id, run.run_id)).__error__);
    const values = await valuesWithin(
      "a run after the timeout",
      client.runs.wait(thread_id, "steps", { input: job({ label: "b", steps: 1 }) }),
    );
    expect(values.log).toEqual(["b:0"]);
    expect((await client.threads.get(thread_id)).status).toBe("idle");
  });

  it("a malformed or negative value stops the start with a message naming the variable", async () => {
    for (const bad of ["soon", "-5", "0"]) {
      const dataDir = tempDir();
      try {
        const started = startHangar({ config: RUNS_CONFIG, dataDir, env: { BG_JOB_TIMEOUT_SECS: bad } });
        await expect(started).rejects.toThrow(
          `BG_JOB_TIMEOUT_SECS must be a positive number of seconds, got '${bad}'`,
        );
      } finally {
        cleanupDir(dataDir);
      }
    }
  });
});

describe("run timeout with graph threads", () => {
  const threaded = useHangar({
    config: RUNS_CONFIG,
    env: { BG_JOB_TIMEOUT_SECS: LIMIT, HANGAR_GRAPH_THREADS: "1", HANGAR_GRAPH_CANCEL_GRACE_SECONDS: "1" },
  });

  it("a node spinning in synchronous code past the limit is ended as a cancel ends it; the thread takes runs again", async () => {
    const { client } = threaded;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate(); // never opened
    const marker = scratch.marker();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "s", steps: 2, spin_at: 0, gate_file: gate.file, marker_file: marker }),
    });
    await waitFor("the run to spin", () => markerLines(marker).includes("start s:0"));
    await waitForStatus(client, thread_id, run.run_id, ["timeout"]);
    const thread = (await waitForThreadStatus(client, thread_id, "error")) as { error?: unknown };
    expectTimeoutError(thread.error);
    expect(threaded.server.output()).toContain("did not stop it within 1000 ms of its cancellation");
    const values = await valuesWithin(
      "a run after the timeout",
      client.runs.wait(thread_id, "steps", { input: job({ label: "after", steps: 1 }) }),
    );
    expect(values.log).toEqual(["after:0"]);
  });
});

describe("run timeout of a resumed run", () => {
  it("a run resumed by the next server (its attempt 2) times out there too", async () => {
    const dataDir = tempDir();
    try {
      // The first server has the official default limit (an hour): the run holds there until the server stops.
      const first = await startHangar({ config: RUNS_CONFIG, dataDir });
      const client = noRetryClient(first.url);
      const { thread_id } = await client.threads.create();
      const gate = scratch.gate(); // never opened
      const marker = scratch.marker();
      const run = await client.runs.create(thread_id, "steps", {
        input: job({ label: "r", steps: 3, hold_at: 1, gate_file: gate.file, marker_file: marker }),
      });
      await waitFor("the run to hold at step 1", () => markerLines(marker).includes("start r:1"));
      await first.stop();
      expect(markerLines(marker)).toEqual(["start r:0", "done r:0", "start r:1"]);

      const second = await startHangar({
        config: RUNS_CONFIG,
        dataDir,
        cluster: first.cluster,
        env: { BG_JOB_TIMEOUT_SECS: LIMIT },
      });
      try {
        const c2 = noRetryClient(second.url);
        await waitForStatus(c2, thread_id, run.run_id, ["timeout"]);
        // It resumed from its last checkpoint: step 1 started again, and never completed.
        expect(markerLines(marker)).toEqual(["start r:0", "done r:0", "start r:1", "start r:1"]);
        const thread = (await waitForThreadStatus(c2, thread_id, "error")) as { error?: unknown };
        expectTimeoutError(thread.error);
        expect(await logNow(c2, thread_id)).toEqual(["r:0"]);
      } finally {
        await second.stop();
      }
    } finally {
      cleanupDir(dataDir);
    }
  });
});
