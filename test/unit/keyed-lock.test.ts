// Unit tests of the keyed lock (one call per key at a time, in call order) and of SingleFlight (one task per key).
import { describe, expect, it } from "vitest";
import { KeyedLock, SingleFlight } from "../../src/lib/keyed-lock.ts";

/** A promise and the functions that settle it. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** Lets every pending continuation run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

describe("KeyedLock", () => {
  it("runs the calls of one key one after the other, in call order", async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const calls = gates.map((g, i) =>
      lock.run("a", async () => {
        order.push(`start ${i}`);
        await g.promise;
        order.push(`end ${i}`);
        return i;
      }),
    );
    await settle();
    expect(order).toEqual(["start 0"]);
    gates[2].resolve();
    gates[1].resolve();
    await settle();
    expect(order).toEqual(["start 0"]);
    gates[0].resolve();
    expect(await Promise.all(calls)).toEqual([0, 1, 2]);
    expect(order).toEqual(["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]);
  });

  it("runs calls of different keys alongside", async () => {
    const lock = new KeyedLock();
    const gate = deferred();
    const started: string[] = [];
    const a = lock.run("a", async () => {
      started.push("a");
      await gate.promise;
    });
    const b = lock.run("b", async () => {
      started.push("b");
    });
    await b;
    expect(started).toEqual(["a", "b"]);
    gate.resolve();
    await a;
  });

  it("passes a failure to its caller and still runs the next call", async () => {
    const lock = new KeyedLock();
    const failing = lock.run("a", async () => {
      throw new Error("boom");
    });
    const next = lock.run("a", async () => "next");
    await expect(failing).rejects.toThrow("boom");
    await expect(next).resolves.toBe("next");
  });

  it("says a key is busy while a call holds it or waits for it, and not once they settled", async () => {
    const lock = new KeyedLock();
    expect(lock.busy("a")).toBe(false);
    const gate = deferred();
    const first = lock.run("a", () => gate.promise);
    const second = lock.run("a", async () => {});
    expect(lock.busy("a")).toBe(true);
    expect(lock.busy("b")).toBe(false);
    gate.resolve();
    await Promise.all([first, second]);
    expect(lock.busy("a")).toBe(false);
  });

  it("idle() waits for every call made so far, failed ones included", async () => {
    const lock = new KeyedLock();
    const gates = [deferred(), deferred()];
    let done = 0;
    void lock.run("a", async () => {
      await gates[0].promise;
      done++;
    });
    const failing = lock.run("b", async () => {
      await gates[1].promise;
      done++;
      throw new Error("boom");
    });
    failing.catch(() => {});
    let idle = false;
    const waiting = lock.idle().then(() => (idle = true));
    await settle();
    expect(idle).toBe(false);
    gates[0].resolve();
    await settle();
    expect(idle).toBe(false);
    gates[1].resolve();
    await waiting;
    expect(done).toBe(2);
    await lock.idle();
  });
});

describe("SingleFlight", () => {
  it("runs one task per key: a second start while it runs gets the running task", async () => {
    const flights = new SingleFlight();
    const gate = deferred();
    let runs = 0;
    const task = () => {
      runs++;
      return gate.promise;
    };
    const first = flights.start("a", task);
    const second = flights.start("a", task);
    expect(second).toBe(first);
    expect(runs).toBe(1);
    expect(flights.has("a")).toBe(true);
    expect(flights.tasks()).toEqual([first]);
    gate.resolve();
    await first;
    await settle();
    expect(flights.has("a")).toBe(false);
    expect(flights.tasks()).toEqual([]);
  });

  it("starts a key again once its task ended, even a failed one", async () => {
    const flights = new SingleFlight();
    const failed = flights.start("a", async () => {
      throw new Error("boom");
    });
    await expect(failed).rejects.toThrow("boom");
    await settle();
    let ran = false;
    await flights.start("a", async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  it("runs tasks of different keys alongside", async () => {
    const flights = new SingleFlight();
    const gate = deferred();
    const a = flights.start("a", () => gate.promise);
    let bRan = false;
    await flights.start("b", async () => {
      bRan = true;
    });
    expect(bRan).toBe(true);
    expect(flights.has("a")).toBe(true);
    gate.resolve();
    await a;
  });
});
