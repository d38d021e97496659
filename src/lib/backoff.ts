// Trying an operation again with growing pauses while its failure is one worth waiting out (a database that is
// starting or was restarted), up to a patience; shared by the server's first connections and a run's end writes.

export interface BackoffOptions {
  /** The first pause (ms); each next one doubles, up to `maxMs`. */
  firstMs: number;
  maxMs: number;
  /** How long after the first failure to keep trying (ms): a last try at its end, then the last error is thrown. */
  patienceMs: number;
  /** Whether a failure is worth waiting out; any other is thrown at once. */
  retry: (e: unknown) => boolean;
  /** Told of each failure waited out, with the pause before the next try. */
  onRetry?: (e: unknown, delayMs: number) => void;
}

/** Runs `fn` until it succeeds, a failure is not retryable, or the patience is spent (then its error is thrown). */
export async function withBackoff<T>(fn: () => Promise<T>, opts: BackoffOptions): Promise<T> {
  let deadline: number | undefined;
  for (let delay = opts.firstMs; ; delay = Math.min(delay * 2, opts.maxMs)) {
    try {
      return await fn();
    } catch (e) {
      deadline ??= Date.now() + opts.patienceMs;
      const left = deadline - Date.now();
      if (!opts.retry(e) || left <= 0) throw e;
      // The patience is spent whole: the last pause ends at it, for one more try.
      const pause = Math.min(delay, left);
      opts.onRetry?.(e, pause);
      await new Promise((r) => setTimeout(r, pause));
    }
  }
}
