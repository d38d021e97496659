/**
 * Hangar benchmark (`npm run bench`): runs the same HTTP scenarios against Hangar and against the official
 * LangGraph dev server (`@langchain/langgraph-cli dev`, "peer") on the same example graph, one server at a
 * time, at concurrency 1 and 16; prints p50/p95 latency, throughput and the Hangar/peer ratios, plus an
 * in-process `graph.invoke` baseline, and writes everything as JSON to bench/results/<timestamp>.json.
 *
 *   npm run bench -- [--only create-thread,run-wait,...] [--quick] [--target <t>[,<t>...]] [--with-peer]
 *
 * Targets: `hangar` (`hangar dev`, embedded SQLite), `peer`, and Hangar's scale-out backend on PostgreSQL +
 * Redis (`hangar serve`, $DATABASE_URL / $REDIS_URL, default postgres://postgres@127.0.0.1:5432/postgres and
 * redis://127.0.0.1:6379): `pg1` = one `--mode api` process + one `--mode worker` process, `pg2` = one api +
 * two workers, on a fresh schema and Redis prefix per start (dropped at stop). The client talks to the API
 * process. `--target` takes a comma list; `both` = hangar,peer (the default), `all` = hangar,peer,pg1,pg2.
 * The pg targets are reported against the embedded `hangar` target of the same run (pg/hangar ratios).
 *
 * Scenarios: ok, create-thread, run-wait, stream-thread, stream-protocol (protocol v2), stream-stateless,
 * history, search, search-100k
 * (100,000 threads, 10,000 with --quick; the peer only with --with-peer), baseline, then
 * the one-shot run-queue scenarios of bench/batch.ts: bg-throughput, pickup, stream-fanout (printed in a
 * second table; sizes are per target, so that the peer could get smaller counts where its queue would not
 * finish in the time budget; at the sizes below it does finish, so both get the same).
 * Every scenario gets a fresh server per target (clean state), targets interleaved scenario by scenario.
 * Each level: warmup (not recorded), then up to N operations or a time budget, whichever comes first
 * (but at least a minimum sample count, within a hard cap). Exit code 1 if anything failed or erred.
 * The environment is passed to both servers: e.g. `LOG_LEVEL=warn` quietens both servers' per-request logging
 * (the peer's default level is debug, Hangar's info: one line per request), with HANGAR_GRAPH_THREADS=0 (with graph
 * threads on, Hangar's start waits for their "ready" line, an info line).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { getJson } from "./client.ts";
import { runLevel, runMain, UsageError, type LevelResult } from "./measure.ts";
import { baselineOp, loadBaseline } from "./baseline.ts";
import { SERVER_SCENARIOS, type Scenario, type ScenarioContext } from "./scenarios.ts";
import { BATCH_SCENARIOS, fmtS, type BatchRow, type BatchScenario, type BatchSizes } from "./batch.ts";
import {
  installCleanupHandlers,
  RESULTS_DIR,
  ROOT,
  DATABASE_URL,
  isPgTarget,
  PG_WORKERS,
  REDIS_URL,
  startTargetServer,
  TARGETS,
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
  /** Threads of search-100k. */
  bigSearchThreads: number;
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
    bigSearchThreads: 100_000,
    batch: {
      hangar: FULL_BATCH,
      peer: FULL_BATCH,
      pg1: FULL_BATCH,
      pg2: FULL_BATCH,
      "hangar-aes": FULL_BATCH,
      "pg1-aes": FULL_BATCH,
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
    bigSearchThreads: 10_000,
    batch: {
      hangar: QUICK_BATCH,
      peer: QUICK_BATCH,
      pg1: QUICK_BATCH,
      pg2: QUICK_BATCH,
      "hangar-aes": QUICK_BATCH,
      "pg1-aes": QUICK_BATCH,
    },
  },
};

const PEER_OPT_IN = SERVER_SCENARIOS.filter((s) => s.peerOptIn).map((s) => s.id);

