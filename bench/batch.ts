/**
 * One-shot ("batch") benchmark scenarios of the run queue, each run once per target on a fresh server and
 * bounded in count and time (they stop by themselves; whatever is unfinished at a deadline counts as failed):
 *
 * - `bg-throughput`: N background runs (POST /threads/{id}/runs, `chat` graph) created as fast as the client
 *   can (16 at a time), each on its own thread made in the untimed setup, plus a variant of M runs enqueued
 *   on ONE thread (`multitask_strategy: "enqueue"`). Every run is joined (GET .../join, from the moment it
 *   is created); timed from the first POST to the last join, so creation is included. Reports runs/s.
 * - `pickup`: queue pickup latency, one run at a time on a new thread: from POST /threads/{id}/runs returning
 *   (background run with `stream_resumable: true`) to the first `values` event (= the first step) on
 *   GET /threads/{id}/runs/{run_id}/stream opened at once with `Last-Event-ID: -1` (replay from the start).
 *   This includes one round trip to open the join stream; a second row adds the POST itself (POST sent ->
 *   first step), the fair figure for a server that answers the POST late. The stream is dropped after that
 *   event and the run awaited (untimed) before the next sample. A server whose join does not replay from
 *   the start is measured instead by polling GET /threads/{id}/runs/{run_id} every 1 ms until the status
 *   is no longer `pending` (said so in the output).
 * - `stream-fanout`: N streamed runs started at once (POST /threads/{id}/runs/stream, values +
 *   messages-tuple) over N connections; wall time, events/s over all clients, failures (under a global
 *   timeout), and the server's memory: RSS (VmRSS from /proc, summed over the server's process groups: a
 *   scale-out deployment's API and worker processes together) before and at the peak (sampled every
 *   50 ms), reported as (peak - before) / N per stream.
 */
import { setMaxListeners } from "node:events";
import { readFileSync } from "node:fs";
import { Agent } from "undici";
import { getJson, getSse, postJson, postSse } from "./client.ts";
import { mapConcurrent, summarise } from "./measure.ts";
import { groupPids } from "./proc.ts";
import {
  checkStream,
  checkValues,
  createThread,
  GRAPH_ID,
  INPUT,
  SETUP_CONCURRENCY,
  STREAM_MODE,
} from "./scenarios.ts";
import type { TargetName } from "./servers.ts";

/** Sizes and time budgets of the batch scenarios for one target. */
export interface BatchSizes {
  /** bg-throughput: runs, one new thread each. */
  bgRuns: number;
  /** bg-throughput: runs enqueued on one thread. */
  bgOneThread: number;
  /** bg-throughput: deadline per variant, from the first POST (unfinished runs count as failed). */
  bgBudgetMs: number;
  /** pickup: max samples... */
  pickup: number;
  /** ...or this long (but at least PICKUP_MIN_SAMPLES). */
  pickupBudgetMs: number;
  /** stream-fanout: concurrent streams. */
  fanout: number;
  /** stream-fanout: global timeout; unfinished streams count as failed. */
  fanoutTimeoutMs: number;
}

export interface BatchContext {
  target: TargetName;
  url: string;
  /** The pid servers.ts spawned: leader of the server's process group (the one `url` points at). */
  pid: number;
  /** Every process group of the target (a scale-out deployment: API and workers). */
  pids: number[];
  sizes: BatchSizes;
  /** Set when the sizes were scaled down for this target: why. */
  scaledNote?: string;
  log: (msg: string) => void;
}

export interface BatchRow {
  target: TargetName;
  scenario: string;
  variant: string;
  /** Operations attempted (runs, samples or streams) after any scaling for this target. */
  n: number;
  ok: number;
  failures: number;
  firstError?: string;
  /** Wall time of the timed phase, ms. */
  wallMs: number;
  /** Main rate (runs/s, events/s; samples/s for pickup). */
  rate: number;
  rateUnit: string;
  /** Latency distribution where the scenario has one (ms). */
  p50?: number;
  p95?: number;
  /** How the latency was measured (pickup: "join" or "poll"). */
  method?: string;
  /** Further values (ms, counts, KiB), for the JSON and the notes column. */
  extra: Record<string, number>;
  notes: string[];
}

export interface BatchScenario {
  id: string;
  title: string;
  run: (ctx: BatchContext) => Promise<BatchRow[]>;
}

