/**
 * Soak benchmark (`npm run bench:soak`, issue 26 "Memory bounded by what is active"): does the server's memory
 * grow with every thread it ever served? One `hangar serve` process per target serves --threads threads, each
 * a POST /threads then a POST /threads/{id}/runs/wait of the examples' `chat` graph (the "echo" graph of the
 * CPU bench), --concurrency at a time; then it is left idle.
 *
 *   npm run bench:soak -- [--target embedded,pg] [--threads 20000] [--warm 1000] [--every 5000]
 *                         [--concurrency 8] [--idle-seconds 5] [--snapshots] [--timeout-seconds 3600]
 *
 * Targets: `embedded` (`hangar serve` on SQLite in a temp `--data-dir`) and `pg` (`hangar serve`, mode all, on
 * PostgreSQL + Redis: $DATABASE_URL, $REDIS_URL, default the local servers, a fresh schema and Redis prefix
 * dropped at the end). Each server starts with its inspector on a free loopback port (`--inspect`).
 *
 * Measured after the first --warm threads, every --every threads, and at the end after --idle-seconds idle:
 * through the inspector, two full collections (HeapProfiler.collectGarbage), then the process's own
 * `process.memoryUsage()` (heap used + external: "held", what it keeps), and VmRSS of /proc/<pid>/status.
 * The figure: held at the end minus held after the warm-up, and the same per 10k threads. With --snapshots, a
 * heap snapshot after the warm-up and at the end (written to bench/results/) and the constructors whose count
 * or size grew most between them (where to look for what is retained per thread).
 *
 * Prints a table and writes JSON to bench/results/soak-<timestamp>.json (server logs beside it). Nothing is
 * asserted on the figures; the exit code is 1 if a server did not start, a request failed, or the bench
 * outlived --timeout-seconds (it then stops what it started). Processes are stopped by their own pid.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import WebSocket from "ws";
import { postJson } from "./client.ts";
import { runMain, UsageError } from "./measure.ts";
import {
  DATABASE_URL,
  type Deployment,
  dropDeployment,
  dropDeploymentsSync,
  EXAMPLES_DIR,
  REDIS_URL,
  RESULTS_DIR,
  ROOT,
} from "./servers.ts";

const TARGETS = ["embedded", "pg"] as const;
type Target = (typeof TARGETS)[number];
const GRAPH_ID = "chat";
const INPUT = { messages: [{ role: "user", content: "hello" }] };
const MB = 2 ** 20;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`${line}\n`);
const fmt = (bytes: number | undefined) => (bytes === undefined ? "-" : (bytes / MB).toFixed(1));

// ---------- the server process ----------

interface Server {
  proc: ChildProcess;
  pid: number;
  url: string;
  inspector: string;
  logFile: string;
}

/** What to stop and drop on failure, SIGINT or exit. */
const live = new Set<ChildProcess>();
const tempDirs = new Set<string>();
const deployments = new Set<Deployment>();

