// Unit tests of the embedded run queue without HTTP (a real SQLite run store): the in-memory line (one run at a
// time per thread, in order; delayed runs; interrupt first in line; cancellation of a waiting or a taken run),
// what a worker sees of it (claim, heartbeat, complete), recovery of what a stopped process left, and admission.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MemoryRunQueue } from "../../src/runs/memory-queue.ts";
import { openSqliteStorage } from "../../src/storage/sqlite/index.ts";
import type { RunInput, Storage } from "../../src/storage/types.ts";
import { cleanupDir, tempDir } from "../helpers/server.ts";

let dir: string;
let storage: Storage;
let queue: MemoryRunQueue;
let n = 0;

beforeEach(() => {
  dir = tempDir("hangar-unit-queue-");
  storage = openSqliteStorage(dir, { synchronous: "OFF" });
  queue = new MemoryRunQueue(storage);
});

afterEach(async () => {
  vi.useRealTimers();
  await storage.close();
  cleanupDir(dir);
});

const uuid = (prefix: string) => `${prefix}-0000-4000-8000-${String(++n).padStart(12, "0")}`;

const input = (threadId: string | null, strategy: RunInput["multitask_strategy"] = "enqueue", delay = 0) => ({
  run_id: uuid("00000000"),
  thread_id: threadId,
  assistant_id: "assistant",
  status: "pending" as const,
  metadata: {},
  kwargs: {},
  multitask_strategy: strategy,
  delay_seconds: delay,
});

async function thread(): Promise<string> {
  const id = uuid("10000000");
  await storage.threads.create({ thread_id: id, metadata: {} });
  return id;
}

/** Admits a run on a thread; returns its id. */
async function admit(threadId: string, strategy: RunInput["multitask_strategy"] = "enqueue", delay = 0) {
  const r = await queue.admit({ ...input(threadId, strategy, delay), thread_id: threadId });
  return r.run!.run_id;
}

const claim = async (limit = 10) => (await queue.claim("w", 0, limit)).map((r) => r.run_id);

describe("MemoryRunQueue: the in-memory line, as a worker takes from it", () => {
  it("gives one run at a time per thread, in order, and threads side by side", async () => {
    const [A, B] = [await thread(), await thread()];
    const a1 = await admit(A);
    const a2 = await admit(A);
    const b1 = await admit(B);
    expect(await claim()).toEqual([a1, b1]);
    expect(await claim()).toEqual([]);
    expect(await queue.current(A)).toBe(a1);
    expect(await queue.counts()).toEqual({ pending: 1, running: 2 });
    expect((await storage.runs.get(A, a1))!.status).toBe("running");
    await queue.complete(a1);
    expect(await claim()).toEqual([a2]);
    await queue.complete(a2);
    await queue.complete(b1);
    expect(await queue.current(A)).toBeUndefined();
    expect(await queue.counts()).toEqual({ pending: 0, running: 0 });
    expect(await queue.ended(a1)).toBe(true);
  });

  it("gives at most `limit` runs per claim, the oldest first; stateless runs too", async () => {
    const threads = [await thread(), await thread()];
    const ids = [await admit(threads[0]), (await queue.enqueue(input(null))).run_id, await admit(threads[1])];
    expect(await claim(2)).toEqual(ids.slice(0, 2));
    expect(await claim(2)).toEqual(ids.slice(2));
  });

  it("puts a run admitted under interrupt before the thread's waiting ones", async () => {
    const A = await thread();
    const a1 = await admit(A);
    const a2 = await admit(A);
    expect(await claim()).toEqual([a1]);
    const a0 = await admit(A, "interrupt");
    await queue.complete(a1);
    expect(await claim()).toEqual([a0]);
    await queue.complete(a0);
    expect(await claim()).toEqual([a2]);
  });

  it("holds a delayed run until due, without holding its thread meanwhile, and says when it is due", async () => {
    vi.useFakeTimers();
    let due = 0;
    queue.onDue(() => due++);
    const A = await thread();
    const later = await admit(A, "enqueue", 60);
    expect(await claim()).toEqual([]);
    expect(await queue.current(A)).toBeUndefined();
    expect(await queue.active(A)).toEqual([{ run_id: later, status: "pending", delayed: true }]);
    expect(await queue.counts()).toEqual({ pending: 1, running: 0 });
    const dueBefore = due;
    vi.advanceTimersByTime(60_000);
    expect(due).toBe(dueBefore + 1);
    expect(await claim()).toEqual([later]);
  });

  it("cancels a waiting, a ready or a delayed run at once; a taken one gets the request for its worker", async () => {
    vi.useFakeTimers();
    const [A, B] = [await thread(), await thread()];
    const a1 = await admit(A);
    const a2 = await admit(A);
    const b1 = await admit(B);
    const late = await admit(B, "enqueue", 5);
    expect(await claim(1)).toEqual([a1]);
    // a2 waits behind a1; b1 is ready (it holds B); late waits for its delay.
    expect((await queue.requestCancel(a2, "interrupt"))?.was).toBe("pending");
    expect((await storage.runs.get(A, a2))!.status).toBe("interrupted");
    expect((await queue.requestCancel(b1, "rollback"))?.was).toBe("pending");
    expect(await storage.runs.get(B, b1)).toBeNull();
    expect(await queue.current(B)).toBeUndefined();
    expect((await queue.requestCancel(late, "interrupt"))?.was).toBe("pending");
    vi.advanceTimersByTime(10_000);
    expect(await claim()).toEqual([]);
    const taken = await queue.requestCancel(a1, "rollback");
    expect(taken?.was).toBe("running");
    expect(await queue.heartbeat("w", [a1], 0)).toEqual(new Map([[a1, "rollback"]]));
    expect(await queue.requestCancel(uuid("20000000"), "interrupt")).toBeNull();
    expect(await queue.listActive(null, ["pending", "running"])).toEqual([a1]);
  });

  it("takes up what a stopped process left: pending runs as they were, running ones as their next attempt", async () => {
    const [A, B, C] = [await thread(), await thread(), await thread()];
    const a1 = await admit(A);
    const b1 = await admit(B);
    const c1 = await admit(C);
    expect(await claim()).toEqual([a1, b1, c1]);
    // c1 has been started twice already (it reached the attempt limit of 2 when taken up).
    await storage.runs.start(c1);
    const pending = await admit(A);
    // A new process, on the same data.
    const next = new MemoryRunQueue(storage);
    const leftovers = await next.recover(2);
    expect(leftovers.requeued.sort()).toEqual([a1, b1, pending].sort());
    expect(leftovers.failed.map((r) => r.run_id)).toEqual([c1]);
    expect((await storage.runs.get(C, c1))!.status).toBe("error");
    expect((await storage.threads.get(C))!.status).toBe("error");
    const taken = await next.claim("w", 0, 10);
    expect(taken.map((r) => [r.run_id, r.attempt])).toEqual([
      [a1, 2],
      [b1, 2],
    ]);
    await storage.runs.setStatus(a1, "success");
    await next.complete(a1);
    expect((await next.claim("w", 0, 10)).map((r) => [r.run_id, r.attempt])).toEqual([[pending, 1]]);
    // Recovering again takes nothing this process already has.
    expect(await next.recover(2)).toEqual({ requeued: [], failed: [] });
  });
});

