// Unit tests of src/streams/channel.ts: the in-process event logs (EventLog, RunChannel) and the embedded broker
// (StreamBroker): ids, replay from an id or "next", retention limits, ending, aborting, and the registry's lifetimes.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  EventLog,
  RunChannel,
  StreamBroker,
  serialize,
  type StreamEvent,
} from "../../src/streams/channel.js";

/** Every event of a subscription that ends on its own (the log is closed, or the signal aborted). */
async function all(gen: AsyncGenerator<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const ev of gen) out.push(ev);
  return out;
}

/** The next `n` events of a subscription, leaving it open. */
async function take(gen: AsyncGenerator<StreamEvent>, n: number): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  while (out.length < n) {
    const r = await gen.next();
    if (r.done) throw new Error(`the subscription ended after ${out.length} of ${n} events`);
    out.push(r.value);
  }
  return out;
}

/** Lets every pending callback of this turn run (microtasks and I/O callbacks), without any delay. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const ids = (events: StreamEvent[]) => events.map((e) => e.id);

afterEach(() => {
  vi.useRealTimers();
});

describe("serialize", () => {
  it("serializes scalars and objects as JSON", () => {
    expect(serialize(1)).toBe("1");
    expect(serialize("a")).toBe('"a"');
    expect(serialize(null)).toBe("null");
    expect(serialize(undefined)).toBe("null");
    expect(serialize({ a: [1, { b: true }] })).toBe('{"a":[1,{"b":true}]}');
  });

  it("serializes a LangChain-style message (toDict) as a dict with its type", () => {
    const message = { toDict: () => ({ type: "ai", data: { content: "hi", id: "m1" } }) };
    expect(JSON.parse(serialize({ messages: [message] }))).toEqual({
      messages: [{ content: "hi", id: "m1", type: "ai" }],
    });
  });

  it("serializes the same object once within a turn, and afresh in the next one", async () => {
    const value = { n: 1 };
    const first = serialize(value);
    value.n = 2;
    // Same turn: the text of the first call (the run publishes one event to two logs in one turn).
    expect(serialize(value)).toBe(first);
    expect(serialize({ n: 2 })).toBe('{"n":2}');
    await turn();
    expect(serialize(value)).toBe('{"n":2}');
  });
});

describe("EventLog", () => {
  it("numbers events from 0 and keeps the data as JSON text", async () => {
    const log = new EventLog();
    expect(log.nextId).toBe(0);
    expect(log.publish("values", { a: 1 })).toBe(0);
    expect(log.publish("updates", [1, 2])).toBe(1);
    expect(log.publishRaw("custom", '"raw text"')).toBe(2);
    expect(log.nextId).toBe(3);
    log.close();
    expect(await all(log.subscribe(0))).toEqual([
      { id: 0, event: "values", data: '{"a":1}' },
      { id: 1, event: "updates", data: "[1,2]" },
      { id: 2, event: "custom", data: '"raw text"' },
    ]);
  });

  it("replays from any id: that event and the later ones", async () => {
    const log = new EventLog();
    for (let i = 0; i < 5; i++) log.publish("e", i);
    log.close();
    expect(ids(await all(log.subscribe(2)))).toEqual([2, 3, 4]);
    expect(ids(await all(log.subscribe(4)))).toEqual([4]);
    expect(ids(await all(log.subscribe(5)))).toEqual([]);
    expect(ids(await all(log.subscribe(-1)))).toEqual([0, 1, 2, 3, 4]);
    // The default is from the start.
    expect(ids(await all(log.subscribe()))).toEqual([0, 1, 2, 3, 4]);
  });

  it('"next" gives only what is published once reading starts', async () => {
    const log = new EventLog();
    log.publish("old", 0);
    log.publish("old", 1);
    const sub = log.subscribe("next");
    // A generator starts at its first read: that is when "next" is taken.
    const first = sub.next();
    log.publish("new", 2);
    log.publish("new", 3);
    log.close();
    expect((await first).value).toEqual({ id: 2, event: "new", data: "2" });
    expect(await all(sub)).toEqual([{ id: 3, event: "new", data: "3" }]);
  });

  it('"next" on a closed log ends at once, without events', async () => {
    const log = new EventLog();
    log.publish("e", 0);
    log.close();
    expect(await all(log.subscribe("next"))).toEqual([]);
  });

  it("a subscriber waits for new events and gets them as they come, in order", async () => {
    const log = new EventLog();
    const sub = log.subscribe(0);
    const first = sub.next();
    await turn();
    log.publish("a", 1);
    expect((await first).value).toEqual({ id: 0, event: "a", data: "1" });
    const rest = take(sub, 3);
    log.publish("b", 2);
    log.publish("c", 3);
    log.publish("d", 4);
    expect((await rest).map((e) => e.event)).toEqual(["b", "c", "d"]);
    log.close();
    expect(await sub.next()).toEqual({ done: true, value: undefined });
  });

  it("a subscriber from an id not yet published starts there", async () => {
    const log = new EventLog();
    log.publish("e", 0);
    const sub = log.subscribe(3);
    for (let i = 1; i < 5; i++) log.publish("e", i);
    log.close();
    expect(ids(await all(sub))).toEqual([3, 4]);
  });

  it("every subscriber reads the same event objects (one copy, whatever the number of readers)", async () => {
    const log = new EventLog();
    const a = log.subscribe(0);
    const b = log.subscribe(0);
    log.publish("e", { x: 1 });
    log.close();
    const [ea, eb] = [await all(a), await all(b)];
    expect(ea).toHaveLength(1);
    expect(ea[0]).toBe(eb[0]);
  });

  it("closing ends waiting subscribers after what they have not read yet", async () => {
    const log = new EventLog();
    const waiting = all(log.subscribe(0));
    await turn();
    log.publish("e", 0);
    log.close();
    expect(ids(await waiting)).toEqual([0]);
  });

  it("refuses events once closed (id -1, nothing kept)", async () => {
    const log = new EventLog();
    log.publish("e", 0);
    log.close();
    expect(log.closed).toBe(true);
    expect(log.publish("late", 1)).toBe(-1);
    expect(log.publishRaw("late", "1")).toBe(-1);
    expect(log.nextId).toBe(1);
    expect(ids(await all(log.subscribe(0)))).toEqual([0]);
  });

  it("an aborted signal ends a waiting subscription without closing the log", async () => {
    const log = new EventLog();
    log.publish("e", 0);
    const ac = new AbortController();
    const sub = all(log.subscribe(0, ac.signal));
    await turn();
    ac.abort();
    expect(ids(await sub)).toEqual([0]);
    expect(log.closed).toBe(false);
    // Others still read it.
    log.publish("e", 1);
    log.close();
    expect(ids(await all(log.subscribe(0)))).toEqual([0, 1]);
  });

  it("an aborted signal stops a subscription between two events it could read", async () => {
    const log = new EventLog();
    for (let i = 0; i < 3; i++) log.publish("e", i);
    const ac = new AbortController();
    const sub = log.subscribe(0, ac.signal);
    expect((await sub.next()).value?.id).toBe(0);
    ac.abort();
    expect(await sub.next()).toEqual({ done: true, value: undefined });
  });

  it("a signal aborted while the reader holds the last event ends it at its next read (no wait for more)", async () => {
    // As a stream whose client leaves while an event is being written: the log stays open (a thread's).
    const log = new EventLog();
    log.publish("e", 0);
    const ac = new AbortController();
    const sub = log.subscribe(0, ac.signal);
    expect((await sub.next()).value?.id).toBe(0);
    ac.abort();
    expect(await sub.next()).toEqual({ done: true, value: undefined });
    expect(log.closed).toBe(false);
  });

  it("a signal aborted before subscribing gives nothing", async () => {
    const log = new EventLog();
    log.publish("e", 0);
    expect(await all(log.subscribe(0, AbortSignal.abort()))).toEqual([]);
  });

  it("keeps at most maxEvents events; ids go on, replay starts at the oldest kept", async () => {
    const log = new EventLog(3);
    for (let i = 0; i < 5; i++) expect(log.publish("e", i)).toBe(i);
    expect(log.nextId).toBe(5);
    log.close();
    expect(ids(await all(log.subscribe(0)))).toEqual([2, 3, 4]);
    expect(ids(await all(log.subscribe(3)))).toEqual([3, 4]);
  });

  it("keeps at most maxBytes of data, dropping the oldest events", async () => {
    const log = new EventLog(Infinity, 10);
    log.publishRaw("e", "aaaa"); // 4
    log.publishRaw("e", "bbbb"); // 8
    log.publishRaw("e", "cc"); // 10: still within
    log.publishRaw("e", "d"); // 11: drops "aaaa"
    log.close();
    expect((await all(log.subscribe(0))).map((e) => e.data)).toEqual(["bbbb", "cc", "d"]);
  });

  it("always keeps the newest event, however large", async () => {
    const log = new EventLog(Infinity, 5);
    log.publishRaw("e", "ab");
    log.publishRaw("e", "x".repeat(100));
    log.close();
    expect((await all(log.subscribe(0))).map((e) => [e.id, e.data.length])).toEqual([[1, 100]]);
    const one = new EventLog(0);
    one.publish("e", 1);
    one.close();
    expect(ids(await all(one.subscribe(0)))).toEqual([0]);
  });

  it("a subscriber that fell behind retention goes on from the oldest event kept", async () => {
    const log = new EventLog(2);
    log.publish("e", 0);
    const sub = log.subscribe(0);
    expect(ids(await take(sub, 1))).toEqual([0]);
    for (let i = 1; i < 6; i++) log.publish("e", i);
    // 1, 2 and 3 were dropped while it was not reading.
    expect(ids(await take(sub, 2))).toEqual([4, 5]);
    log.close();
    expect(await sub.next()).toEqual({ done: true, value: undefined });
  });
});

describe("RunChannel", () => {
  it("is an unbounded event log named by its run", async () => {
    const ch = new RunChannel("run-1");
    expect(ch).toBeInstanceOf(EventLog);
    expect(ch.runId).toBe("run-1");
    for (let i = 0; i < 3000; i++) ch.publishRaw("e", "x".repeat(1000));
    ch.close();
    const events = await all(ch.subscribe(0));
    expect(events).toHaveLength(3000);
    expect(events[0].id).toBe(0);
  });
});

describe("StreamBroker", () => {
  it("opens one log per run, the same on every call", () => {
    const broker = new StreamBroker();
    const a = broker.open("r1");
    expect(a).toBeInstanceOf(RunChannel);
    expect(a.runId).toBe("r1");
    expect(broker.open("r1")).toBe(a);
    expect(broker.get("r1")).toBe(a);
    expect(broker.open("r2")).not.toBe(a);
    expect(broker.get("unknown")).toBeUndefined();
  });

  it("finish closes the run's log: readers get what was published, then the end", async () => {
    const broker = new StreamBroker();
    const log = broker.open("r1");
    const reader = all(log.subscribe(0));
    log.publish("values", { v: 1 });
    broker.finish("r1", false);
    expect(await reader).toEqual([{ id: 0, event: "values", data: '{"v":1}' }]);
    expect(log.publish("late", 1)).toBe(-1);
    // Finishing an unknown run does nothing.
    expect(() => broker.finish("unknown", true)).not.toThrow();
  });

  it("keeps a finished resumable log joinable for the TTL, then forgets it", async () => {
    vi.useFakeTimers();
    const broker = new StreamBroker(5_000);
    broker.open("r1").publish("values", 1);
    broker.finish("r1", true);
    vi.advanceTimersByTime(4_999);
    const kept = broker.get("r1");
    expect(kept).toBeDefined();
    expect(ids(await all(kept!.subscribe(-1)))).toEqual([0]);
    vi.advanceTimersByTime(1);
    expect(broker.get("r1")).toBeUndefined();
  });

  it("forgets a finished non-resumable log after a second (time for its readers to drain)", () => {
    vi.useFakeTimers();
    const broker = new StreamBroker(60_000);
    broker.open("r1");
    broker.finish("r1", false);
    vi.advanceTimersByTime(999);
    expect(broker.get("r1")).toBeDefined();
    vi.advanceTimersByTime(1);
    expect(broker.get("r1")).toBeUndefined();
  });

  it("gives one log per thread, bounded by the thread limits and never closed by runs", async () => {
    const broker = new StreamBroker(60_000, 3, 1_000_000);
    const t = broker.thread("t1");
    expect(broker.thread("t1")).toBe(t);
    expect(broker.thread("t2")).not.toBe(t);
    for (let i = 0; i < 5; i++) t.publish("values", i);
    broker.finish("anything", true);
    expect(t.closed).toBe(false);
    const sub = t.subscribe(0);
    expect(ids(await take(sub, 3))).toEqual([2, 3, 4]);
    broker.dropThread("t1");
    expect(await sub.next()).toEqual({ done: true, value: undefined });
  });

  it("bounds a thread's log by bytes too", async () => {
    const broker = new StreamBroker(60_000, 1000, 6);
    const t = broker.thread("t1");
    t.publishRaw("e", "abc");
    t.publishRaw("e", "def");
    t.publishRaw("e", "g");
    t.close();
    expect((await all(t.subscribe(0))).map((e) => e.data)).toEqual(["def", "g"]);
  });

  it("dropThread ends the thread's readers and forgets it: the next log starts afresh", async () => {
    const broker = new StreamBroker();
    const t = broker.thread("t1");
    t.publish("e", 0);
    t.publish("e", 1);
    const reader = all(t.subscribe("next"));
    await turn();
    broker.dropThread("t1");
    expect(await reader).toEqual([]);
    expect(t.closed).toBe(true);
    const again = broker.thread("t1");
    expect(again).not.toBe(t);
    expect(again.nextId).toBe(0);
    // Dropping an unknown thread does nothing.
    expect(() => broker.dropThread("unknown")).not.toThrow();
  });

  it("keeps idle thread logs within their cache: the idle longest go first, held and read ones stay", async () => {
    // Room for about two idle logs of one small event each.
    const broker = new StreamBroker(60_000, 2_000, 1_000_000, 1_100);
    const held = broker.holdThread("held");
    const read = broker.thread("read");
    const sub = read.subscribe("next");
    const first = sub.next();
    await turn();
    const logs = ["a", "b", "c", "d"].map((id) => {
      const log = broker.thread(id);
      log.publish("e", id);
      return log;
    });
    // Held and read logs are not idle; of the idle ones, the two newest are kept.
    expect(broker.idleThreadLogs().count).toBe(2);
    expect(broker.thread("c")).toBe(logs[2]);
    expect(broker.thread("d")).toBe(logs[3]);
    const heldLog = broker.thread("held");
    heldLog.publish("e", "still here");
    expect(broker.thread("held")).toBe(heldLog);
    // "a" was dropped: its new log numbers its events after every id a dropped log used.
    const a = broker.thread("a");
    expect(a).not.toBe(logs[0]);
    expect(a.nextId).toBe(1);
    read.publish("e", "x");
    expect((await first).value).toMatchObject({ id: 0, data: '"x"' });
    // Released (and no longer read), they become idle and the cache trims itself again.
    held();
    held();
    await sub.return(undefined);
    expect(broker.idleThreadLogs().count).toBe(2);
    expect(broker.idleThreadLogs().bytes).toBeLessThanOrEqual(1_100);
  });

  it("a log dropped from the cache before its first read is the thread's again when read", async () => {
    const broker = new StreamBroker(60_000, 2_000, 1_000_000, 0);
    const t = broker.thread("t1");
    expect(broker.idleThreadLogs().count).toBe(0);
    const sub = t.subscribe("next");
    const next = sub.next();
    await turn();
    expect(broker.thread("t1")).toBe(t);
    broker.thread("t1").publish("e", 1);
    expect((await next).value).toMatchObject({ event: "e", data: "1" });
    await sub.return(undefined);
  });

  it("close resolves", async () => {
    await expect(new StreamBroker().close()).resolves.toBeUndefined();
  });
});