async function startServer(target: Target, stamp: string, deployment?: Deployment): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), "hangar-soak-"));
  tempDirs.add(dataDir);
  const logFile = join(RESULTS_DIR, `soak-${stamp}-${target}.log`);
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PORT;
  if (deployment) {
    Object.assign(env, {
      DATABASE_URL,
      REDIS_URL,
      HANGAR_DATABASE_SCHEMA: deployment.schema,
      HANGAR_REDIS_PREFIX: deployment.redisPrefix,
    });
  }
  // The `hangar` command as installed (its first line gives node its flags), this node first on PATH.
  const args = ["serve", "--config", join(EXAMPLES_DIR, "langgraph.json"), "--port", "0"];
  args.push("--host", "127.0.0.1", ...(deployment ? [] : ["--data-dir", dataDir]));
  const proc = spawn(join(ROOT, "bin/hangar.js"), args, {
    cwd: ROOT,
    env: {
      ...env,
      PATH: [dirname(process.execPath), env.PATH].filter(Boolean).join(delimiter),
      NODE_OPTIONS: [env.NODE_OPTIONS, "--inspect=127.0.0.1:0"].filter(Boolean).join(" "),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  live.add(proc);
  proc.once("exit", () => live.delete(proc));
  const out = createWriteStream(logFile);
  let head = "";
  const onData = (d: Buffer) => {
    out.write(d);
    if (head.length < 100_000) head += d.toString();
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  proc.once("exit", () => out.end());
  const deadline = Date.now() + 60_000;
  for (;;) {
    const url = /listening on (http:\/\/[^\s"]+)/.exec(head)?.[1];
    const inspector = /Debugger listening on (ws:\/\/\S+)/.exec(head)?.[1];
    if (url && inspector) return { proc, pid: proc.pid!, url: url.replace(/\/+$/, ""), inspector, logFile };
    if (proc.exitCode !== null || Date.now() > deadline) {
      throw new Error(`${target}: the server did not start (see ${logFile}):\n${head.slice(-2_000)}`);
    }
    await sleep(50);
  }
}

async function stopServer(s: Server): Promise<void> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return;
  const exited = new Promise((r) => s.proc.once("exit", r));
  s.proc.kill("SIGTERM");
  const timer = setTimeout(() => s.proc.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

// ---------- the inspector ----------

/** A Chrome DevTools Protocol session on a process's inspector. */
class Inspector {
  private next = 0;
  private pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();
  private chunks: string[] = [];

  private constructor(private ws: WebSocket) {
    ws.on("message", (raw) => {
      const msg = JSON.parse(String(raw));
      if (msg.method === "HeapProfiler.addHeapSnapshotChunk") this.chunks.push(msg.params.chunk);
      const call = msg.id === undefined ? undefined : this.pending.get(msg.id);
      if (!call) return;
      this.pending.delete(msg.id);
      if (msg.error) call.reject(new Error(msg.error.message));
      else call.resolve(msg.result);
    });
  }

  static async open(url: string): Promise<Inspector> {
    const ws = new WebSocket(url, { maxPayload: 2 ** 30 });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new Inspector(ws);
  }

  send(method: string, params: object = {}): Promise<any> {
    return new Promise((resolve, reject) => {
      const id = ++this.next;
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Two full collections, then what the process holds (heap used + external) and its resident memory. */
  async held(pid: number): Promise<{ heldBytes: number; heapUsed: number; external: number; rss: number }> {
    await this.send("HeapProfiler.collectGarbage");
    await this.send("HeapProfiler.collectGarbage");
    const { result } = await this.send("Runtime.evaluate", {
      expression: "JSON.stringify(process.memoryUsage())",
      returnByValue: true,
    });
    const m = JSON.parse(result.value) as { heapUsed: number; external: number };
    return { heldBytes: m.heapUsed + m.external, heapUsed: m.heapUsed, external: m.external, rss: rss(pid) };
  }

  /** A heap snapshot (after a full collection), as its JSON text. */
  async snapshot(): Promise<string> {
    this.chunks = [];
    await this.send("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const text = this.chunks.join("");
    this.chunks = [];
    return text;
  }

  close(): void {
    this.ws.close();
  }
}

/** VmRSS of /proc/<pid>/status, bytes. */
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1] ?? 0) * 1024;
}

// ---------- heap snapshots: count and size per constructor ----------

type Census = Map<string, { count: number; size: number }>;

/** Objects per "type:name" (strings lumped together), with their total self size. */
function census(text: string): Census {
  const snap = JSON.parse(text) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const [iType, iName, iSize] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const out: Census = new Map();
  for (let i = 0; i < snap.nodes.length; i += fields.length) {
    const type = types[snap.nodes[i + iType]];
    const key = ["string", "concatenated string", "sliced string"].includes(type)
      ? "(strings)"
      : `${type}:${snap.strings[snap.nodes[i + iName]].slice(0, 60)}`;
    const e = out.get(key) ?? { count: 0, size: 0 };
    e.count++;
    e.size += snap.nodes[i + iSize];
    out.set(key, e);
  }
  return out;
}

/** The `top` keys whose self size grew most from `a` to `b`. */
function grown(a: Census, b: Census, top = 20) {
  const rows = [...b].map(([key, v]) => {
    const before = a.get(key) ?? { count: 0, size: 0 };
    return { key, count: v.count - before.count, size: v.size - before.size };
  });
  return rows.sort((x, y) => y.size - x.size).slice(0, top);
}

// ---------- the load ----------

/** Serves threads `from`..`to`-1: create a thread, wait for a run of GRAPH_ID on it; `concurrency` at once. */
async function load(url: string, from: number, to: number, concurrency: number): Promise<void> {
  let next = from;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < to) {
        next++;
        const { thread_id } = await postJson<{ thread_id: string }>(`${url}/threads`, {});
        const values = await postJson<{ messages?: unknown[] }>(`${url}/threads/${thread_id}/runs/wait`, {
          assistant_id: GRAPH_ID,
          input: INPUT,
        });
        if (values?.messages?.length !== 2)
          throw new Error(`runs/wait: unexpected ${JSON.stringify(values)}`);
      }
    }),
  );
}

interface Point {
  threads: number;
  heldBytes: number;
  heapUsed: number;
  external: number;
  rss: number;
  /** Seconds since the load started. */
  t: number;
}

interface TargetResult {
  target: Target;
  points: Point[];
  /** Held at the end minus held after the warm-up, bytes; and per 10k threads served after it. */
  grewBytes?: number;
  per10kBytes?: number;
  /** The same from the second measure to the end (once bounded caches have filled: the steady growth). */
  laterPer10kBytes?: number;
  grown?: ReturnType<typeof grown>;
  snapshots?: string[];
  logFile?: string;
  error?: string;
}

async function soak(target: Target, opts: Options, stamp: string): Promise<TargetResult> {
  const r: TargetResult = { target, points: [] };
  let deployment: Deployment | undefined;
  if (target === "pg") {
    const schema = `hangar_bench_${process.pid}_soak_${randomBytes(3).toString("hex")}`;
    deployment = { schema, redisPrefix: `${schema}:` };
    deployments.add(deployment);
  }
  let server: Server | undefined;
  let inspector: Inspector | undefined;
  try {
    server = await startServer(target, stamp, deployment);
    r.logFile = relative(ROOT, server.logFile);
    inspector = await Inspector.open(server.inspector);
    log(`== ${target}: ${server.url} (pid ${server.pid})`);
    const t0 = performance.now();
    const marks = [opts.warm];
    for (let n = opts.warm + opts.every; n < opts.threads; n += opts.every) marks.push(n);
    marks.push(opts.threads);
    let served = 0;
    const censuses: Census[] = [];
    for (const [i, mark] of marks.entries()) {
      await load(server.url, served, mark, opts.concurrency);
      served = mark;
      const last = i === marks.length - 1;
      if (last) await sleep(opts.idleSeconds * 1000);
      const p = {
        threads: served,
        ...(await inspector.held(server.pid)),
        t: (performance.now() - t0) / 1000,
      };
      r.points.push(p);
      log(
        `  ${served} threads (${p.t.toFixed(0)} s): held ${fmt(p.heldBytes)} MB (heap ${fmt(p.heapUsed)}, ` +
          `external ${fmt(p.external)}), RSS ${fmt(p.rss)} MB`,
      );
      if (opts.snapshots && (i === 0 || last)) {
        const text = await inspector.snapshot();
        const file = join(RESULTS_DIR, `soak-${stamp}-${target}-${served}.heapsnapshot`);
        writeFileSync(file, text);
        (r.snapshots ??= []).push(relative(ROOT, file));
        censuses.push(census(text));
      }
    }
    const [first, end] = [r.points[0], r.points[r.points.length - 1]];
    r.grewBytes = end.heldBytes - first.heldBytes;
    r.per10kBytes = end.threads > first.threads ? (r.grewBytes / (end.threads - first.threads)) * 10_000 : 0;
    const second = r.points[1];
    if (second && end.threads > second.threads) {
      r.laterPer10kBytes = ((end.heldBytes - second.heldBytes) / (end.threads - second.threads)) * 10_000;
    }
    if (censuses.length === 2) r.grown = grown(censuses[0], censuses[1]);
  } catch (err) {
    r.error = (err as Error).message;
    log(`  ! ${target}: ${r.error}`);
  } finally {
    inspector?.close();
    if (server) await stopServer(server);
    if (deployment) {
      await dropDeployment(deployment).catch((e) => log(`  dropping ${deployment.schema}: ${e.message}`));
      deployments.delete(deployment);
    }
  }
  return r;
}

function render(r: TargetResult): string {
  const out = [`== ${r.target}${r.logFile ? ` (log ${r.logFile})` : ""}`];
  out.push("   threads  held MB  heap MB  external MB  RSS MB   Δheld MB");
  const base = r.points[0]?.heldBytes ?? 0;
  for (const p of r.points) {
    out.push(
      `   ${String(p.threads).padStart(7)}  ${fmt(p.heldBytes).padStart(7)}  ${fmt(p.heapUsed).padStart(7)}  ` +
        `${fmt(p.external).padStart(11)}  ${fmt(p.rss).padStart(6)}  ${fmt(p.heldBytes - base).padStart(9)}`,
    );
  }
  if (r.grewBytes !== undefined) {
    out.push(
      `   held at the end − after the first ${r.points[0].threads}: ${fmt(r.grewBytes)} MB; ` +
        `per 10k threads: ${fmt(r.per10kBytes)} MB` +
        (r.laterPer10kBytes === undefined
          ? ""
          : `; from ${r.points[1].threads} threads on (bounded caches full): ${fmt(r.laterPer10kBytes)} MB per 10k`),
    );
  }
  if (r.grown) {
    out.push("   grown most between the snapshots (Δcount, Δself size KB):");
    for (const g of r.grown) out.push(`     ${g.key}: ${g.count}, ${(g.size / 1024).toFixed(0)}`);
  }
  if (r.error) out.push(`   ! ${r.error}`);
  return out.join("\n");
}

// ---------- main ----------

interface Options {
  targets: Target[];
  threads: number;
  warm: number;
  every: number;
  concurrency: number;
  idleSeconds: number;
  snapshots: boolean;
  timeoutSeconds: number;
}

const USAGE = `Usage: npm run bench:soak -- [options]

  --target <list>        comma-separated (default embedded): embedded, pg (PostgreSQL + Redis: $DATABASE_URL,
                         default ${DATABASE_URL}; $REDIS_URL, default ${REDIS_URL})
  --threads <n>          threads served in all, one run each (default 20000)
  --warm <n>             threads served before the baseline measure (default 1000)
  --every <n>            a measure every n threads (default 5000)
  --concurrency <n>      threads served at once (default 8)
  --idle-seconds <s>     idle wait before the last measure (default 5)
  --snapshots            heap snapshots after the warm-up and at the end, and what grew between them
  --timeout-seconds <s>  hard limit of the whole bench (default 3600)
  -h, --help             this help
`;

function parseCli(): Options {
  const { values } = parseArgs({
    options: {
      target: { type: "string" },
      threads: { type: "string" },
      warm: { type: "string" },
      every: { type: "string" },
      concurrency: { type: "string" },
      "idle-seconds": { type: "string" },
      snapshots: { type: "boolean", default: false },
      "timeout-seconds": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const asked = (values.target ?? "embedded").split(",").map((t) => t.trim());
  const bad = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (bad.length) throw new UsageError(`unknown target(s): ${bad.join(", ")}\n\n${USAGE}`);
  const int = (name: string, v: string | undefined, dflt: number, min: number) => {
    const x = v === undefined ? dflt : Number(v);
    if (!Number.isInteger(x) || x < min)
      throw new UsageError(`--${name} takes an integer ≥ ${min} (got ${v})`);
    return x;
  };
  const o: Options = {
    targets: TARGETS.filter((t) => asked.includes(t)),
    threads: int("threads", values.threads, 20_000, 1),
    warm: int("warm", values.warm, 1_000, 1),
    every: int("every", values.every, 5_000, 1),
    concurrency: int("concurrency", values.concurrency, 8, 1),
    idleSeconds: int("idle-seconds", values["idle-seconds"], 5, 0),
    snapshots: values.snapshots ?? false,
    timeoutSeconds: int("timeout-seconds", values["timeout-seconds"], 3600, 10),
  };
  if (o.warm > o.threads) throw new UsageError("--warm cannot exceed --threads");
  return o;
}

function cleanupSync(): void {
  for (const p of live) p.kill("SIGKILL");
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
  if (deployments.size) dropDeploymentsSync([...deployments]);
  deployments.clear();
}

async function main(): Promise<number> {
  const opts = parseCli();
  const command = ["npm run bench:soak --", ...process.argv.slice(2)].join(" ");
  process.once("exit", cleanupSync);
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => process.exit(130));
  setTimeout(() => {
    log(`timed out after ${opts.timeoutSeconds} s (--timeout-seconds)`);
    process.exit(1);
  }, opts.timeoutSeconds * 1000).unref();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const loadStart = loadavg();
  log(`Hangar soak bench: ${command}`);
  const results: TargetResult[] = [];
  for (const t of opts.targets) results.push(await soak(t, opts, stamp));
  const report = [
    "",
    ...results.map(render),
    "",
    "held = heap used + external of the server process after two forced full collections (its inspector);",
    "RSS = VmRSS at the same moment (MB = 2^20 bytes). The last row follows the idle wait.",
    `Host: ${availableParallelism()} CPUs, node ${process.version}; load average ${loadStart.map((l) => l.toFixed(2)).join(" ")} ` +
      `at start, ${loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")} at end.`,
    `Command: ${command}`,
  ];
  process.stdout.write(`${report.join("\n")}\n`);
  const file = join(RESULTS_DIR, `soak-${stamp}.json`);
  writeFileSync(file, JSON.stringify({ command, options: opts, results }, null, 2));
  process.stdout.write(`\nJSON: ${relative(ROOT, file)}\n`);
  return results.some((r) => r.error) ? 1 : 0;
}

runMain("bench:soak", main, async () => cleanupSync());