const stateful = (threadId: string, strategy: RunInput["multitask_strategy"], delay = 0) => ({
  ...input(threadId, strategy, delay),
  thread_id: threadId,
});

describe("admission through the SQLite run store", () => {
  it("of concurrent reject admissions on an idle thread exactly one is recorded", async () => {
    const threadId = await thread();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => queue.admit(stateful(threadId, "reject"))),
    );
    const admitted = results.filter((r) => r.run);
    expect(admitted).toHaveLength(1);
    for (const r of results.filter((x) => !x.run)) expect(r.current).toBe(admitted[0].run!.run_id);
    expect((await storage.runs.list(threadId, { limit: 100, offset: 0 })).length).toBe(1);
  });

  it("enqueue admits every run and reports the run holding the thread", async () => {
    const threadId = await thread();
    const results = await Promise.all(
      Array.from({ length: 5 }, () => queue.admit(stateful(threadId, "enqueue"))),
    );
    expect(results.every((r) => r.run)).toBe(true);
    expect(results[0].current).toBeNull();
    for (const r of results.slice(1)) expect(r.current).toBe(results[0].run!.run_id);
  });

  it("a delayed pending run does not hold the thread but makes it busy for reject; once running it holds it", async () => {
    const threadId = await thread();
    const delayed = await queue.admit(stateful(threadId, "enqueue", 3600));
    // reject: refused, naming the delayed run.
    expect(await queue.admit(stateful(threadId, "reject"))).toEqual({
      run: null,
      current: delayed.run!.run_id,
    });
    // enqueue: admitted with no current run (it goes first), the delayed one reported.
    const now = await queue.admit(stateful(threadId, "enqueue"));
    expect(now.run).not.toBeNull();
    expect(now.current).toBeNull();
    expect(now.run && now.delayed).toEqual([delayed.run!.run_id]);
    await storage.runs.setStatus(now.run!.run_id, "success");
    // A delayed run started early (recovery after a restart) holds its thread.
    await storage.runs.start(delayed.run!.run_id);
    const refused = await queue.admit(stateful(threadId, "reject"));
    expect(refused).toEqual({ run: null, current: delayed.run!.run_id });
  });
});
