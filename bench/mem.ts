/**
 * Memory benchmark (`npm run bench:mem`, issue "Memory: idle RSS of `hangar serve` ≤ 120 MB; 1,000 concurrent
 * streams ≤ 200 MB more"): the resident memory of `hangar serve`'s whole process tree, idle and with 1,000
 * streamed runs open at once.
 *
 *   npm run bench:mem -- [--target embedded,pg] [--streams 1000] [--idle-seconds 10] [--timeout-seconds 300]
 *
 * Targets (default `embedded`):
 *   embedded  `hangar serve` on the embedded backend (SQLite in a temp `--data-dir`), one process
 *   pg        `hangar serve` on PostgreSQL + Redis ($DATABASE_URL, $REDIS_URL; default the local servers),
 *             one `--mode api` and one `--mode worker` process, as bench/servers.ts's pg1, on a fresh schema
 *             and Redis key prefix (dropped at the end); PostgreSQL's and Redis's own memory is not counted
 *
 * Every server runs the fixture project bench/fixtures/mem (graph `gate`: one node that waits until the file
 * named by the run's input exists), on 127.0.0.1 and a free port, with `--n-jobs-per-worker <streams>` so that
 * every run executes at once. Per target:
 *   1. idle: start, wait until GET /ok answers, wait --idle-seconds, then sample RSS IDLE_SAMPLES times 1 s
 *      apart (the last and the max are reported);
 *   2. streams: create --streams threads, then open one `POST /threads/{id}/runs/stream` per thread
 *      (stream_mode ["values"], OPEN_CONCURRENCY openings in flight until their first event), all on one
 *      undici Agent with a connection each. Once every stream has its first event (`metadata`) and every run
 *      has started (its first `values` event), wait SETTLE_MS, then sample as in 1;
 *   3. after: create the release file, read every stream to its end and check its final values (`result`
 *      "released <n>", no `error` event), then sample for AFTER_MS (the last sample is reported: nothing
 *      forces a GC here, so this is what the process holds on its own a few seconds later);
 *   4. after GC: start each server's inspector (SIGUSR1; NODE_OPTIONS gives it a free loopback port, nothing
 *      else changes until then) and force a full GC through it (HeapProfiler.collectGarbage), then sample
 *      again: what stays is retained memory (or heap V8 did not give back), not garbage.
 * After each step GET /metrics is read for the server's V8 heap, open stream clients and running runs (after
 * the RSS samples, so it does not disturb them). The server tree's CPU time while the streams open is reported
 * too (how busy opening them kept it).
 *
 * RSS = VmRSS of /proc/<pid>/status summed over the tree of every process the bench spawned (each started in
 * its own process group): the spawned pid, its descendants and any process left in its group (e.g.
 * `hangar serve`, and the esbuild service tsx starts when it compiles TypeScript that is not in its cache).
 * Each process is listed; VmHWM (peak RSS) is per process, and its sum is an upper bound of the tree's peak.
 *
 * Prints a table and writes JSON to bench/results/mem-<timestamp>.json (server logs beside it). Nothing is
 * asserted on the figures: the exit code is 1 only if a server did not start, a stream or run failed, or
 * the whole bench outlived --timeout-seconds (it then stops what it started). Every process it started is
 * stopped by its process group at the end, on failure and on SIGINT/SIGTERM.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  type WriteStream,
} from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from "node:os";
import { delimiter, dirname, join, relative } from "node:path";
import { parseArgs } from "node:util";
import { Agent, request } from "undici";
import WebSocket from "ws";
import { getJson, postJson } from "./client.ts";
import { mapConcurrent, runMain, UsageError } from "./measure.ts";
import {
  DATABASE_URL,
  type Deployment,
  dropDeployment,
  dropDeploymentsSync,
  groupAlive,
  signalGroup,
  pgClient,
  REDIS_URL,
  RESULTS_DIR,
  ROOT,
} from "./servers.ts";

const FIXTURE_DIR = join(ROOT, "bench/fixtures/mem");
const FIXTURE_CONFIG = join(FIXTURE_DIR, "langgraph.json");
const GRAPH_ID = "gate";

const TARGETS = ["embedded", "pg"] as const;
type Target = (typeof TARGETS)[number];

const DEFAULT_STREAMS = 1000;
const DEFAULT_IDLE_SECONDS = 10;
const DEFAULT_TIMEOUT_SECONDS = 300;
/** RSS samples per measurement, SAMPLE_GAP_MS apart. */
const IDLE_SAMPLES = 5;
const SAMPLE_GAP_MS = 1_000;
/** Wait after every stream is open and every run started, before sampling. */
const SETTLE_MS = 5_000;
/** Sampled (SAMPLE_GAP_MS apart) after every stream ended; the last sample is "after". */
const AFTER_MS = 10_000;
/** Stream openings in flight (until their first event); threads created at once. */
const OPEN_CONCURRENCY = 100;
const CREATE_CONCURRENCY = 32;
/** How long the bench waits for every stream's first event, every run's start, every stream's end. */
const OPEN_DEADLINE_MS = 120_000;
const STARTED_DEADLINE_MS = 60_000;
const DRAIN_DEADLINE_MS = 120_000;
/** Server start-up: "listening on" and GET /ok. */
const START_DEADLINE_MS = 60_000;
/** Between-chunks timeout of a stream (the server sends a heartbeat comment every 10 s). */
const STREAM_BODY_TIMEOUT_MS = 60_000;
/**
 * Given to every server in NODE_OPTIONS: where its inspector listens if SIGUSR1 starts it (loopback, a free
 * port). The inspector is started only at the very end, to force a full GC (forceGc); until then nothing
 * changes.
 */
const INSPECT_PORT_OPTION = "--inspect-port=127.0.0.1:0";
/** Wait after the forced GC before sampling; samples then taken. */
const GC_SETTLE_MS = 2_000;
const GC_SAMPLES = 3;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (line: string) => process.stderr.write(`${line}\n`);
const mb = (kb: number) => kb / 1024;
const fmtMb = (kb: number | undefined) => (kb === undefined ? "-" : mb(kb).toFixed(1));

// ---------- processes we start, and stopping them ----------

interface Spawned {
  role: string;
  proc: ChildProcess;
  pid: number;
  command: string[];
  logFile: string;
  log: WriteStream;
  /** The first 200 kB of its output (for "listening on" and the report). */
  output: () => string;
  /** Where its inspector listens, once SIGUSR1 started it ("Debugger listening on ws://..."). */
  inspectorUrl?: string;
  stopped: boolean;
}

