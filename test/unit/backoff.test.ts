// lib/backoff.ts: tries again with doubling pauses while a failure is retryable, within a patience.
import { describe, expect, it, vi } from "vitest";
import { withBackoff } from "../../src/lib/backoff.ts";

class Transient extends Error {}

/** An operation failing with `errors` in turn, then answering "done"; counts its calls. */
function failing(errors: Error[]) {
  const op = async () => {
    op.calls++;
    const e = errors.shift();
    if (e) throw e;
    return "done";
  };
  op.calls = 0;
  return op;
}

const retryTransient = (e: unknown) => e instanceof Transient;

describe("withBackoff", () => {
  it("waits out retryable failures, the pauses doubling up to the maximum", async () => {
    const op = failing([new Transient("1"), new Transient("2"), new Transient("3"), new Transient("4")]);
    const pauses: number[] = [];
    const answer = await withBackoff(op, {
      firstMs: 1,
      maxMs: 4,
      patienceMs: 60_000,
      retry: retryTransient,
      onRetry: (_e, ms) => pauses.push(ms),
    });
    expect(answer).toBe("done");
    expect(op.calls).toBe(5);
    expect(pauses).toEqual([1, 2, 4, 4]);
  });

  it("throws a failure that is not retryable at once", async () => {
    const op = failing([new Error("bad input"), new Transient("later")]);
    await expect(
      withBackoff(op, { firstMs: 1, maxMs: 1, patienceMs: 60_000, retry: retryTransient }),
    ).rejects.toThrow("bad input");
    expect(op.calls).toBe(1);
  });

  it("throws the last failure once the patience is spent", async () => {
    const op = failing(Array.from({ length: 100 }, (_, i) => new Transient(`failure ${i + 1}`)));
    await expect(
      withBackoff(op, { firstMs: 5, maxMs: 5, patienceMs: 12, retry: retryTransient }),
    ).rejects.toThrow(/^failure \d+$/);
    // No pause ends past the patience: a few tries, not a hundred.
    expect(op.calls).toBeGreaterThan(1);
    expect(op.calls).toBeLessThan(100);
  });

  it("spends the whole patience: the last pause is cut to end at it, then one more try", async () => {
    vi.useFakeTimers();
    try {
      const op = failing(Array.from({ length: 100 }, (_, i) => new Transient(`failure ${i + 1}`)));
      const pauses: number[] = [];
      const done = withBackoff(op, {
        firstMs: 500,
        maxMs: 5_000,
        patienceMs: 10_000,
        retry: retryTransient,
        onRetry: (_e, ms) => pauses.push(ms),
      });
      const failed = expect(done).rejects.toThrow("failure 6");
      await vi.runAllTimersAsync();
      await failed;
      // Tries at 0, 0.5, 1.5, 3.5, 7.5 and 10 s: the last one at the patience, not 2.5 s before it.
      expect(pauses).toEqual([500, 1_000, 2_000, 4_000, 2_500]);
      expect(op.calls).toBe(6);
    } finally {
      vi.useRealTimers();
    }
  });
});
