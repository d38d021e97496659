// Unit tests of the embedded run queue without HTTP: the in-memory line (one run at a time per thread, in
// order; a bounded number executing; delayed runs; removal) and admission through a real SQLite run store.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { LocalRunQueue, type QueuedJob } from "../../src/runs/local-queue.ts";
import { openSqliteStorage } from "../../src/storage/sqlite/index.ts";
import type { RunInput, Storage } from "../../src/storage/types.ts";
import { cleanupDir, tempDir } from "../helpers/server.ts";

interface TestJob extends QueuedJob {
  finish: () => void;
}

/** A queue whose jobs run until the test finishes them; `started` lists run ids in start order. */
function harness(storage: Storage, maxConcurrent: number) {
  const started: string[] = [];
  const queue = new LocalRunQueue<TestJob>(storage.runs, maxConcurrent, (job) => {
    started.push(job.run.run_id);
    return new Promise<void>((resolve) => {
      job.finish = () => {
        resolve();
        if (job.run.thread_id) queue.release(job.run.thread_id);
      };
    });
  });
  const jobs = new Map<string, TestJob>();
  const job = (run_id: string, thread_id: string | null): TestJob => {
    const j: TestJob = { run: { run_id, thread_id }, finish: () => {} };
    jobs.set(run_id, j);
    return j;
  };
  /** Finishes a started job and lets the queue start what is next. */
  const finish = async (runId: string) => {
    jobs.get(runId)!.finish();
    await new Promise((r) => setImmediate(r));
  };
  return { queue, started, job, finish };
}

let dir: string;
let storage: Storage;

beforeEach(() => {
  dir = tempDir("hangar-unit-queue-");
  storage = openSqliteStorage(dir, { synchronous: "OFF" });
});

afterEach(async () => {
  vi.useRealTimers();
  await storage.close();
  cleanupDir(dir);
});

describe("LocalRunQueue: the in-memory line", () => {
  it("runs one job at a time per thread, in order, and threads side by side", async () => {
    const { queue, started, job, finish } = harness(storage, 10);
    queue.add(job("a1", "A"));
    queue.add(job("a2", "A"));
    queue.add(job("b1", "B"));
    expect(started).toEqual(["a1", "b1"]);
    expect(await queue.current("A")).toBe("a1");
    expect(await queue.counts()).toEqual({ pending: 1, running: 2 });
    await finish("a1");
    expect(started).toEqual(["a1", "b1", "a2"]);
    await finish("a2");
    await finish("b1");
    expect(await queue.current("A")).toBeUndefined();
    expect(await queue.counts()).toEqual({ pending: 0, running: 0 });
  });

  it("executes at most maxConcurrent jobs at once", async () => {
    const { queue, started, job, finish } = harness(storage, 2);
    for (const t of ["A", "B", "C"]) queue.add(job(t, t));
    expect(started).toEqual(["A", "B"]);
    expect(await queue.counts()).toEqual({ pending: 1, running: 2 });
    await finish("A");
    expect(started).toEqual(["A", "B", "C"]);
  });

  it("addFirst puts a job before the thread's waiting ones", async () => {
    const { queue, started, job, finish } = harness(storage, 10);
    queue.add(job("a1", "A"));
    queue.add(job("a2", "A"));
    queue.addFirst(job("a0", "A"));
    await finish("a1");
    await finish("a0");
    expect(started).toEqual(["a1", "a0", "a2"]);
  });

  it("a delayed job waits for its delay and does not hold its thread meanwhile", async () => {
    vi.useFakeTimers();
    const { queue, started, job } = harness(storage, 10);
    queue.add(job("later", "A"), 60);
    expect(started).toEqual([]);
    expect(await queue.current("A")).toBeUndefined();
    expect(await queue.counts()).toEqual({ pending: 1, running: 0 });
    vi.advanceTimersByTime(60_000);
    expect(started).toEqual(["later"]);
  });

  it("remove takes a waiting or delayed job out; a removed ready job hands back its thread", async () => {
    vi.useFakeTimers();
    const { queue, started, job } = harness(storage, 1);
    queue.add(job("x", "X"));
    const ready = job("y", "Y");
    queue.add(ready);
    const delayed = job("d", "D");
    queue.add(delayed, 5);
    expect(queue.remove(delayed)).toEqual({ heldThread: false });
    expect(queue.remove(ready)).toEqual({ heldThread: true });
    queue.release("Y");
    vi.advanceTimersByTime(10_000);
    expect(started).toEqual(["x"]);
    expect(await queue.counts()).toEqual({ pending: 0, running: 1 });
  });
});

describe("admission through the SQLite run store", () => {
  let n = 0;
  const input = (threadId: string, strategy: RunInput["multitask_strategy"], delay = 0) => ({
    run_id: `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`,
    thread_id: threadId,
    assistant_id: "assistant",
    status: "pending" as const,
    metadata: {},
    kwargs: {},
    multitask_strategy: strategy,
    delay_seconds: delay,
  });

  async function thread(): Promise<string> {
    const id = `10000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;
    await storage.threads.create({ thread_id: id, metadata: {} });
    return id;
  }

  it("of concurrent reject admissions on an idle thread exactly one is recorded", async () => {
    const { queue } = harness(storage, 10);
    const threadId = await thread();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => queue.admit(input(threadId, "reject"))),
    );
    const admitted = results.filter((r) => r.run);
    expect(admitted).toHaveLength(1);
    for (const r of results.filter((x) => !x.run)) expect(r.current).toBe(admitted[0].run!.run_id);
    expect((await storage.runs.list(threadId, { limit: 100, offset: 0 })).length).toBe(1);
  });

  it("enqueue admits every run and reports the run holding the thread", async () => {
    const { queue } = harness(storage, 10);
    const threadId = await thread();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => queue.admit(input(threadId, "enqueue"))),
    );
    expect(results.every((r) => r.run)).toBe(true);
    expect(results[0].current).toBeNull();
    for (const r of results.slice(1)) expect(r.current).toBe(results[0].run!.run_id);
  });

  it("a delayed pending run does not hold the thread but makes it busy for reject; once running it holds it", async () => {
    const { queue } = harness(storage, 10);
    const threadId = await thread();
    const delayed = await queue.admit(input(threadId, "enqueue", 3600));
    // reject: refused, naming the delayed run.
    expect(await queue.admit(input(threadId, "reject"))).toEqual({ run: null, current: delayed.run!.run_id });
    // enqueue: admitted with no current run (it goes first), the delayed one reported.
    const now = await queue.admit(input(threadId, "enqueue"));
    expect(now.run).not.toBeNull();
    expect(now.current).toBeNull();
    expect(now.run && now.delayed).toEqual([delayed.run!.run_id]);
    await storage.runs.setStatus(now.run!.run_id, "success");
    // A delayed run started early (recovery after a restart) holds its thread.
    await storage.runs.start(delayed.run!.run_id);
    const refused = await queue.admit(input(threadId, "reject"));
    expect(refused).toEqual({ run: null, current: delayed.run!.run_id });
  });
});