const ALL_IDS = [...SERVER_SCENARIOS.map((s) => s.id), "baseline", ...BATCH_SCENARIOS.map((s) => s.id)];

const sizesText = (b: BatchSizes) => `${b.bgRuns}+${b.bgOneThread} / ${b.pickup} / ${b.fanout}`;

const USAGE = `Usage: npm run bench -- [options]

  --only <ids>      comma-separated scenarios (default: all):
                    ${ALL_IDS.join(", ")}
  --quick           smaller runs (N=${PROFILES.quick.n}, ${PROFILES.quick.searchThreads} search threads,
                    search-100k on ${PROFILES.quick.bigSearchThreads} threads instead of ${PROFILES.full.bigSearchThreads};
                    bg-throughput / pickup / stream-fanout: ${sizesText(PROFILES.quick.batch.hangar)},
                    full: ${sizesText(PROFILES.full.batch.hangar)}, peer ${sizesText(PROFILES.full.batch.peer)})
  --target <list>   comma-separated targets (default: both):
                      hangar  hangar dev, embedded SQLite (the baseline of the pg ratios)
                      peer    the official dev server (@langchain/langgraph-cli dev)
                      pg1     hangar serve on PostgreSQL + Redis: 1 --mode api + 1 --mode worker process
                      pg2     the same with 2 worker processes
                      both    = hangar,peer      all = hangar,peer,pg1,pg2
                    pg targets use $DATABASE_URL (default ${DATABASE_URL})
                    and $REDIS_URL (default ${REDIS_URL}), with a fresh schema
                    + Redis prefix per server start, dropped when it stops
  --with-peer       also run the peer on the scenarios it skips by default (${PEER_OPT_IN.join(", ")})
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
  /** What a scenario's setup did (e.g. the search-100k fill rate). */
  setupNotes: Record<string, string>;
  /** What the target runs on (a scale-out deployment: its processes). */
  details?: string;
  setupErrors: Record<string, string>;
  /** Scenarios not run on this target (the peer's opt-in ones without --with-peer). */
  skipped: string[];
  /** Batch scenarios that threw (as opposed to counting failures). */
  batchErrors: Record<string, string>;
}

function parseCli() {
  const { values } = parseArgs({
    options: {
      only: { type: "string" },
      quick: { type: "boolean", default: false },
      target: { type: "string", default: "both" },
      "with-peer": { type: "boolean", default: false },
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
  const aliases: Record<string, readonly TargetName[]> = { both: ["hangar", "peer"], all: TARGETS };
  const asked = values.target
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .flatMap((t) => aliases[t] ?? [t]);
  const bad = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (bad.length || !asked.length) {
    throw new UsageError(
      `--target takes a comma list of ${TARGETS.join(", ")}, both or all (got ${values.target})\n\n${USAGE}`,
    );
  }
  // Report order: hangar, peer, pg1, pg2 (whatever order they were given in).
  const targets = TARGETS.filter((t) => asked.includes(t));
  return { only, quick: values.quick, targets, withPeer: values["with-peer"] };
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
    server = await startTargetServer(name, stamp);
  } catch (err) {
    info.error = (err as Error).message;
    log(`  ${name}: FAILED TO START\n${info.error}`);
    return undefined;
  }
  info.startupMs.push(Math.round(server.startupMs));
  info.log = server.logFiles.map((f) => relative(ROOT, f)).join(", ");
  info.details = server.details;
  const pids = server.pids.length > 1 ? `pids ${server.pids.join(", ")}` : `pid ${server.pid}`;
  const details = [server.details, server.schema && `schema ${server.schema}`].filter(Boolean).join(", ");
  log(
    `  ${name}: ${server.url} (${pids}, ready in ${Math.round(server.startupMs)} ms${details ? `; ${details}` : ""})`,
  );
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
    const ctx: ScenarioContext = {
      url: server.url,
      searchThreads: profile.searchThreads,
      bigSearchThreads: profile.bigSearchThreads,
    };
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
      const note = scenario.describeSetup?.(ctx, state);
      if (note) info.setupNotes[scenario.id] = note;
      log(`  ${name} ${scenario.id}: setup ${info.setupMs[scenario.id]} ms${note ? ` (${note})` : ""}`);
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
        pids: server.pids,
        sizes,
        scaledNote: scaled ? `N scaled down for ${name} (time budget)` : undefined,
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
  const pgTargets = targets.filter(isPgTarget);
  const hasHangar = targets.includes("hangar");
  const hasPeer = targets.includes("peer");
  // Table 1: hangar and/or peer, side by side, with the Hangar/peer ratios when both ran. Left out when the
  // run is hangar + pg targets only: table 2 shows hangar's numbers beside theirs.
  const mainTargets = targets.filter((t) => !isPgTarget(t));
  const showMain = mainTargets.length > 0 && (hasPeer || pgTargets.length === 0);
  const both = hasHangar && hasPeer;
  const header = ["scenario", "metric", "c"];
  for (const t of mainTargets) header.push(`${t} p50`, `${t} p95`, `${t} req/s`);
  if (both) header.push("p50 h/p", "p95 h/p", "req/s h/p");
  const cellsOf = (r: Row | undefined, lastMetric: boolean) => {
    if (!r) return ["-", "-", "-"];
    const err = r.errors ? ` !${r.errors}err` : "";
    return [fmtMs(r.p50), fmtMs(r.p95), (lastMetric ? fmtRate(r.throughput) : "") + err];
  };
  const ratios = (a: Row | undefined, b: Row | undefined, lastMetric: boolean) => [
    fmtRatio(a?.p50 ?? NaN, b?.p50 ?? NaN),
    fmtRatio(a?.p95 ?? NaN, b?.p95 ?? NaN),
    lastMetric ? fmtRatio(a?.throughput ?? NaN, b?.throughput ?? NaN) : "",
  ];
  const body: string[][] = [];
  // Table 2: the scale-out targets against the embedded hangar target of this run, one row per target.
  const pgHeader = ["scenario", "metric", "c", "target", "p50", "p95", "req/s"];
  if (hasHangar) pgHeader.push("p50 x/h", "p95 x/h", "req/s x/h");
  const pgBody: string[][] = [];
  for (const s of scenarios) {
    for (const c of CONCURRENCY) {
      s.metrics.forEach((metric, mi) => {
        const lastMetric = mi === s.metrics.length - 1;
        if (showMain) {
          const cells = [mi === 0 ? s.id : "", metric, String(c)];
          for (const t of mainTargets) cells.push(...cellsOf(find(t, s.id, metric, c), lastMetric));
          if (both) {
            cells.push(...ratios(find("hangar", s.id, metric, c), find("peer", s.id, metric, c), lastMetric));
          }
          body.push(cells);
        }
        if (pgTargets.length) {
          const h = find("hangar", s.id, metric, c);
          const group = hasHangar ? (["hangar", ...pgTargets] as TargetName[]) : pgTargets;
          group.forEach((t, ti) => {
            const first = ti === 0;
            const r = find(t, s.id, metric, c);
            const cells = [
              first && mi === 0 && pgBody.every((b) => b[0] !== s.id) ? s.id : "",
              first ? metric : "",
              first ? String(c) : "",
              t,
              ...cellsOf(r, lastMetric),
            ];
            if (hasHangar) cells.push(...(t === "hangar" ? ["", "", ""] : ratios(r, h, lastMetric)));
            pgBody.push(cells);
          });
        }
      });
    }
  }
  if (body.length || pgBody.length) {
    out.push("Latency in ms, throughput in completed requests/s (N per level, or the time budget).");
    if (scenarios.some((s) => s.metrics.includes("ttfe"))) {
      out.push("Streams: ttfe = first SSE event, last = last SSE event, total = server closed the stream.");
    }
  }
  if (body.length) {
    if (both) {
      out.push("h/p = Hangar / peer: latency ratio < 1 and req/s ratio > 1 mean Hangar is faster.");
    }
    out.push("");
    out.push(table(header, body, (i) => i >= 2));
  }
  if (pgBody.length) {
    if (body.length) out.push("");
    out.push(
      "Scale-out backend (hangar serve on PostgreSQL + Redis; the client talks to the API process): " +
        pgTargets.map((t) => `${t} = 1 api + ${PG_WORKERS[t]} worker process(es)`).join(", ") +
        ".",
    );
    out.push(
      hasHangar
        ? "x/h = that target / embedded hangar (SQLite, one process) of this same run: latency ratio > 1 and " +
            "req/s ratio < 1 mean the pg target is slower."
        : "No embedded hangar target in this run: no pg/hangar ratios (add --target hangar,...).",
    );
    out.push("");
    out.push(table(pgHeader, pgBody, (i) => i === 2 || i >= 4));
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
  const hasHangar = targets.includes("hangar");
  const both = hasHangar && targets.includes("peer");
  const vsHangar = hasHangar && targets.some(isPgTarget);
  const header = ["scenario", "variant", "target", "N", "ok", "fail", "total", "rate", "p50 ms", "p95 ms"];
  if (both) header.push("rate h/p", "p50 h/p");
  if (vsHangar) header.push("rate x/h", "p50 x/h");
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
        const h = found[targets.indexOf("hangar")];
        if (both) {
          const p = found[targets.indexOf("peer")];
          const onHangar = targets[ti] === "hangar";
          cells.push(
            onHangar ? fmtRatio(h?.rate ?? NaN, p?.rate ?? NaN) : "",
            onHangar ? fmtRatio(h?.p50 ?? NaN, p?.p50 ?? NaN) : "",
          );
        }
        if (vsHangar) {
          const pg = isPgTarget(targets[ti]);
          cells.push(
            pg ? fmtRatio(r.rate, h?.rate ?? NaN) : "",
            pg ? fmtRatio(r.p50 ?? NaN, h?.p50 ?? NaN) : "",
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
    "    memory = (peak - before) server RSS / N (summed over all of a target's processes).",
  ];
  if (both)
    out.push("  rate h/p > 1 and p50 h/p < 1 mean Hangar is faster (at each target's N, see the N column).");
  if (vsHangar)
    out.push(
      "  x/h = pg target / embedded hangar of this run: rate x/h < 1 and p50 x/h > 1 mean the pg target is slower.",
    );
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
    const details = i.details ? ` (${i.details})` : "";
    const skipped = i.skipped.length ? `; skipped ${i.skipped.join(", ")} (--with-peer runs it)` : "";
    lines.push(
      `${t}${details}: ${startup}${skipped}; untimed setup: ${setups.join(", ") || "-"}` +
        (i.log ? `; log ${i.log}` : ""),
    );
    for (const [s, note] of Object.entries(i.setupNotes)) lines.push(`  ${t} ${s} setup: ${note}`);
  }
  return lines.join("\n");
}

// ---------- main ----------

async function main(): Promise<number> {
  const { only, quick, targets, withPeer } = parseCli();
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
  for (const t of targets) {
    targetInfo[t] = {
      startupMs: [],
      setupMs: {},
      setupNotes: {},
      skipped: [],
      setupErrors: {},
      batchErrors: {},
    };
  }
  // Fresh servers per scenario (clean state, no background work of one server during the other's
  // measurement); targets interleaved per scenario, alternating who goes first, to spread load drift.
  for (const [i, scenario] of scenarios.entries()) {
    log(`\n== ${scenario.id}: ${scenario.title}`);
    const order = i % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      const info = targetInfo[t]!;
      if (info.error) continue;
      if (t === "peer" && scenario.peerOptIn && !withPeer) {
        log(`  peer: skipped (${scenario.peerOptIn}; --with-peer runs it)`);
        info.skipped.push(scenario.id);
        continue;
      }
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

runMain("bench", main);
