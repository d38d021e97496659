/**
 * Load generator and statistics: runs an operation with a fixed number of concurrent workers (each looping),
 * first a bounded warmup, then a measured phase bounded by a request count and a wall-clock budget, and
 * summarises every timed metric (p50/p95/mean/min/max, nearest-rank percentiles) plus the throughput.
 */

export interface LevelOptions<T> {
  concurrency: number;
  warmup: number;
  /** Max measured operations. */
  n: number;
  /** Wall-time budget of the measured phase, ms: no new operation starts after it... */
  maxMs: number;
  /** ...unless fewer than `minSamples` operations have started, then up to `hardMaxMs`. */
  minSamples: number;
  hardMaxMs: number;
  /** Max wall time of the warmup, ms. */
  warmupMaxMs: number;
  /** Untimed per-operation inputs (e.g. fresh threads), created before the level; called with warmup + n. */
  prepare?: (count: number) => Promise<T[]>;
  /** One operation; returns its timed metrics in ms (e.g. { latency } or { ttfe, total }). */
  op: (input: T, index: number) => Promise<Record<string, number>>;
}

export interface MetricStats {
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

export interface LevelResult {
  concurrency: number;
  count: number;
  errors: number;
  firstError?: string;
  wallMs: number;
  /** Completed (successful) operations per second over the measured phase. */
  throughput: number;
  metrics: Record<string, MetricStats>;
}

export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

export function summarise(values: number[]): MetricStats {
  const sorted = [...values].sort((a, b) => a - b);
  const sum = sorted.reduce((a, b) => a + b, 0);
  return {
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    mean: sorted.length ? sum / sorted.length : NaN,
    min: sorted.length ? sorted[0] : NaN,
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/** Runs `workers` loops that each take the next index while `more(index)` holds. */
async function pool(workers: number, more: (i: number) => boolean, body: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      for (;;) {
        const i = next++;
        if (!more(i)) return;
        await body(i);
      }
    }),
  );
}

export async function runLevel<T>(opts: LevelOptions<T>): Promise<LevelResult> {
  const inputs = opts.prepare ? await opts.prepare(opts.warmup + opts.n) : undefined;
  const inputAt = (i: number) => (inputs ? inputs[i] : (undefined as T));
  let errors = 0;
  let successes = 0;
  let firstError: string | undefined;
  const fail = (err: unknown) => {
    errors++;
    firstError ??= err instanceof Error ? err.message : String(err);
  };
  // Give up early on a scenario that only fails (e.g. an endpoint the server lacks).
  const hopeless = () => errors >= 10 && successes === 0;

  // Warmup: same concurrency, not recorded.
  const warmEnd = performance.now() + opts.warmupMaxMs;
  await pool(
    opts.concurrency,
    (i) => i < opts.warmup && performance.now() < warmEnd && !hopeless(),
    async (i) => {
      try {
        await opts.op(inputAt(i), i);
        successes++;
      } catch (err) {
        fail(err);
      }
    },
  );
  errors = 0;
  successes = 0;

  const samples: Record<string, number[]> = {};
  const start = performance.now();
  const end = start + opts.maxMs;
  const hardEnd = start + Math.max(opts.maxMs, opts.hardMaxMs);
  const more = (i: number) => {
    if (i >= opts.n || hopeless()) return false;
    const now = performance.now();
    return now < end || (i < opts.minSamples && now < hardEnd);
  };
  await pool(opts.concurrency, more, async (i) => {
    try {
      const m = await opts.op(inputAt(opts.warmup + i), opts.warmup + i);
      for (const [k, v] of Object.entries(m)) (samples[k] ??= []).push(v);
      successes++;
    } catch (err) {
      fail(err);
    }
  });
  const wallMs = performance.now() - start;
  const metrics: Record<string, MetricStats> = {};
  for (const [k, v] of Object.entries(samples)) metrics[k] = summarise(v);
  return {
    concurrency: opts.concurrency,
    count: successes,
    errors,
    firstError,
    wallMs,
    throughput: successes / (wallMs / 1000),
    metrics,
  };
}

/** Runs `fn` over `items` with bounded concurrency (for untimed setup work); returns results in order. */
export async function mapConcurrent<I, O>(
  items: I[],
  concurrency: number,
  fn: (item: I, index: number) => Promise<O>,
): Promise<O[]> {
  const out = new Array<O>(items.length);
  await pool(
    concurrency,
    (i) => i < items.length,
    async (i) => {
      out[i] = await fn(items[i], i);
    },
  );
  return out;
}

/** A bad command line: its message is printed alone and the bench exits with 2. */
export class UsageError extends Error {}

/**
 * Runs a bench's `main` and exits with its code: 2 with the message alone for a bad command line (UsageError,
 * or parseArgs' own errors), else 1 with the stack, after `onFailure` (e.g. stopping what the bench started).
 */
export function runMain(
  name: string,
  main: () => Promise<number>,
  onFailure: () => Promise<void> = async () => {},
): void {
  main().then(
    (code) => process.exit(code),
    (err) => {
      if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
        process.stderr.write(`${(err as Error).message}\n`);
        process.exit(2);
      }
      process.stderr.write(`${name} failed: ${(err as Error).stack ?? err}\n`);
      void onFailure().finally(() => process.exit(1));
    },
  );
}
