/**
 * Hangar benchmark (`npm run bench`): runs the same HTTP scenarios against Hangar and against the official
 * LangGraph dev server (`@langchain/langgraph-cli dev`, "peer") on the same example graph, one server at a
 * time, at concurrency 1 and 16; prints p50/p95 latency, throughput and the Hangar/peer ratios, plus an
 * in-process `graph.invoke` baseline, and writes everything as JSON to bench/results/<timestamp>.json.
 *
 *   npm run bench -- [--only create-thread,run-wait,...] [--quick] [--target hangar|peer|both]
 *
 * Scenarios: ok, create-thread, run-wait, stream-thread, stream-stateless, history, search, baseline, then
 * the one-shot run-queue scenarios of bench/batch.ts: bg-throughput, pickup, stream-fanout (printed in a
 * second table; sizes are per target, so that the peer could get smaller counts where its queue would not
 * finish in the time budget; at the sizes below it does finish, so both get the same).
 * Every scenario gets a fresh server per target (clean state), targets interleaved scenario by scenario.
 * Each level: warmup (not recorded), then up to N operations or a time budget, whichever comes first
 * (but at least a minimum sample count, within a hard cap). Exit code 1 if anything failed or erred.
 * The environment is passed to both servers: e.g. `LOG_LEVEL=warn` quietens the peer's per-request logging
 * (its default level is debug), which Hangar ignores.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { getJson } from "./client.ts";
import { runLevel, type LevelResult } from "./measure.ts";
import { baselineOp, loadBaseline } from "./baseline.ts";
import { SERVER_SCENARIOS, type Scenario, type ScenarioContext } from "./scenarios.ts";
import { BATCH_SCENARIOS, fmtS, type BatchRow, type BatchScenario, type BatchSizes } from "./batch.ts";
import {
  installCleanupHandlers,
  RESULTS_DIR,
  ROOT,
  startHangar,
  startPeer,
  type BenchServer,
  type TargetName,
} from "./servers.ts";

const CONCURRENCY = [1, 16];

interface Profile {
  warmup: number;
  n: number;
  maxMs: number;
  minSamples: number;
  hardMaxMs: number;
  warmupMaxMs: number;
  searchThreads: number;
  /** Batch scenarios (bench/batch.ts), per target (a slower server can get less: reported as scaled). */
  batch: Record<TargetName, BatchSizes>;
}

// Both targets get the same sizes; the per-target shape lets a slow peer be scaled down (and labelled so).
const FULL_BATCH = {
  bgRuns: 1000,
  bgOneThread: 200,
  bgBudgetMs: 60_000,
  pickup: 200,
  pickupBudgetMs: 20_000,
  fanout: 500,
  fanoutTimeoutMs: 120_000,
};
const QUICK_BATCH = {
  bgRuns: 200,
  bgOneThread: 50,
  bgBudgetMs: 30_000,
  pickup: 50,
  pickupBudgetMs: 10_000,
  fanout: 100,
  fanoutTimeoutMs: 60_000,
};

const PROFILES: Record<"full" | "quick", Profile> = {
  full: {
    warmup: 2000,
    n: 1000,
    maxMs: 5_000,
    minSamples: 20,
    hardMaxMs: 15_000,
    warmupMaxMs: 2_000,
    searchThreads: 10_000,
    batch: {
      hangar: FULL_BATCH,
      peer: FULL_BATCH,
    },
  },
  quick: {
    warmup: 5,
    n: 50,
    maxMs: 2_000,
    minSamples: 8,
    hardMaxMs: 5_000,
    warmupMaxMs: 1_000,
    searchThreads: 1_000,
    batch: {
      hangar: QUICK_BATCH,
      peer: QUICK_BATCH,
    },
  },
};

const ALL_IDS = [...SERVER_SCENARIOS.map((s) => s.id), "baseline", ...BATCH_SCENARIOS.map((s) => s.id)];

const sizesText = (b: BatchSizes) => `${b.bgRuns}+${b.bgOneThread} / ${b.pickup} / ${b.fanout}`;