const CREATE_CONCURRENCY = 16;
/** Joins in flight at once (own connection pool, so that they never hold up creation). */
const JOIN_CONCURRENCY = 64;
const PICKUP_WARMUP = 5;
const PICKUP_MIN_SAMPLES = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const errMsg = (err: unknown) => (err instanceof Error ? err.message : String(err));

interface Run {
  run_id: string;
  thread_id: string;
  status: string;
}

function threadsFor(url: string, count: number): Promise<string[]> {
  return mapConcurrent(
    Array.from({ length: count }, (_, i) => i),
    SETUP_CONCURRENCY,
    async () => (await createThread(url)).thread_id,
  );
}

/** Untimed: one run to completion, so that the graph is loaded and compiled before anything is timed. */
async function warmGraph(url: string): Promise<void> {
  const { thread_id } = await createThread(url);
  checkValues(
    await postJson(`${url}/threads/${thread_id}/runs/wait`, { assistant_id: GRAPH_ID, input: INPUT }),
    "warm-up runs/wait",
  );
}

function row(ctx: BatchContext, scenario: string, variant: string, r: Partial<BatchRow>): BatchRow {
  return {
    target: ctx.target,
    scenario,
    variant,
    n: 0,
    ok: 0,
    failures: 0,
    wallMs: NaN,
    rate: NaN,
    rateUnit: "",
    extra: {},
    notes: ctx.scaledNote ? [ctx.scaledNote] : [],
    ...r,
  };
}

// ---------- bg-throughput ----------

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Creates one background run per entry of `threadIds` (16 at a time) and joins each as soon as it exists
 * (64 at a time); returns when every run is joined, or failed, or the deadline passed.
 */
async function createAndJoin(
  ctx: BatchContext,
  threadIds: string[],
  extraBody: Record<string, unknown>,
  joinAgent: Agent,
): Promise<{
  ok: number;
  failures: number;
  firstError?: string;
  createMs: number;
  totalMs: number;
  /** ms from the first POST until each run was seen done (join returned), in completion order. */
  doneAt: number[];
}> {
  const n = threadIds.length;
  const deadline = AbortSignal.timeout(ctx.sizes.bgBudgetMs);
  setMaxListeners(0, deadline); // shared by every join
  const created = Array.from({ length: n }, () => deferred<Run | undefined>());
  let ok = 0;
  let failures = 0;
  let firstError: string | undefined;
  const fail = (err: unknown) => {
    failures++;
    firstError ??= errMsg(err);
  };
  let createMs = NaN;
  const t0 = performance.now();
  const creating = mapConcurrent(threadIds, CREATE_CONCURRENCY, async (threadId, i) => {
    if (deadline.aborted) {
      fail(new Error(`not created within the ${ctx.sizes.bgBudgetMs / 1000} s budget`));
      created[i].resolve(undefined);
      return;
    }
    try {
      const run = await postJson<Run>(`${ctx.url}/threads/${threadId}/runs`, {
        assistant_id: GRAPH_ID,
        input: INPUT,
        ...extraBody,
      });
      if (typeof run?.run_id !== "string")
        throw new Error(`no run_id in ${JSON.stringify(run).slice(0, 200)}`);
      created[i].resolve(run);
    } catch (err) {
      fail(err);
      created[i].resolve(undefined);
    }
  }).then(() => (createMs = performance.now() - t0));
  const doneAt: number[] = [];
  const joining = mapConcurrent(created, JOIN_CONCURRENCY, async (d) => {
    const run = await d.promise;
    if (!run) return;
    try {
      const out = await getJson(`${ctx.url}/threads/${run.thread_id}/runs/${run.run_id}/join`, {
        dispatcher: joinAgent,
        signal: deadline,
        timeoutMs: ctx.sizes.bgBudgetMs,
      });
      if (out && typeof out === "object" && "__error__" in out) {
        throw new Error(`run ${run.run_id} failed: ${JSON.stringify(out.__error__).slice(0, 300)}`);
      }
      checkValues(out, "join");
      doneAt.push(performance.now() - t0);
      ok++;
    } catch (err) {
      fail(
        deadline.aborted ? new Error(`run not done within the ${ctx.sizes.bgBudgetMs / 1000} s budget`) : err,
      );
    }
  });
  await Promise.all([creating, joining]);
  return { ok, failures, firstError, createMs, totalMs: performance.now() - t0, doneAt };
}

