// The run timeout (BG_JOB_TIMEOUT_SECS, as in the official server): the signal a run's graph is given, aborted by
// a cancel or once the attempt has run for longer than the limit, and the error a run that exceeded it ends with.

/** Longest delay a Node timer takes (about 24.8 days); a longer limit is waited out in several of them. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RunDeadline {
  /** Aborted when the run is cancelled (the signal it was made from) or when the limit is reached. */
  readonly signal: AbortSignal;
  /** Starts the clock: when the graph starts executing (not while a graph thread loads the graphs); once. */
  start(): void;
  /** Whether the limit was reached before the run stopped otherwise. */
  expired(): boolean;
  /** Stops the clock (the run ended); idempotent. */
  clear(): void;
}

/**
 * A deadline `limitMs` after `start()` for a run stopped by `cancel`; without a limit, the cancel signal alone.
 * Counted per attempt, as the official server does (its worker waits each attempt out with the whole limit).
 */
export function runDeadline(cancel: AbortSignal, limitMs: number | undefined): RunDeadline {
  if (!limitMs) return { signal: cancel, start: () => {}, expired: () => false, clear: () => {} };
  const controller = new AbortController();
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  let cleared = false;
  const onCancel = () => controller.abort(cancel.reason);
  if (cancel.aborted) onCancel();
  else cancel.addEventListener("abort", onCancel, { once: true });
  const arm = (left: number) => {
    timer = setTimeout(
      () => {
        if (left > MAX_TIMER_MS) return arm(left - MAX_TIMER_MS);
        if (controller.signal.aborted) return; // stopped otherwise first
        expired = true;
        controller.abort(new Error(timeoutMessage(limitMs)));
      },
      Math.min(left, MAX_TIMER_MS),
    );
    timer.unref();
  };
  return {
    signal: controller.signal,
    start: () => {
      if (timer === undefined && !cleared) arm(limitMs);
    },
    expired: () => expired,
    clear: () => {
      cleared = true;
      clearTimeout(timer);
      cancel.removeEventListener("abort", onCancel);
    },
  };
}

function timeoutMessage(limitMs: number): string {
  return (
    `Run exceeded BG_JOB_TIMEOUT_SECS (${limitMs / 1000} s) and was stopped. ` +
    "To give runs longer, set the BG_JOB_TIMEOUT_SECS environment variable (seconds)."
  );
}

/** The error of a run that reached its limit: the official server's exception name (TimeoutError), and why. */
export function timeoutError(limitMs: number): { error: string; message: string } {
  return { error: "TimeoutError", message: timeoutMessage(limitMs) };
}