const USAGE = `Usage: npm run bench -- [options]

  --only <ids>      comma-separated scenarios (default: all):
                    ${ALL_IDS.join(", ")}
  --quick           smaller runs (N=${PROFILES.quick.n}, ${PROFILES.quick.searchThreads} search threads;
                    bg-throughput / pickup / stream-fanout: ${sizesText(PROFILES.quick.batch.hangar)},
                    full: ${sizesText(PROFILES.full.batch.hangar)}, peer ${sizesText(PROFILES.full.batch.peer)})
  --target <t>      hangar | peer | both (default: both)
  -h, --help        this help
`;

interface Row {
  target: TargetName | "in-process";
  scenario: string;
  metric: string;
  concurrency: number;
  count: number;
  errors: number;
  firstError?: string;
  wallMs: number;
  throughput: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
  /** Means of the op's extra, non-timing values (response bytes, SSE events). */
  extra?: Record<string, number>;
}

interface TargetInfo {
  /** Spawn-to-ready time of each server start (one fresh server per scenario). */
  startupMs: number[];
  log?: string;
  info?: unknown;
  error?: string;
  setupMs: Record<string, number>;
  setupErrors: Record<string, string>;
  /** Batch scenarios that threw (as opposed to counting failures). */
  batchErrors: Record<string, string>;
}

class UsageError extends Error {}