/** Every process group started and not stopped yet; temp dirs and deployments to remove. */
const live = new Set<Spawned>();
const tempDirs = new Set<string>();
const deployments = new Set<Deployment>();
/** Release files: created before stopping, so that blocked runs end and the servers stop at once. */
const releaseFiles = new Set<string>();
/** Client-side resources to close on cleanup (the stream Agent). */
const closers = new Set<() => Promise<void>>();

function spawnServer(role: string, args: string[], env: NodeJS.ProcessEnv, logFile: string): Spawned {
  // The `hangar` command as installed (npm links bin/hangar.js): run as an executable, so its first line gives
  // node its flags, with this node first on PATH.
  const command = [join(ROOT, "bin/hangar.js"), ...args];
  const proc = spawn(command[0], command.slice(1), {
    cwd: FIXTURE_DIR,
    // The inspector is not started (nothing changes until SIGUSR1: see forceGc); if it is, on a free port.
    env: {
      ...env,
      PATH: [dirname(process.execPath), env.PATH].filter(Boolean).join(delimiter),
      NODE_OPTIONS: [env.NODE_OPTIONS, INSPECT_PORT_OPTION].filter(Boolean).join(" "),
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // its own process group: stopped with every child by one pid
  });
  const out = createWriteStream(logFile, { flags: "a" });
  out.write(`===== ${new Date().toISOString()} ${command.join(" ")}\n`);
  let text = "";
  let tail = "";
  const onData = (d: Buffer) => {
    out.write(d);
    if (text.length < 200_000) text += d.toString();
    tail = (tail + d.toString()).slice(-4_000);
    s.inspectorUrl ??= /Debugger listening on (ws:\/\/\S+)/.exec(tail)?.[1];
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  proc.once("exit", () => out.end());
  if (proc.pid === undefined) throw new Error(`${role}: spawn failed`);
  const s: Spawned = {
    role,
    proc,
    pid: proc.pid,
    command,
    logFile,
    log: out,
    output: () => text,
    stopped: false,
  };
  live.add(s);
  return s;
}

/** SIGTERM to the process group, SIGKILL after `graceMs`. */
async function stopSpawned(s: Spawned, graceMs = 10_000): Promise<void> {
  if (s.stopped) return;
  signalGroup(s.pid, "SIGTERM");
  const deadline = Date.now() + graceMs;
  while (groupAlive(s.pid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(s.pid)) {
    log(`  ${s.role}: still running ${graceMs / 1000} s after SIGTERM, SIGKILL`);
    signalGroup(s.pid, "SIGKILL");
    const killDeadline = Date.now() + 2_000;
    while (groupAlive(s.pid) && Date.now() < killDeadline) await sleep(50);
  }
  s.stopped = true;
  live.delete(s);
}

/** Drops a pg deployment's schema and Redis keys (its processes stopped): servers.ts's, then forgets it here. */
async function dropMemDeployment(d: Deployment): Promise<void> {
  await dropDeployment(d);
  deployments.delete(d);
}

/** Stops everything this bench started (release first, then the servers), drops deployments and temp dirs. */
async function cleanup(): Promise<void> {
  for (const f of releaseFiles) {
    try {
      writeFileSync(f, "released by cleanup\n");
    } catch {
      // its dir is gone
    }
  }
  await Promise.all([...closers].map((c) => c().catch(() => {})));
  closers.clear();
  await Promise.all([...live].map((s) => stopSpawned(s)));
  for (const d of [...deployments]) {
    await dropMemDeployment(d).catch((err) =>
      log(`  dropping schema ${d.schema} failed: ${(err as Error).message}`),
    );
  }
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Last resort on "exit": SIGKILL what still runs, remove temp dirs, drop deployments in a child process. */
function cleanupSync(): void {
  for (const s of live) signalGroup(s.pid, "SIGKILL");
  live.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
  if (!deployments.size) return;
  dropDeploymentsSync([...deployments]);
  deployments.clear();
}

function installHandlers(timeoutMs: number): NodeJS.Timeout {
  let stopping = false;
  const stopThenExit = (why: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log(`\n${why}: stopping the servers this bench started...`);
    const bound = setTimeout(() => process.exit(code), 30_000);
    void cleanup().finally(() => {
      clearTimeout(bound);
      process.exit(code);
    });
  };
  process.once("SIGINT", () => stopThenExit("SIGINT", 130));
  process.once("SIGTERM", () => stopThenExit("SIGTERM", 143));
  process.once("exit", cleanupSync);
  return setTimeout(
    () => stopThenExit(`timed out after ${timeoutMs / 1000} s (--timeout-seconds)`, 1),
    timeoutMs,
  );
}

// ---------- memory from /proc ----------

interface ProcMem {
  pid: number;
  ppid: number;
  pgrp: number;
  comm: string;
  /** Its command line, at most 160 characters. */
  cmd: string;
  rssKb: number;
  anonKb: number;
  fileKb: number;
  shmemKb: number;
  hwmKb: number;
  threads: number;
}

interface ProcStat {
  ppid: number;
  pgrp: number;
  comm: string;
  /** utime + stime + cutime + cstime, in clock ticks. */
  cpuTicks: number;
}

/** Clock ticks per second of /proc/<pid>/stat times. */
const CLK_TCK = (() => {
  const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf-8", timeout: 5_000 });
  const v = Number(out.stdout?.trim());
  return Number.isFinite(v) && v > 0 ? v : 100;
})();

function readStats(): Map<number, ProcStat> {
  const out = new Map<number, ProcStat>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf-8");
      const close = stat.lastIndexOf(")");
      // state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime
      const f = stat.slice(close + 2).split(" ");
      out.set(Number(d), {
        ppid: Number(f[1]),
        pgrp: Number(f[2]),
        comm: stat.slice(stat.indexOf("(") + 1, close),
        cpuTicks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]),
      });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** `root` (if alive), its descendants, and every process of its process group (root's pid). */
function treeOf(stats: Map<number, ProcStat>, root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, p] of stats) {
    const list = children.get(p.ppid);
    if (list) list.push(pid);
    else children.set(p.ppid, [pid]);
  }
  const seen = new Set<number>();
  const stack = [root, ...[...stats].filter(([, p]) => p.pgrp === root).map(([pid]) => pid)];
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid) || !stats.has(pid)) continue;
    seen.add(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return [...seen].sort((a, b) => a - b);
}

function readMem(pid: number, stat: ProcStat): ProcMem | undefined {
  let status: string;
  let cmd = "";
  try {
    status = readFileSync(`/proc/${pid}/status`, "utf-8");
    cmd = readFileSync(`/proc/${pid}/cmdline`, "utf-8").split("\0").join(" ").trim();
  } catch {
    return undefined;
  }
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return {
    pid,
    ppid: stat.ppid,
    pgrp: stat.pgrp,
    comm: stat.comm,
    cmd: cmd.length > 160 ? `${cmd.slice(0, 157)}...` : cmd,
    rssKb: kb("VmRSS"),
    anonKb: kb("RssAnon"),
    fileKb: kb("RssFile"),
    shmemKb: kb("RssShmem"),
    hwmKb: kb("VmHWM"),
    threads: kb("Threads"),
  };
}

interface Sample {
  /** Seconds since the target's server was spawned. */
  t: number;
  rssKb: number;
  anonKb: number;
  hwmKb: number;
  /** CPU time (user + system) of the tree so far, ms. */
  cpuMs: number;
  /** RSS by role (embedded: "server"; pg: "api", "worker"). */
  byRole: Record<string, number>;
  processes: (ProcMem & { role: string })[];
}

function sample(servers: Spawned[], t0: number): Sample {
  const stats = readStats();
  const s: Sample = {
    t: (performance.now() - t0) / 1000,
    rssKb: 0,
    anonKb: 0,
    hwmKb: 0,
    cpuMs: 0,
    byRole: {},
    processes: [],
  };
  for (const server of servers) {
    s.byRole[server.role] = 0;
    for (const pid of treeOf(stats, server.pid)) {
      const m = readMem(pid, stats.get(pid)!);
      if (!m) continue;
      s.processes.push({ ...m, role: server.role });
      s.rssKb += m.rssKb;
      s.anonKb += m.anonKb;
      s.hwmKb += m.hwmKb;
      s.cpuMs += (stats.get(pid)!.cpuTicks * 1000) / CLK_TCK;
      s.byRole[server.role] += m.rssKb;
    }
  }
  return s;
}

/** `count` samples SAMPLE_GAP_MS apart (the first at once). */
async function samples(servers: Spawned[], t0: number, count: number): Promise<Sample[]> {
  const out: Sample[] = [];
  for (let i = 0; i < count; i++) {
    if (i) await sleep(SAMPLE_GAP_MS);
    out.push(sample(servers, t0));
  }
  return out;
}

// ---------- the server's own view: GET /metrics ----------

interface ServerMetrics {
  heapUsedBytes?: number;
  heapTotalBytes?: number;
  externalBytes?: number;
  streamClients?: number;
  runsRunning?: number;
  runsPending?: number;
  error?: string;
}

async function readMetrics(url: string): Promise<ServerMetrics> {
  try {
    const res = await request(`${url}/metrics`, { headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await res.body.text();
    if (res.statusCode !== 200) return { error: `GET /metrics -> ${res.statusCode}` };
    const get = (name: string) => {
      const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)`, "m").exec(text);
      return m ? Number(m[1]) : undefined;
    };
    return {
      heapUsedBytes: get("hangar_nodejs_heap_size_used_bytes"),
      heapTotalBytes: get("hangar_nodejs_heap_size_total_bytes"),
      externalBytes: get("hangar_nodejs_external_memory_bytes"),
      streamClients: get("hangar_stream_clients"),
      runsRunning: get("hangar_runs_running"),
      runsPending: get("hangar_runs_pending"),
    };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

// ---------- forcing a full GC: the inspector ----------

/**
 * Starts the inspector of each server's node process (SIGUSR1; it listens on a free loopback port, see
 * INSPECT_PORT_OPTION) and asks V8 for a full GC (HeapProfiler.collectGarbage, twice). Returns an error per
 * role that failed. The inspector then stays on (a few MB, counted in what is sampled next).
 */
async function forceGc(servers: Spawned[]): Promise<Record<string, string>> {
  const errors: Record<string, string> = {};
  await Promise.all(
    servers.map(async (s) => {
      try {
        process.kill(s.pid, "SIGUSR1");
        if (!(await waitFor(() => s.inspectorUrl !== undefined, 5_000))) {
          throw new Error('no "Debugger listening on" within 5 s of SIGUSR1');
        }
        const ws = new WebSocket(s.inspectorUrl!);
        try {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error("no answer within 30 s")), 30_000);
            let id = 0;
            const send = () => ws.send(JSON.stringify({ id: ++id, method: "HeapProfiler.collectGarbage" }));
            ws.once("open", send);
            ws.once("error", (err) => {
              clearTimeout(timer);
              reject(err);
            });
            ws.on("message", (m: Buffer) => {
              const msg = JSON.parse(m.toString()) as { id?: number; error?: { message: string } };
              if (msg.id === undefined) return; // an inspector event
              if (msg.error) {
                clearTimeout(timer);
                reject(new Error(msg.error.message));
              } else if (msg.id < 2) send();
              else {
                clearTimeout(timer);
                resolve();
              }
            });
          });
        } finally {
          ws.close();
        }
      } catch (err) {
        errors[s.role] = (err as Error).message;
      }
    }),
  );
  return errors;
}

// ---------- starting a target ----------

/** Which code bin/hangar.js runs (its own rule): dist/ when the build is as new as every file of src/. */
function cliCode(): string {
  const src = join(ROOT, "src");
  const stamp = join(ROOT, "dist/.build-stamp");
  if (!existsSync(join(ROOT, "dist/cli/main.js"))) return "src/ through tsx (no build)";
  if (process.env.HANGAR_FROM_SOURCE === "1") return "src/ through tsx (HANGAR_FROM_SOURCE=1)";
  if (!existsSync(stamp)) return "src/ through tsx (no build stamp)";
  const time = statSync(stamp).mtimeMs;
  if (statSync(src).mtimeMs > time) return "src/ through tsx (src/ newer than the build)";
  for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs > time) {
      return `src/ through tsx (${relative(ROOT, join(e.parentPath ?? e.path, e.name))} newer than the build)`;
    }
  }
  return "dist/ (the build)";
}

async function ok(url: string): Promise<boolean> {
  try {
    await getJson(`${url}/ok`, { timeoutMs: 2_000 });
    return true;
  } catch {
    return false;
  }
}

/** Resolves with the URL the process prints ("listening on <url>") once GET /ok answers there. */
async function waitReady(s: Spawned): Promise<string> {
  const deadline = Date.now() + START_DEADLINE_MS;
  let url: string | undefined;
  while (Date.now() < deadline) {
    if (s.proc.exitCode !== null || s.proc.signalCode !== null) {
      throw new Error(`${s.role} exited early (code ${s.proc.exitCode}, signal ${s.proc.signalCode})`);
    }
    url ??= /listening on (http:\/\/[^\s"]+)/.exec(s.output())?.[1]?.replace(/\/+$/, "");
    if (url && (await ok(url))) return url;
    await sleep(100);
  }
  throw new Error(`${s.role} not ready after ${START_DEADLINE_MS / 1000} s (no "listening on" + GET /ok)`);
}

interface Started {
  /** The URL the client talks to (pg: the API process). */
  url: string;
  /** Every process's URL by role (for GET /metrics). */
  urls: Record<string, string>;
  servers: Spawned[];
  /** performance.now() at spawn. */
  t0: number;
  startupMs: number;
  details: string;
  schema?: string;
}

async function startTarget(target: Target, stamp: string, tmp: string, nJobs: number): Promise<Started> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PORT;
  const common = ["--config", FIXTURE_CONFIG, "--port", "0", "--host", "127.0.0.1"];
  const logFile = (role: string) => join(RESULTS_DIR, `mem-${stamp}-${target}-${role}.log`);
  const t0 = performance.now();
  let servers: Spawned[];
  let details: string;
  let schema: string | undefined;
  if (target === "embedded") {
    delete env.DATABASE_URL;
    delete env.REDIS_URL;
    const dataDir = join(tmp, "data");
    mkdirSync(dataDir);
    const args = ["serve", ...common, "--data-dir", dataDir, "--n-jobs-per-worker", String(nJobs)];
    servers = [spawnServer("server", args, env, logFile("server"))];
    details = "hangar serve, embedded SQLite, one process (--mode all)";
  } else {
    const db = pgClient();
    try {
      await db.connect();
      await db.query("SELECT 1");
    } catch (err) {
      throw new Error(`pg: PostgreSQL not usable at ${DATABASE_URL}: ${(err as Error).message}`);
    } finally {
      await db.end().catch(() => {});
    }
    // hangar_bench_<pid>_...: bench/servers.ts drops it if this process dies without cleaning up.
    schema = `hangar_bench_${process.pid}_mem_${randomBytes(3).toString("hex")}`;
    deployments.add({ schema, redisPrefix: `${schema}:` });
    Object.assign(env, {
      DATABASE_URL,
      REDIS_URL,
      HANGAR_DATABASE_SCHEMA: schema,
      HANGAR_REDIS_PREFIX: `${schema}:`,
    });
    servers = [
      spawnServer("api", ["serve", ...common, "--mode", "api"], env, logFile("api")),
      spawnServer(
        "worker",
        ["serve", ...common, "--mode", "worker", "--n-jobs-per-worker", String(nJobs)],
        env,
        logFile("worker"),
      ),
    ];
    details = `hangar serve on PostgreSQL + Redis (schema ${schema}): 1 --mode api + 1 --mode worker process`;
  }
  try {
    const urls = await Promise.all(servers.map(waitReady));
    return {
      url: urls[0],
      urls: Object.fromEntries(servers.map((s, i) => [s.role, urls[i]])),
      servers,
      t0,
      startupMs: performance.now() - t0,
      details,
      schema,
    };
  } catch (err) {
    const tails = servers
      .map(
        (s) =>
          `--- ${s.role} log (${relative(ROOT, s.logFile)}) ---\n${s.output().split("\n").slice(-20).join("\n")}`,
      )
      .join("\n");
    await Promise.all(servers.map((s) => stopSpawned(s)));
    throw new Error(`${target} failed to start: ${(err as Error).message}\n${tails}`);
  }
}

// ---------- streams ----------

interface Stream {
  n: number;
  threadId: string;
  /** ms from the start of the openings to its first event, to its first `values` event (its run started). */
  firstEventMs?: number;
  startedMs?: number;
  events: number;
  lastValues?: string;
  errorEvent?: string;
  /** A request or read failure. */
  error?: string;
  ended: boolean;
  /** Resolves at its first event or its failure; `done` at its end or failure (never rejects). */
  first: Promise<void>;
  done: Promise<void>;
}

/** Opens a streamed run and reads it to its end in the background, keeping only counts and the last values. */
function openStream(
  agent: Agent,
  url: string,
  threadId: string,
  n: number,
  release: string,
  t0: number,
): Stream {
  let firstResolve!: () => void;
  const s: Stream = {
    n,
    threadId,
    events: 0,
    ended: false,
    first: new Promise<void>((r) => (firstResolve = r)),
    done: Promise.resolve(),
  };
  const onEvent = (event: string, data: string) => {
    s.events++;
    if (s.firstEventMs === undefined) {
      s.firstEventMs = performance.now() - t0;
      if (event !== "metadata") s.error = `first event is ${event}, not metadata`;
      firstResolve();
    }
    if (event === "values") {
      s.startedMs ??= performance.now() - t0;
      s.lastValues = data;
    } else if (event === "error") s.errorEvent = data.slice(0, 300);
  };
  s.done = (async () => {
    const res = await request(`${url}/threads/${threadId}/runs/stream`, {
      method: "POST",
      headers: { accept: "text/event-stream", "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: GRAPH_ID, input: { release, n }, stream_mode: ["values"] }),
      dispatcher: agent,
    });
    if (res.statusCode >= 300) {
      const text = await res.body.text();
      throw new Error(`POST runs/stream -> ${res.statusCode}: ${text.slice(0, 200)}`);
    }
    const decoder = new TextDecoder();
    let buf = "";
    const flush = (block: string) => {
      let event = "";
      const data: string[] = [];
      for (const line of block.split("\n")) {
        if (!line || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") event = value;
        else if (field === "data") data.push(value);
      }
      if (event || data.length) onEvent(event || "message", data.join("\n"));
    };
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      buf += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, "\n");
      let idx: number;
      while ((idx = buf.indexOf("\n\n")) >= 0) {
        flush(buf.slice(0, idx));
        buf = buf.slice(idx + 2);
      }
    }
    buf += decoder.decode();
    if (buf.trim()) flush(buf.trim());
    s.ended = true;
  })().then(
    () => firstResolve(),
    (err: Error) => {
      s.error ??= err.message;
      firstResolve();
    },
  );
  return s;
}

/** Why a stream failed, or undefined when it ended with the expected final values. */
function streamFailure(s: Stream): string | undefined {
  if (s.error) return s.error;
  if (s.errorEvent) return `error event: ${s.errorEvent}`;
  if (!s.ended) return "did not end";
  if (!s.lastValues) return "no values event";
  let values: { result?: unknown; n?: unknown };
  try {
    values = JSON.parse(s.lastValues);
  } catch {
    return `unparsable values: ${s.lastValues.slice(0, 200)}`;
  }
  if (values.result !== `released ${s.n}`) return `final values ${s.lastValues.slice(0, 200)}`;
  return undefined;
}

/** Resolves when `pred` holds or `ms` passed (checked every 200 ms); returns whether it held. */
async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() >= deadline) return false;
    await sleep(200);
  }
  return true;
}

// ---------- one target ----------

interface Measure {
  what: string;
  /** The last sample's tree RSS, and the max over the samples, kB. */
  rssKb: number;
  maxRssKb: number;
  /** The last sample's RSS by role. */
  byRole: Record<string, number>;
  /** The last sample's sum of per-process VmHWM. */
  hwmKb: number;
  /** GET /metrics of each process, by role. */
  metrics: Record<string, ServerMetrics>;
  samples: Sample[];
}

/** GET /metrics of every process of the target, by role. */
async function readAllMetrics(urls: Record<string, string>): Promise<Record<string, ServerMetrics>> {
  const entries = await Promise.all(
    Object.entries(urls).map(async ([role, u]) => [role, await readMetrics(u)] as const),
  );
  return Object.fromEntries(entries);
}

/** A /metrics figure summed over the processes that report it (undefined when none does). */
function sumMetric(
  m: Record<string, ServerMetrics> | undefined,
  key: keyof ServerMetrics,
): number | undefined {
  const vals = Object.values(m ?? {})
    .map((x) => x[key])
    .filter((v): v is number => typeof v === "number");
  return vals.length ? vals.reduce((a, b) => a + b, 0) : undefined;
}

function measure(what: string, list: Sample[], metrics: Record<string, ServerMetrics>): Measure {
  const last = list[list.length - 1];
  return {
    what,
    rssKb: last.rssKb,
    maxRssKb: Math.max(...list.map((s) => s.rssKb)),
    byRole: last.byRole,
    hwmKb: last.hwmKb,
    metrics,
    samples: list,
  };
}

interface LogSummary {
  errors: number;
  warnings: number;
  /** The first few error and warning lines (their msg, level). */
  first: string[];
}

function scanLog(text: string): LogSummary {
  const out: LogSummary = { errors: 0, warnings: 0, first: [] };
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let level = 0;
    let msg = line;
    try {
      const j = JSON.parse(line) as { level?: number; msg?: string; err?: { message?: string } };
      level = j.level ?? 0;
      msg = `${j.msg ?? ""}${j.err?.message ? `: ${j.err.message}` : ""}`;
    } catch {
      if (/error|warn/i.test(line) && !line.startsWith("=====")) level = /error/i.test(line) ? 50 : 40;
    }
    if (level >= 50) out.errors++;
    else if (level >= 40) out.warnings++;
    else continue;
    if (out.first.length < 5) out.first.push(`${level >= 50 ? "error" : "warn"}: ${msg.slice(0, 200)}`);
  }
  return out;
}

interface TargetResult {
  target: Target;
  details: string;
  code: string;
  url?: string;
  startupMs?: number;
  commands: Record<string, string>;
  logs: Record<string, string>;
  idle?: Measure;
  streams?: Measure & {
    requested: number;
    /** Streams with their first event; runs started (first values event); times from the first opening. */
    opened: number;
    runsStarted: number;
    openAllMs?: number;
    startAllMs?: number;
    threadsMs: number;
    /** The server tree's CPU time while the streams were opened (first opening to the last run started). */
    openCpuMs: number;
    openWallMs: number;
  };
  after?: Measure & { drainMs: number; drained: boolean };
  /** After a full GC forced through the inspector (see forceGc), and what failed of it by role. */
  afterGc?: Measure & { gcErrors: Record<string, string> };
  deltaKb?: number;
  /** What stayed after the release compared with idle, without and with the forced GC. */
  afterDeltaKb?: number;
  afterGcDeltaKb?: number;
  /** Streams that failed (request, error event, wrong final values, or not ended), and the first reasons. */
  failures: number;
  failureExamples: string[];
  logSummary: Record<string, LogSummary>;
  error?: string;
}

async function benchTarget(target: Target, opts: Options, stamp: string): Promise<TargetResult> {
  const r: TargetResult = {
    target,
    details: "",
    code: cliCode(),
    commands: {},
    logs: {},
    failures: 0,
    failureExamples: [],
    logSummary: {},
  };
  const tmp = mkdtempSync(join(tmpdir(), `hangar-bench-mem-${target}-`));
  tempDirs.add(tmp);
  const release = join(tmp, "release");
  releaseFiles.add(release);
  let started: Started | undefined;
  const agent = new Agent({
    connections: opts.streams + 100,
    pipelining: 1,
    keepAliveTimeout: 10_000,
    headersTimeout: OPEN_DEADLINE_MS,
    bodyTimeout: STREAM_BODY_TIMEOUT_MS,
  });
  const closeAgent = () => agent.destroy();
  closers.add(closeAgent);
  try {
    log(`\n== ${target}: starting hangar serve (bin/hangar.js runs ${r.code})`);
    started = await startTarget(target, stamp, tmp, opts.streams);
    const { url, urls, servers, t0 } = started;
    r.details = started.details;
    r.url = url;
    r.startupMs = Math.round(started.startupMs);
    for (const s of servers) {
      r.commands[s.role] = s.command.map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a)).join(" ");
      r.logs[s.role] = relative(ROOT, s.logFile);
    }
    log(`  ready at ${url} in ${r.startupMs} ms; idle ${opts.idleSeconds} s, then ${IDLE_SAMPLES} samples`);

    // 1. idle
    await sleep(opts.idleSeconds * 1000);
    const idleSamples = await samples(servers, t0, IDLE_SAMPLES);
    r.idle = measure("idle", idleSamples, await readAllMetrics(urls));
    log(`  idle RSS ${fmtMb(r.idle.rssKb)} MB (max ${fmtMb(r.idle.maxRssKb)}, VmHWM ${fmtMb(r.idle.hwmKb)})`);
    for (const p of idleSamples[idleSamples.length - 1].processes) {
      log(`    ${p.role} pid ${p.pid} (${p.comm}): ${fmtMb(p.rssKb)} MB  ${p.cmd}`);
    }

    // 2. streams
    const n = opts.streams;
    const tThreads = performance.now();
    const threadIds = await mapConcurrent(
      Array.from({ length: n }, (_, i) => i),
      CREATE_CONCURRENCY,
      async () => (await postJson<{ thread_id: string }>(`${url}/threads`, {})).thread_id,
    );
    const threadsMs = performance.now() - tThreads;
    log(`  ${n} threads created in ${(threadsMs / 1000).toFixed(1)} s; opening ${n} streams`);
    const streams: Stream[] = [];
    const cpuOpen = sample(servers, t0).cpuMs;
    const tOpen = performance.now();
    let inFlight = 0;
    for (let i = 0; i < n; i++) {
      while (inFlight >= OPEN_CONCURRENCY) await sleep(10);
      if (performance.now() - tOpen > OPEN_DEADLINE_MS) break;
      inFlight++;
      const s = openStream(agent, url, threadIds[i], i, release, tOpen);
      void s.first.then(() => inFlight--);
      streams.push(s);
    }
    const allFirst = await Promise.race([
      Promise.all(streams.map((s) => s.first)).then(() => true),
      sleep(OPEN_DEADLINE_MS).then(() => false),
    ]);
    const opened = () => streams.filter((s) => s.firstEventMs !== undefined && !s.error).length;
    const runsStarted = () => streams.filter((s) => s.startedMs !== undefined).length;
    const openAllMs = streams.reduce((m, s) => Math.max(m, s.firstEventMs ?? 0), 0);
    log(
      `  ${opened()}/${n} streams have their first event` +
        (allFirst
          ? ` (the last after ${(openAllMs / 1000).toFixed(1)} s)`
          : ` after ${OPEN_DEADLINE_MS / 1000} s`) +
        `; ${runsStarted()} runs started`,
    );
    const failedEarly = streams.filter((s) => s.error);
    if (failedEarly.length) log(`  ! ${failedEarly.length} streams failed, first: ${failedEarly[0].error}`);
    const allStarted = await waitFor(
      () => runsStarted() >= streams.filter((s) => !s.error).length,
      STARTED_DEADLINE_MS,
    );
    const startAllMs = streams.reduce((m, s) => Math.max(m, s.startedMs ?? 0), 0);
    const openCpuMs = sample(servers, t0).cpuMs - cpuOpen;
    const openWallMs = performance.now() - tOpen;
    log(
      `  ${runsStarted()}/${n} runs started` +
        (allStarted
          ? ` (the last after ${(startAllMs / 1000).toFixed(1)} s)`
          : ` after ${STARTED_DEADLINE_MS / 1000} s more`) +
        `; settling ${SETTLE_MS / 1000} s`,
    );
    await sleep(SETTLE_MS);
    const streamSamples = await samples(servers, t0, IDLE_SAMPLES);
    const streamMetrics = await readAllMetrics(urls);
    r.streams = {
      ...measure(`${n} streams`, streamSamples, streamMetrics),
      requested: n,
      opened: opened(),
      runsStarted: runsStarted(),
      openAllMs: allFirst ? Math.round(openAllMs) : undefined,
      startAllMs: allStarted ? Math.round(startAllMs) : undefined,
      threadsMs: Math.round(threadsMs),
      openCpuMs: Math.round(openCpuMs),
      openWallMs: Math.round(openWallMs),
    };
    r.deltaKb = r.streams.rssKb - r.idle.rssKb;
    log(
      `  with ${r.streams.opened} streams open: RSS ${fmtMb(r.streams.rssKb)} MB (+${fmtMb(r.deltaKb)} MB over idle); ` +
        `server says ${sumMetric(streamMetrics, "streamClients") ?? "?"} stream clients, ` +
        `${streamMetrics[servers[0].role]?.runsRunning ?? "?"} runs running`,
    );

    // 3. release, drain, after
    const tRelease = performance.now();
    writeFileSync(release, "released\n");
    const drained = await Promise.race([
      Promise.all(streams.map((s) => s.done)).then(() => true),
      sleep(DRAIN_DEADLINE_MS).then(() => false),
    ]);
    const drainMs = performance.now() - tRelease;
    for (const s of streams) {
      const why = streamFailure(s);
      if (!why) continue;
      r.failures++;
      if (r.failureExamples.length < 5)
        r.failureExamples.push(`stream ${s.n} (thread ${s.threadId}): ${why}`);
    }
    r.failures += n - streams.length; // never opened (deadline)
    log(
      `  released: every stream ${drained ? "ended" : `not ended after ${DRAIN_DEADLINE_MS / 1000} s`} ` +
        `in ${(drainMs / 1000).toFixed(1)} s; ${r.failures} failed; sampling ${AFTER_MS / 1000} s`,
    );
    const afterSamples = await samples(servers, t0, Math.round(AFTER_MS / SAMPLE_GAP_MS) + 1);
    r.after = {
      ...measure("after release", afterSamples, await readAllMetrics(urls)),
      drainMs: Math.round(drainMs),
      drained,
    };
    r.afterDeltaKb = r.after.rssKb - r.idle.rssKb;
    log(
      `  after: RSS ${fmtMb(r.after.rssKb)} MB (VmHWM sum ${fmtMb(r.after.hwmKb)}); forcing a full GC (inspector)`,
    );

    // 4. a forced full GC: what stays is retained, not garbage waiting for a collection
    const gcErrors = await forceGc(servers);
    for (const [role, e] of Object.entries(gcErrors)) log(`  ! ${role}: forced GC failed: ${e}`);
    await sleep(GC_SETTLE_MS);
    const gcSamples = await samples(servers, t0, GC_SAMPLES);
    r.afterGc = { ...measure("after forced GC", gcSamples, await readAllMetrics(urls)), gcErrors };
    r.afterGcDeltaKb = r.afterGc.rssKb - r.idle.rssKb;
    log(`  after GC: RSS ${fmtMb(r.afterGc.rssKb)} MB`);
  } catch (err) {
    r.error = (err as Error).message;
    log(`  ! ${target}: ${r.error}`);
  } finally {
    closers.delete(closeAgent);
    await agent.destroy().catch(() => {});
    writeFileSync(release, "released\n");
    if (started) {
      await Promise.all(started.servers.map((s) => stopSpawned(s)));
      for (const s of started.servers) r.logSummary[s.role] = scanLog(s.output());
    }
    for (const d of [...deployments]) {
      await dropMemDeployment(d).catch((err) =>
        log(`  dropping schema ${d.schema} failed: ${(err as Error).message}`),
      );
    }
    releaseFiles.delete(release);
    rmSync(tmp, { recursive: true, force: true });
    tempDirs.delete(tmp);
  }
  return r;
}

// ---------- report ----------

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

function render(r: TargetResult, streams: number): string {
  const out = [`== ${r.target}: ${r.details || "(not started)"}`, `   bin/hangar.js ran ${r.code}`];
  if (r.code.startsWith("src/")) {
    out.push(
      "   (not the build: its figures include tsx compiling Hangar; `npm run build` first to measure dist/)",
    );
  }
  const heap = (m?: Record<string, ServerMetrics>) => {
    const v = sumMetric(m, "heapUsedBytes");
    return v === undefined ? "-" : (v / 2 ** 20).toFixed(1);
  };
  // Runs running: the queue's count (a pg target's processes all read the shared queue: take the first's).
  const running = (m?: Record<string, ServerMetrics>) =>
    String(Object.values(m ?? {})[0]?.runsRunning ?? "-");
  const roles = r.idle ? Object.keys(r.idle.byRole) : [];
  const multi = roles.length > 1;
  const row = (label: string, m: Measure | undefined, delta: number | undefined): string[] => [
    label,
    fmtMb(m?.rssKb),
    fmtMb(m?.maxRssKb),
    delta === undefined ? "" : `${delta >= 0 ? "+" : ""}${fmtMb(delta)}`,
    ...(multi ? roles.map((role) => fmtMb(m?.byRole[role])) : []),
    fmtMb(m?.hwmKb),
    heap(m?.metrics),
    String(sumMetric(m?.metrics, "streamClients") ?? "-"),
    running(m?.metrics),
  ];
  const n = streams.toLocaleString("en-US");
  out.push(
    table(
      [
        "RSS of the process tree (MB)",
        "RSS",
        "max",
        "Δ idle",
        ...(multi ? roles : []),
        "ΣVmHWM",
        "heap used",
        "streams",
        "running",
      ],
      [
        row(`idle (${IDLE_SAMPLES} samples after the idle wait)`, r.idle, undefined),
        row(`${n} streams open (after ${SETTLE_MS / 1000} s settle)`, r.streams, r.deltaKb),
        row(`after release (+${AFTER_MS / 1000} s, streams ended)`, r.after, r.afterDeltaKb),
        row(`after a forced full GC (+${GC_SETTLE_MS / 1000} s)`, r.afterGc, r.afterGcDeltaKb),
      ],
    ),
  );
  if (r.deltaKb !== undefined) out.push(`   ${n} streams: +${fmtMb(r.deltaKb)} MB`);
  if (r.streams) {
    const s = r.streams;
    out.push(
      `   ${s.opened}/${s.requested} streams got their first event` +
        (s.openAllMs !== undefined ? ` (all within ${(s.openAllMs / 1000).toFixed(1)} s)` : "") +
        `, ${s.runsStarted} runs started` +
        (s.startAllMs !== undefined ? ` (all within ${(s.startAllMs / 1000).toFixed(1)} s)` : "") +
        `; threads created in ${(s.threadsMs / 1000).toFixed(1)} s` +
        (r.after
          ? r.after.drained
            ? `; every stream ended ${(r.after.drainMs / 1000).toFixed(1)} s after the release`
            : `; NOT every stream ended ${(r.after.drainMs / 1000).toFixed(1)} s after the release`
          : ""),
    );
    out.push(
      `   server CPU while opening the streams: ${(s.openCpuMs / 1000).toFixed(1)} s in ` +
        `${(s.openWallMs / 1000).toFixed(1)} s (${((s.openCpuMs / s.openWallMs) * 100).toFixed(0)}% of one core)`,
    );
  }
  for (const [role, e] of Object.entries(r.afterGc?.gcErrors ?? {})) {
    out.push(`   ! forced GC of ${role} failed: ${e}`);
  }
  const idleLast = r.idle?.samples[r.idle.samples.length - 1];
  if (idleLast) {
    out.push("   processes (idle):");
    for (const p of idleLast.processes) {
      out.push(
        `     ${p.role} pid ${p.pid} ${p.comm}: RSS ${fmtMb(p.rssKb)} MB (anon ${fmtMb(p.anonKb)}, file ${fmtMb(p.fileKb)}, ` +
          `shmem ${fmtMb(p.shmemKb)}), VmHWM ${fmtMb(p.hwmKb)} MB, ${p.threads} threads: ${p.cmd}`,
      );
    }
  }
  const streamLast = r.streams?.samples[r.streams.samples.length - 1];
  if (streamLast) {
    out.push(
      `   processes (${n} streams): ` +
        streamLast.processes.map((p) => `${p.role} ${p.comm} ${fmtMb(p.rssKb)} MB`).join(", "),
    );
  }
  out.push(`   failed streams/runs: ${r.failures}`);
  for (const f of r.failureExamples) out.push(`     ! ${f}`);
  if (r.error) out.push(`   ! ${r.error.split("\n").join("\n     ")}`);
  for (const [role, l] of Object.entries(r.logSummary)) {
    out.push(`   ${role} log ${r.logs[role]}: ${l.errors} error, ${l.warnings} warning line(s)`);
    for (const f of l.first) out.push(`     ${f}`);
  }
  return out.join("\n");
}

// ---------- main ----------

interface Options {
  targets: Target[];
  streams: number;
  idleSeconds: number;
  timeoutSeconds: number;
}

const USAGE = `Usage: npm run bench:mem -- [options]

  --target <list>          comma-separated (default embedded): embedded, pg (PostgreSQL + Redis: $DATABASE_URL,
                           default ${DATABASE_URL}; $REDIS_URL, default ${REDIS_URL})
  --streams <n>            concurrent streamed runs (default ${DEFAULT_STREAMS}; also --n-jobs-per-worker)
  --idle-seconds <s>       idle wait after GET /ok answers, before sampling (default ${DEFAULT_IDLE_SECONDS})
  --timeout-seconds <s>    hard limit of the whole bench (default ${DEFAULT_TIMEOUT_SECONDS}): then it stops what it
                           started and exits 1
  -h, --help               this help
`;

function parseCli(): Options {
  const { values } = parseArgs({
    options: {
      target: { type: "string" },
      streams: { type: "string" },
      "idle-seconds": { type: "string" },
      "timeout-seconds": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const asked = (values.target ?? "embedded")
    .split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  const bad = asked.filter((t) => !(TARGETS as readonly string[]).includes(t));
  if (bad.length || !asked.length) throw new UsageError(`unknown target(s): ${bad.join(", ")}\n\n${USAGE}`);
  const int = (name: string, v: string | undefined, dflt: number, min: number) => {
    const x = v === undefined ? dflt : Number(v);
    if (!Number.isInteger(x) || x < min)
      throw new UsageError(`--${name} takes an integer ≥ ${min} (got ${v})`);
    return x;
  };
  return {
    targets: TARGETS.filter((t) => asked.includes(t)),
    streams: int("streams", values.streams, DEFAULT_STREAMS, 1),
    idleSeconds: int("idle-seconds", values["idle-seconds"], DEFAULT_IDLE_SECONDS, 0),
    timeoutSeconds: int("timeout-seconds", values["timeout-seconds"], DEFAULT_TIMEOUT_SECONDS, 10),
  };
}

function commandLine(): string {
  const args = process.argv.slice(2).map((a) => (/[\s"']/.test(a) ? JSON.stringify(a) : a));
  if (process.env.npm_lifecycle_event === "bench:mem") {
    return `npm run bench:mem${args.length ? ` -- ${args.join(" ")}` : ""}`;
  }
  return ["tsx", relative(ROOT, process.argv[1] ?? "bench/mem.ts"), ...args].join(" ");
}

async function main(): Promise<number> {
  const opts = parseCli();
  const hardTimeout = installHandlers(opts.timeoutSeconds * 1000);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const started = Date.now();
  const loadStart = loadavg();
  const command = commandLine();
  log(
    `Hangar memory bench: ${command}\n  targets ${opts.targets.join(", ")}, ${opts.streams} streams, ` +
      `idle ${opts.idleSeconds} s, timeout ${opts.timeoutSeconds} s; load average ` +
      loadStart.map((l) => l.toFixed(2)).join(" "),
  );
  const results: TargetResult[] = [];
  for (const t of opts.targets) results.push(await benchTarget(t, opts, stamp));
  clearTimeout(hardTimeout);
  const loadEnd = loadavg();

  const out = [
    "",
    ...results.map((r) => render(r, opts.streams)),
    "",
    "RSS = VmRSS of /proc/<pid>/status summed over each spawned process, its descendants and its process group",
    "(MB = 2^20 bytes); RSS is the last of the samples 1 s apart, max their maximum; ΣVmHWM = the sum of the",
    "processes' peak RSS (an upper bound of the tree's peak); heap used, streams (open SSE clients) and running",
    "(runs executing) are the server's own /metrics, read after the samples. Only the last row forces a GC",
    "(through the inspector, which stays on for its samples: a few MB).",
    `Host: ${availableParallelism()} CPUs, ${(totalmem() / 2 ** 30).toFixed(1)} GB, node ${process.version}, ` +
      `LOG_LEVEL=${process.env.LOG_LEVEL ?? "(unset)"}; load average (1/5/15 min) ` +
      `${loadStart.map((l) => l.toFixed(2)).join(" ")} at start, ${loadEnd.map((l) => l.toFixed(2)).join(" ")} at end.`,
    `Command: ${command}`,
  ];
  process.stdout.write(`${out.join("\n")}\n`);

  const file = join(RESULTS_DIR, `mem-${stamp}.json`);
  const durationMs = Date.now() - started;
  writeFileSync(
    file,
    JSON.stringify(
      {
        command,
        argv: process.argv,
        startedAt: new Date(started).toISOString(),
        durationMs,
        options: {
          ...opts,
          idleSamples: IDLE_SAMPLES,
          sampleGapMs: SAMPLE_GAP_MS,
          settleMs: SETTLE_MS,
          afterMs: AFTER_MS,
          openConcurrency: OPEN_CONCURRENCY,
          fixture: relative(ROOT, FIXTURE_CONFIG),
          graph: GRAPH_ID,
        },
        host: {
          node: process.version,
          platform: process.platform,
          cpus: availableParallelism(),
          cpuModel: cpus()[0]?.model,
          totalMemBytes: totalmem(),
          loadavgStart: loadStart,
          loadavgEnd: loadEnd,
          logLevel: process.env.LOG_LEVEL ?? null,
        },
        results: results.map((r) => ({
          ...r,
          summaryMb: {
            idle: r.idle && mb(r.idle.rssKb),
            idleMax: r.idle && mb(r.idle.maxRssKb),
            idleHwm: r.idle && mb(r.idle.hwmKb),
            streams: r.streams && mb(r.streams.rssKb),
            delta: r.deltaKb === undefined ? undefined : mb(r.deltaKb),
            after: r.after && mb(r.after.rssKb),
            afterDelta: r.afterDeltaKb === undefined ? undefined : mb(r.afterDeltaKb),
            afterGc: r.afterGc && mb(r.afterGc.rssKb),
            afterGcDelta: r.afterGcDeltaKb === undefined ? undefined : mb(r.afterGcDeltaKb),
            peakHwm: r.afterGc ? mb(r.afterGc.hwmKb) : r.after && mb(r.after.hwmKb),
          },
        })),
      },
      null,
      2,
    ),
  );
  process.stdout.write(`\nJSON: ${relative(ROOT, file)}   (total ${(durationMs / 1000).toFixed(0)} s)\n`);
  return results.some((r) => r.error || r.failures > 0) ? 1 : 0;
}

runMain("bench:mem", main, cleanup);
