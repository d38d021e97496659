// Bounded waits on conditions for every suite, on vitest's `vi.waitFor`: a broken server fails with a message
// saying what was awaited, while a slow, loaded machine only makes the wait longer (the bound is generous).
import { vi } from "vitest";

/**
 * Upper bound of a wait on a condition: long enough for a machine under heavy load (two suites at once on a
 * noisy 2-core host took over 60 s to start a CLI process), short of a hang. Reached only when a test fails.
 */
export const BOUND_MS = 180_000;

/**
 * Polls `probe` until it returns a value other than undefined/false (or stops throwing) and returns it;
 * fails after `boundMs` naming `what` and the probe's last error.
 */
export async function waitFor<T>(
  what: string | (() => string),
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  boundMs = BOUND_MS,
  intervalMs = 25,
): Promise<T> {
  let last: unknown;
  try {
    return await vi.waitFor(
      async () => {
        let v: T | undefined | false;
        try {
          v = await probe();
        } catch (e) {
          last = e;
          throw e;
        }
        if (v === undefined || v === false) throw new Error("not yet");
        return v as T;
      },
      { timeout: boundMs, interval: intervalMs },
    );
  } catch {
    const desc = typeof what === "string" ? what : what();
    throw new Error(`timed out waiting for ${desc}${last ? ` (last error: ${String(last)})` : ""}`);
  }
}