/** Completion rate over the first and the second half of the runs (does it slow down as work piles up?). */
function halves(doneAt: number[]): { firstHalfPerS: number; secondHalfPerS: number } {
  const t = [...doneAt].sort((a, b) => a - b);
  if (t.length < 2) return { firstHalfPerS: NaN, secondHalfPerS: NaN };
  const mid = Math.floor(t.length / 2);
  return {
    firstHalfPerS: mid / (t[mid - 1] / 1000),
    secondHalfPerS: (t.length - mid) / ((t[t.length - 1] - t[mid - 1]) / 1000),
  };
}

export const bgThroughputScenario: BatchScenario = {
  id: "bg-throughput",
  title: "background throughput: runs created (16 at a time) and joined until all are done",
  async run(ctx) {
    const { bgRuns, bgOneThread } = ctx.sizes;
    await warmGraph(ctx.url);
    const t0 = performance.now();
    const threads = await threadsFor(ctx.url, bgRuns);
    const { thread_id: single } = await createThread(ctx.url);
    ctx.log(`  ${ctx.target} bg-throughput: setup ${Math.round(performance.now() - t0)} ms`);
    const joinAgent = new Agent({ connections: JOIN_CONCURRENCY, keepAliveTimeout: 60_000, pipelining: 1 });
    const rows: BatchRow[] = [];
    try {
      const variants: [string, string[], Record<string, unknown>][] = [
        ["new threads", threads, {}],
        ["one thread", Array<string>(bgOneThread).fill(single), { multitask_strategy: "enqueue" }],
      ];
      for (const [variant, ids, body] of variants) {
        const r = await createAndJoin(ctx, ids, body, joinAgent);
        const out = row(ctx, "bg-throughput", variant, {
          n: ids.length,
          ok: r.ok,
          failures: r.failures,
          firstError: r.firstError,
          wallMs: r.totalMs,
          rate: r.ok / (r.totalMs / 1000),
          rateUnit: "runs/s",
          extra: {
            createMs: r.createMs,
            createPerS: ids.length / (r.createMs / 1000),
            ...halves(r.doneAt),
          },
        });
        out.notes.push(
          `all created in ${fmtS(r.createMs)}; done/s 1st half ${fmtRate(out.extra.firstHalfPerS)}, ` +
            `2nd half ${fmtRate(out.extra.secondHalfPerS)}`,
        );
        rows.push(out);
        ctx.log(
          `  ${ctx.target} bg-throughput ${variant}: ${r.ok}/${ids.length} done in ${fmtS(r.totalMs)} ` +
            `(${out.rate.toFixed(1)} runs/s; created in ${fmtS(r.createMs)})` +
            (r.failures ? `  FAILURES ${r.failures}: ${r.firstError}` : ""),
        );
      }
    } finally {
      await joinAgent.close();
    }
    return rows;
  },
};

// ---------- pickup ----------

interface PickupSample {
  /** POST /threads/{id}/runs round trip. */
  create: number;
  /** POST returned -> metadata event (join) / first non-pending status (poll). */
  metadata: number;
  /** POST returned -> first values event (join) / first non-pending status (poll): the pickup. */
  pickup: number;
  /** POST sent -> first step (create + pickup). */
  fromSend: number;
}

class NoReplayError extends Error {}

/** Untimed: waits (polling every 5 ms) until the run has ended, so that samples never overlap. */
async function waitDone(url: string, run: Run): Promise<void> {
  const path = `${url}/threads/${run.thread_id}/runs/${run.run_id}`;
  const end = performance.now() + 30_000;
  for (;;) {
    const { status } = await getJson<Run>(path);
    if (status === "success") return;
    if (status !== "pending" && status !== "running") throw new Error(`run ended with status ${status}`);
    if (performance.now() > end) throw new Error(`run still ${status} after 30 s`);
    await sleep(5);
  }
}

async function pickupByJoin(url: string, threadId: string): Promise<PickupSample> {
  const t0 = performance.now();
  const run = await postJson<Run>(`${url}/threads/${threadId}/runs`, {
    assistant_id: GRAPH_ID,
    input: INPUT,
    stream_mode: ["values"],
    stream_resumable: true,
  });
  const posted = performance.now();
  // Read the join stream only up to the first values event (the first step), then let go of it.
  const s = await getSse(`${url}/threads/${threadId}/runs/${run.run_id}/stream`, {
    headers: { "last-event-id": "-1" },
    stopWhen: (ev) => ev.event === "values" || ev.event === "error",
  });
  const offset = performance.now() - posted - s.totalMs; // ~0: from the POST's return to the GET
  const err = s.events.find((e) => e.event === "error");
  if (err) throw new Error(`run error event: ${err.data.slice(0, 300)}`);
  if (s.events[0]?.event !== "metadata") {
    throw new NoReplayError(
      `join with Last-Event-ID -1 did not replay from the start: first event ` +
        `${s.events[0]?.event ?? "(none)"}`,
    );
  }
  const firstValues = s.events.findIndex((e) => e.event === "values");
  if (firstValues < 0) {
    throw new NoReplayError(`join stream had no values event: [${s.events.map((e) => e.event).join(", ")}]`);
  }
  const pickup = offset + s.eventMs[firstValues];
  await waitDone(url, run);
  return { create: posted - t0, metadata: offset + s.eventMs[0], pickup, fromSend: posted - t0 + pickup };
}