function parseCli() {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      quick: { type: "boolean", default: false },
      target: { type: "string", default: "both" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const known = ALL_IDS;
  const only = values.only
    ? values.only
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : known;
  const unknown = only.filter((s) => !known.includes(s));
  if (unknown.length) throw new UsageError(`unknown scenario(s): ${unknown.join(", ")}\n\n${USAGE}`);
  const target = values.target;
  if (target !== "hangar" && target !== "peer" && target !== "both") {
    throw new UsageError(`--target must be hangar, peer or both (got ${target})\n\n${USAGE}`);
  }
  const targets: TargetName[] = target === "both" ? ["hangar", "peer"] : [target];
  return { only, quick: values.quick, targets };
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);

function toRows(target: Row["target"], scenario: string, level: LevelResult, metrics: string[]): Row[] {
  const extraKeys = Object.keys(level.metrics).filter((k) => !metrics.includes(k));
  const extra = extraKeys.length
    ? Object.fromEntries(extraKeys.map((k) => [k, Math.round(level.metrics[k].mean)]))
    : undefined;
  return metrics.map((metric) => {
    const m = level.metrics[metric];
    return {
      target,
      scenario,
      metric,
      concurrency: level.concurrency,
      count: level.count,
      errors: level.errors,
      firstError: level.firstError,
      wallMs: level.wallMs,
      throughput: level.throughput,
      p50: m?.p50 ?? NaN,
      p95: m?.p95 ?? NaN,
      mean: m?.mean ?? NaN,
      min: m?.min ?? NaN,
      max: m?.max ?? NaN,
      extra,
    };
  });
}

function describe(level: LevelResult, metrics: string[]): string {
  const parts = metrics.map((k) => {
    const m = level.metrics[k];
    return m ? `${k} p50 ${fmtMs(m.p50)} p95 ${fmtMs(m.p95)}` : `${k} -`;
  });
  const err = level.errors ? `  ERRORS ${level.errors}: ${level.firstError}` : "";
  const extras = Object.entries(level.metrics)
    .filter(([k]) => !metrics.includes(k))
    .map(([k, m]) => (k === "bytes" ? `${(m.mean / 1024).toFixed(1)} KiB` : `${Math.round(m.mean)} ${k}`));
  const extra = extras.length ? ` [${extras.join(", ")}]` : "";
  return `${parts.join(", ")}  ${fmtRate(level.throughput)} req/s (n=${level.count})${extra}${err}`;
}

/**
 * One scenario on one target, on a fresh server: start, untimed setup, both concurrency levels, stop.
 * Returns false when the server did not start (the target is then skipped for the remaining scenarios).
 */
/** The bounds of one measured level, from the profile. */
function levelLimits(p: Profile) {
  const { warmup, n, maxMs, minSamples, hardMaxMs, warmupMaxMs } = p;
  return { warmup, n, maxMs, minSamples, hardMaxMs, warmupMaxMs };
}

/** Starts a target's server for one scenario and records its start-up; undefined (logged) on failure. */
async function startTarget(
  name: TargetName,
  stamp: string,
  info: TargetInfo,
): Promise<BenchServer | undefined> {
  let server: BenchServer;
  try {
    server = name === "hangar" ? await startHangar(stamp) : await startPeer(stamp);
  } catch (err) {
    info.error = (err as Error).message;
    log(`  ${name}: FAILED TO START\n${info.error}`);
    return undefined;
  }
  info.startupMs.push(Math.round(server.startupMs));
  info.log = relative(ROOT, server.logFile);
  log(`  ${name}: ${server.url} (pid ${server.pid}, ready in ${Math.round(server.startupMs)} ms)`);
  return server;
}

async function benchScenario(
  name: TargetName,
  scenario: Scenario,
  profile: Profile,
  stamp: string,
  info: TargetInfo,
  rows: Row[],
): Promise<boolean> {
  const server = await startTarget(name, stamp, info);
  if (!server) return false;
  try {
    info.info ??= await getJson(`${server.url}/info`).catch((err) => ({ error: (err as Error).message }));
    const ctx: ScenarioContext = { url: server.url, searchThreads: profile.searchThreads };
    let state: unknown;
    if (scenario.setup) {
      const t0 = performance.now();
      try {
        state = await scenario.setup(ctx);
      } catch (err) {
        info.setupErrors[scenario.id] = (err as Error).message;
        log(`  ${name} ${scenario.id}: SETUP FAILED: ${(err as Error).message}`);
        return true;
      }
      info.setupMs[scenario.id] = Math.round(performance.now() - t0);
      log(`  ${name} ${scenario.id}: setup ${info.setupMs[scenario.id]} ms`);
    }
    for (const concurrency of CONCURRENCY) {
      const level = await runLevel({
        concurrency,
        ...levelLimits(profile),
        prepare: scenario.prepare ? (count) => scenario.prepare!(ctx, state, count) : undefined,
        op: (input) => scenario.op(ctx, state, input),
      });
      rows.push(...toRows(name, scenario.id, level, scenario.metrics));
      log(`  ${name} ${scenario.id} c=${concurrency}: ${describe(level, scenario.metrics)}`);
    }
  } finally {
    await server.stop();
  }
  return true;
}

/** One batch scenario on one target, on a fresh server. Returns false when the server did not start. */
async function benchBatch(
  name: TargetName,
  scenario: BatchScenario,
  profile: Profile,
  stamp: string,
  info: TargetInfo,
  rows: BatchRow[],
): Promise<boolean> {
  const server = await startTarget(name, stamp, info);
  if (!server) return false;
  const sizes = profile.batch[name];
  const ref = profile.batch.hangar;
  const scaled =
    name !== "hangar" &&
    ((scenario.id === "bg-throughput" &&
      (sizes.bgRuns < ref.bgRuns || sizes.bgOneThread < ref.bgOneThread)) ||
      (scenario.id === "pickup" && sizes.pickup < ref.pickup) ||
      (scenario.id === "stream-fanout" && sizes.fanout < ref.fanout));
  try {
    info.info ??= await getJson(`${server.url}/info`).catch((err) => ({ error: (err as Error).message }));
    rows.push(
      ...(await scenario.run({
        target: name,
        url: server.url,
        pid: server.pid,
        sizes,
        scaledNote: scaled ? "N scaled down for the peer (time budget)" : undefined,
        log,
      })),
    );
  } catch (err) {
    info.batchErrors[scenario.id] = (err as Error).message;
    log(`  ${name} ${scenario.id}: FAILED: ${(err as Error).message}`);
  } finally {
    await server.stop();
  }
  return true;
}

async function benchBaseline(profile: Profile, rows: Row[]): Promise<string | undefined> {
  log(`\n== in-process baseline (graph.invoke + MemorySaver)`);
  try {
    await loadBaseline();
  } catch (err) {
    log(`  baseline: FAILED TO LOAD: ${(err as Error).message}`);
    return (err as Error).message;
  }
  for (const concurrency of CONCURRENCY) {
    const level = await runLevel({
      concurrency,
      ...levelLimits(profile),
      op: () => baselineOp(),
    });
    rows.push(...toRows("in-process", "baseline", level, ["latency"]));
    log(`  baseline c=${concurrency}: ${describe(level, ["latency"])}`);
  }
  return undefined;
}

// ---------- formatting ----------

function fmtMs(v: number): string {
  if (!Number.isFinite(v)) return "-";
  if (v < 10) return v.toFixed(2);
  if (v < 100) return v.toFixed(1);
  return v.toFixed(0);
}

function fmtRate(v: number): string {
  if (!Number.isFinite(v) || v === 0) return "-";
  return v < 100 ? v.toFixed(1) : v.toFixed(0);
}

function fmtRatio(a: number, b: number): string {
  if (!Number.isFinite(a) || !Number.isFinite(b) || b === 0 || a === 0) return "-";
  return `${(a / b).toFixed(2)}x`;
}

function table(header: string[], body: string[][], rightAlign: (col: number) => boolean): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAlign(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

function renderReport(rows: Row[], scenarios: Scenario[], targets: TargetName[]): string {
  const find = (t: Row["target"], s: string, m: string, c: number) =>
    rows.find((r) => r.target === t && r.scenario === s && r.metric === m && r.concurrency === c);
  const out: string[] = [];
  const header = ["scenario", "metric", "c"];
  for (const t of targets) header.push(`${t} p50`, `${t} p95`, `${t} req/s`);
  const both = targets.length === 2;
  if (both) header.push("p50 h/p", "p95 h/p", "req/s h/p");
  const body: string[][] = [];
  for (const s of scenarios) {
    for (const c of CONCURRENCY) {
      s.metrics.forEach((metric, mi) => {
        const lastMetric = mi === s.metrics.length - 1;
        const cells = [mi === 0 ? s.id : "", metric, String(c)];
        const found = targets.map((t) => find(t, s.id, metric, c));
        for (const r of found) {
          if (!r) cells.push("-", "-", "-");
          else {
            const err = r.errors ? ` !${r.errors}err` : "";
            cells.push(fmtMs(r.p50), fmtMs(r.p95), (lastMetric ? fmtRate(r.throughput) : "") + err);
          }
        }
        if (both) {
          const [h, p] = found;
          cells.push(
            fmtRatio(h?.p50 ?? NaN, p?.p50 ?? NaN),
            fmtRatio(h?.p95 ?? NaN, p?.p95 ?? NaN),
            lastMetric ? fmtRatio(h?.throughput ?? NaN, p?.throughput ?? NaN) : "",
          );
        }
        body.push(cells);
      });
    }
  }
  if (body.length) {
    out.push("Latency in ms, throughput in completed requests/s (N per level, or the time budget).");
    if (scenarios.some((s) => s.metrics.includes("ttfe"))) {
      out.push("Streams: ttfe = first SSE event, last = last SSE event, total = server closed the stream.");
    }
    if (both) {
      out.push("h/p = Hangar / peer: latency ratio < 1 and req/s ratio > 1 mean Hangar is faster.");
    }
    out.push("");
    out.push(table(header, body, (i) => i >= 2));
  }
  const base = CONCURRENCY.map((c) => find("in-process", "baseline", "latency", c));
  if (base.some(Boolean)) {
    out.push("");
    out.push("Reference: in-process chat graph.invoke with MemorySaver (no server, same input as run-wait)");
    for (const b of base) {
      if (!b) continue;
      const dist = targets
        .map((t) => {
          const r = find(t, "run-wait", "latency", b.concurrency);
          return r && Number.isFinite(r.p50)
            ? `${t} run-wait p50 +${fmtMs(r.p50 - b.p50)} ms (${fmtRatio(r.p50, b.p50)})`
            : undefined;
        })
        .filter(Boolean)
        .join(", ");
      out.push(
        `  c=${String(b.concurrency).padEnd(2)}  p50 ${fmtMs(b.p50)} ms  p95 ${fmtMs(b.p95)} ms  ` +
          `${fmtRate(b.throughput)} req/s${dist ? `   vs ${dist}` : ""}`,
      );
    }
  }
  const errs = rows.filter((r) => r.errors > 0 && r.firstError);
  const seen = new Set<string>();
  for (const r of errs) {
    const key = `${r.target}/${r.scenario}/${r.concurrency}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(`! ${key}: ${r.errors} error(s), first: ${r.firstError}`);
  }
  return out.join("\n");
}

function renderBatchReport(rows: BatchRow[], scenarios: BatchScenario[], targets: TargetName[]): string {
  if (!rows.length) return "";
  const both = targets.length === 2;
  const header = ["scenario", "variant", "target", "N", "ok", "fail", "total", "rate", "p50 ms", "p95 ms"];
  if (both) header.push("rate h/p", "p50 h/p");
  header.push("notes");
  const body: string[][] = [];
  for (const s of scenarios) {
    // Variants can be named after N (stream-fanout): pair the targets by position, not by name.
    const byTarget = targets.map((t) => rows.filter((r) => r.scenario === s.id && r.target === t));
    const count = Math.max(...byTarget.map((rs) => rs.length));
    for (let v = 0; v < count; v++) {
      const found = byTarget.map((rs) => rs[v]);
      found.forEach((r, ti) => {
        if (!r) return;
        const cells = [
          v === 0 && body.every((b) => b[0] !== s.id) ? s.id : "",
          r.variant,
          r.target,
          String(r.n),
          String(r.ok),
          r.failures ? `!${r.failures}` : "0",
          fmtS(r.wallMs),
          `${fmtRate(r.rate)} ${r.rateUnit}`,
          fmtMs(r.p50 ?? NaN),
          fmtMs(r.p95 ?? NaN),
        ];
        if (both) {
          const [h, p] = found;
          const first = ti === 0;
          cells.push(
            first ? fmtRatio(h?.rate ?? NaN, p?.rate ?? NaN) : "",
            first ? fmtRatio(h?.p50 ?? NaN, p?.p50 ?? NaN) : "",
          );
        }
        cells.push(r.notes.join("; "));
        body.push(cells);
      });
    }
  }
  const out = [
    "Run queue (one shot per target, fresh server each; see bench/batch.ts):",
    "  bg-throughput: total = first POST to last join (creation included), rate = runs done/s;",
    "  pickup: p50/p95 = POST /threads/{id}/runs returned (or sent) -> first values event (= first step) of",
    "    the resumable join stream opened at once (Last-Event-ID -1: replayed if already past; includes the",
    "    round trip that opens it), one sample at a time, each on a new thread;",
    "  stream-fanout: all streams at once, rate = SSE events/s over all clients, p50/p95 = per-stream total,",
    "    memory = (peak - before) server RSS / N.",
  ];
  if (both)
    out.push("  rate h/p > 1 and p50 h/p < 1 mean Hangar is faster (at each target's N, see the N column).");
  out.push(
    "",
    table(header, body, (i) => i >= 3 && i < header.length - 1),
  );
  const seen = new Set<string>();
  for (const r of rows) {
    if (!r.failures || !r.firstError) continue;
    const key = `${r.target}/${r.scenario}/${r.variant}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(`! ${key}: ${r.failures} failure(s), first: ${r.firstError}`);
  }
  return out.join("\n");
}

function renderServerNotes(info: Partial<Record<TargetName, TargetInfo>>, targets: TargetName[]): string {
  const lines: string[] = [];
  for (const t of targets) {
    const i = info[t];
    if (!i) continue;
    const starts = i.startupMs;
    const startup = starts.length
      ? `start-up ${fmtMs(starts.reduce((a, b) => a + b, 0) / starts.length)} ms avg over ${starts.length}`
      : "not started";
    const setups = Object.entries(i.setupMs).map(([s, ms]) => `${s} ${(ms / 1000).toFixed(1)} s`);
    lines.push(
      `${t}: ${startup}; untimed setup: ${setups.join(", ") || "-"}${i.log ? `; log ${i.log}` : ""}`,
    );
  }
  return lines.join("\n");
}

// ---------- main ----------

async function main(): Promise<number> {
  const { only, quick, targets } = parseCli();
  installCleanupHandlers();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const profile = quick ? PROFILES.quick : PROFILES.full;
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const scenarios = SERVER_SCENARIOS.filter((s) => only.includes(s.id));
  const rows: Row[] = [];
  const started = Date.now();
  const loadStart = loadavg();
  log(
    `Hangar bench: ${quick ? "quick" : "full"} profile (warmup ${profile.warmup}, N=${profile.n} or ` +
      `${profile.maxMs / 1000} s, concurrency ${CONCURRENCY.join(" & ")}), targets ${targets.join(", ")}, ` +
      `scenarios ${only.join(", ")}`,
  );

  let baselineError: string | undefined;
  if (only.includes("baseline")) baselineError = await benchBaseline(profile, rows);
  const targetInfo: Partial<Record<TargetName, TargetInfo>> = {};
  for (const t of targets) targetInfo[t] = { startupMs: [], setupMs: {}, setupErrors: {}, batchErrors: {} };
  // Fresh servers per scenario (clean state, no background work of one server during the other's
  // measurement); targets interleaved per scenario, alternating who goes first, to spread load drift.
  for (const [i, scenario] of scenarios.entries()) {
    log(`\n== ${scenario.id}: ${scenario.title}`);
    const order = i % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      const info = targetInfo[t]!;
      if (info.error) continue;
      await benchScenario(t, scenario, profile, stamp, info, rows);
    }
  }

  const batchRows: BatchRow[] = [];
  const batchScenarios = BATCH_SCENARIOS.filter((s) => only.includes(s.id));
  for (const [i, scenario] of batchScenarios.entries()) {
    log(`\n== ${scenario.id}: ${scenario.title}`);
    const order = (scenarios.length + i) % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      const info = targetInfo[t]!;
      if (info.error) continue;
      await benchBatch(t, scenario, profile, stamp, info, batchRows);
    }
  }

  const loadEnd = loadavg();
  const report = renderReport(rows, scenarios, targets);
  if (report) process.stdout.write(`\n${report}\n`);
  const batchReport = renderBatchReport(batchRows, batchScenarios, targets);
  if (batchReport) process.stdout.write(`\n${batchReport}\n`);
  if (scenarios.length || batchScenarios.length) {
    process.stdout.write(`\n${renderServerNotes(targetInfo, targets)}\n`);
  }
  process.stdout.write(
    `Host: ${availableParallelism()} CPUs, node ${process.version}, 1-min load average ` +
      `${loadStart[0].toFixed(1)} at start, ${loadEnd[0].toFixed(1)} at end ` +
      `(client and servers share the machine).\n`,
  );
  const failures = Object.entries(targetInfo).filter(
    ([, i]) =>
      i?.error || Object.keys(i?.setupErrors ?? {}).length || Object.keys(i?.batchErrors ?? {}).length,
  );
  for (const [t, i] of failures) {
    if (i?.error) process.stdout.write(`! ${t}: failed to start: ${i.error.split("\n")[0]}\n`);
    for (const [s, e] of Object.entries(i?.setupErrors ?? {}))
      process.stdout.write(`! ${t}/${s} setup: ${e}\n`);
    for (const [s, e] of Object.entries(i?.batchErrors ?? {})) process.stdout.write(`! ${t}/${s}: ${e}\n`);
  }

  const file = join(RESULTS_DIR, `${stamp}.json`);
  const totalMs = Date.now() - started;
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: new Date(started).toISOString(),
        durationMs: totalMs,
        profile: { name: quick ? "quick" : "full", ...profile, concurrency: CONCURRENCY },
        scenarios: only,
        targets,
        host: {
          node: process.version,
          platform: process.platform,
          cpus: availableParallelism(),
          cpuModel: cpus()[0]?.model,
          loadavgStart: loadStart,
          loadavgEnd: loadEnd,
        },
        targetInfo,
        baselineError,
        results: rows,
        batchResults: batchRows,
      },
      null,
      2,
    ),
  );
  process.stdout.write(`\nJSON: ${relative(ROOT, file)}   (total ${(totalMs / 1000).toFixed(0)} s)\n`);
  const bad =
    failures.length > 0 ||
    rows.some((r) => r.errors > 0) ||
    batchRows.some((r) => r.failures > 0) ||
    baselineError !== undefined;
  return bad ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`${(err as Error).message}\n`);
      process.exit(2);
    }
    process.stderr.write(`bench failed: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
