// Unit tests of src/storage/sqlite/write-tracker.ts: a thread's token changes with every write of its checkpoints,
// in a table of fixed size (nothing kept per thread).
import { describe, expect, it } from "vitest";
import { WriteTracker } from "../../src/storage/sqlite/write-tracker.js";

describe("WriteTracker", () => {
  it("changes a thread's token on each of its writes, and not on another slot's", () => {
    const tracker = new WriteTracker(1 << 16);
    const before = tracker.token("t1");
    expect(tracker.token("t1")).toBe(before);
    tracker.touch("t1");
    const once = tracker.token("t1");
    expect(once).not.toBe(before);
    tracker.touch("t1");
    expect(tracker.token("t1")).not.toBe(once);
    const other = tracker.token("t2");
    tracker.touch("t1");
    expect(tracker.token("t2")).toBe(other);
    // Not a thread id: nothing changes.
    tracker.touch(undefined);
    expect(tracker.token("t2")).toBe(other);
  });

  it("keeps its tokens exact however many threads are written, in a table of one slot", () => {
    const tracker = new WriteTracker(1);
    const seen = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const before = tracker.token(`t${i}`);
      tracker.touch(`t${i}`);
      expect(tracker.token(`t${i}`)).not.toBe(before);
      seen.add(tracker.token(`t${i}`));
    }
    // A write to any thread of a shared slot changes the token: a cache miss, never a stale hit.
    expect(seen.size).toBe(1000);
  });
});