async function pickupByPoll(url: string, threadId: string): Promise<PickupSample> {
  const t0 = performance.now();
  const run = await postJson<Run>(`${url}/threads/${threadId}/runs`, {
    assistant_id: GRAPH_ID,
    input: INPUT,
  });
  const posted = performance.now();
  const path = `${url}/threads/${threadId}/runs/${run.run_id}`;
  const end = posted + 30_000;
  for (;;) {
    const { status } = await getJson<Run>(path);
    const now = performance.now();
    if (status !== "pending") {
      const pickup = now - posted;
      await waitDone(url, run);
      return { create: posted - t0, metadata: pickup, pickup, fromSend: now - t0 };
    }
    if (now > end) throw new Error(`run still ${status} after 30 s`);
    await sleep(1);
  }
}

export const pickupScenario: BatchScenario = {
  id: "pickup",
  title: "queue pickup latency: background run created -> first step (resumable join stream)",
  async run(ctx) {
    const { pickup: n, pickupBudgetMs } = ctx.sizes;
    await warmGraph(ctx.url);
    const threads = await threadsFor(ctx.url, PICKUP_WARMUP + n);
    let method: "join" | "poll" = "join";
    const notes: string[] = [];
    const sample = (threadId: string) =>
      method === "join" ? pickupByJoin(ctx.url, threadId) : pickupByPoll(ctx.url, threadId);
    // Warm-up (not recorded); a join that does not replay from the start switches to polling.
    for (let i = 0; i < PICKUP_WARMUP; i++) {
      try {
        await sample(threads[i]);
      } catch (err) {
        if (err instanceof NoReplayError && method === "join") {
          method = "poll";
          notes.push(`resumable join unusable (${err.message}): polled run status every 1 ms instead`);
          ctx.log(`  ${ctx.target} pickup: ${notes[notes.length - 1]}`);
        }
      }
    }
    const samples: PickupSample[] = [];
    let failures = 0;
    let firstError: string | undefined;
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      const elapsed = performance.now() - start;
      if (elapsed > pickupBudgetMs && i >= PICKUP_MIN_SAMPLES) break;
      if (failures >= 10 && samples.length === 0) break;
      try {
        samples.push(await sample(threads[PICKUP_WARMUP + i]));
      } catch (err) {
        failures++;
        firstError ??= errMsg(err);
      }
    }
    const wallMs = performance.now() - start;
    const stat = (k: keyof PickupSample) => summarise(samples.map((s) => s[k]));
    const pickup = stat("pickup");
    const fromSend = stat("fromSend");
    const create = stat("create");
    const how = method === "join" ? "join stream" : "poll status";
    const common = { n: samples.length + failures, ok: samples.length, failures, firstError, wallMs, method };
    // A latency scenario (one sample at a time): no rate.
    const after = row(ctx, "pickup", `POST returned (${how})`, {
      ...common,
      p50: pickup.p50,
      p95: pickup.p95,
      extra: { mean: pickup.mean, max: pickup.max, metadataP50: stat("metadata").p50 },
    });
    after.notes.push(...notes, `POST p50 ${fmtMs(create.p50)} p95 ${fmtMs(create.p95)} ms`);
    const incl = row(ctx, "pickup", `POST sent (${how})`, {
      ...common,
      p50: fromSend.p50,
      p95: fromSend.p95,
      extra: { mean: fromSend.mean, max: fromSend.max, createP50: create.p50, createP95: create.p95 },
    });
    incl.notes.push("= POST round trip + pickup");
    ctx.log(
      `  ${ctx.target} pickup (${how}): POST returned -> first step p50 ${fmtMs(pickup.p50)} ` +
        `p95 ${fmtMs(pickup.p95)} ms; POST sent -> first step p50 ${fmtMs(fromSend.p50)} ` +
        `p95 ${fmtMs(fromSend.p95)} ms; POST p50 ${fmtMs(create.p50)} ms (n=${samples.length} in ${fmtS(wallMs)})` +
        (failures ? `  FAILURES ${failures}: ${firstError}` : ""),
    );
    return [after, incl];
  },
};

// ---------- stream-fanout ----------

/** VmRSS of `pids` summed, in KiB (a process that is gone counts 0). */
function rssKiB(pids: number[]): number {
  let sum = 0;
  for (const pid of pids) {
    try {
      const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf-8"));
      if (m) sum += Number(m[1]);
    } catch {
      // gone
    }
  }
  return sum;
}

export const streamFanoutScenario: BatchScenario = {
  id: "stream-fanout",
  title: "concurrent streaming clients: N streamed runs at once on one server",
  async run(ctx) {
    const { fanout: n, fanoutTimeoutMs } = ctx.sizes;
    await warmGraph(ctx.url);
    const threads = await threadsFor(ctx.url, n);
    const agent = new Agent({ connections: n + 16, keepAliveTimeout: 60_000, pipelining: 1 });
    const pids = ctx.pids.flatMap(groupPids);
    const notes: string[] = [];
    if (pids.length === 0) notes.push("no /proc: memory not measured");
    await sleep(500); // let the setup's garbage settle a little before the baseline
    const before = rssKiB(pids);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssKiB(pids))), 50);
    const deadline = AbortSignal.timeout(fanoutTimeoutMs);
    setMaxListeners(0, deadline); // shared by every stream
    let failures = 0;
    let firstError: string | undefined;
    const done: Record<string, number>[] = [];
    const t0 = performance.now();
    try {
      await Promise.all(
        threads.map(async (threadId) => {
          try {
            const s = await postSse(
              `${ctx.url}/threads/${threadId}/runs/stream`,
              { assistant_id: GRAPH_ID, input: INPUT, stream_mode: STREAM_MODE },
              { dispatcher: agent, signal: deadline, timeoutMs: fanoutTimeoutMs },
            );
            done.push(checkStream(s, "fan-out stream"));
          } catch (err) {
            failures++;
            firstError ??= deadline.aborted
              ? `stream not finished within the ${fanoutTimeoutMs / 1000} s timeout`
              : errMsg(err);
          }
        }),
      );
    } finally {
      clearInterval(sampler);
    }
    const wallMs = performance.now() - t0;
    peak = Math.max(peak, rssKiB(pids));
    const after = rssKiB(pids);
    await agent.close().catch(() => {});
    const events = done.reduce((a, d) => a + d.events, 0);
    const total = summarise(done.map((d) => d.total));
    const ttfe = summarise(done.map((d) => d.ttfe));
    const perStream = (peak - before) / n;
    const out = row(ctx, "stream-fanout", `${n} streams`, {
      n,
      ok: done.length,
      failures,
      firstError,
      wallMs,
      rate: events / (wallMs / 1000),
      rateUnit: "events/s",
      p50: total.p50,
      p95: total.p95,
      extra: {
        events,
        eventsPerStream: done.length ? events / done.length : NaN,
        ttfeP50: ttfe.p50,
        ttfeP95: ttfe.p95,
        rssBeforeKiB: before,
        rssPeakKiB: peak,
        rssAfterKiB: after,
        memPerStreamKiB: perStream,
        processes: pids.length,
      },
    });
    out.notes.push(
      ...notes,
      `RSS ${mib(before)} -> peak ${mib(peak)} MiB (${pids.length} proc): ${perStream.toFixed(0)} KiB/stream`,
    );
    ctx.log(
      `  ${ctx.target} stream-fanout: ${done.length}/${n} ok in ${fmtS(wallMs)}, ${events} events ` +
        `(${out.rate.toFixed(0)}/s), stream total p50 ${fmtMs(total.p50)} p95 ${fmtMs(total.p95)} ms, ` +
        `${out.notes[out.notes.length - 1]}` +
        (failures ? `  FAILURES ${failures}: ${firstError}` : ""),
    );
    return [out];
  },
};

export const BATCH_SCENARIOS: BatchScenario[] = [bgThroughputScenario, pickupScenario, streamFanoutScenario];

// ---------- formatting helpers (shared with run.ts) ----------

export function fmtS(ms: number): string {
  return Number.isFinite(ms) ? `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s` : "-";
}

function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return "-";
  return v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0);
}

const mib = (kib: number) => (kib / 1024).toFixed(0);

function fmtRate(v: number): string {
  return Number.isFinite(v) ? (v < 100 ? v.toFixed(1) : v.toFixed(0)) : "-";
}
