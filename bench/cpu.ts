/**
 * CPU benchmark (`npm run bench:cpu`, issue 15 "Measure first"): server CPU milliseconds per operation, in one
 * run, for Hangar embedded (`hangar`: `hangar dev`, SQLite), Hangar on PostgreSQL + Redis (`pg1`: `hangar
 * serve`, one `--mode api` + one `--mode worker` process; `pg2` on request), the official dev server 1.5.1
 * (`peer`) and the same graph invoked in this process by LangGraph.js with a SQLite file checkpointer and no
 * HTTP (`inprocess`: the "graph invoked yourself" figure); on request, `executor`: Hangar's own execution of that
 * run in this process (streaming as the official server's runs do, the state read at the end), without HTTP or
 * records, the floor under what a wire-compatible server can cost per run.
 *
 *   npm run bench:cpu -- [--target hangar,pg1,peer,inprocess,executor] [--n 1000 | --quick] [--concurrency 8]
 *                        [--only thread-create,run-wait,run-stream,history]
 *
 * Phases, in this order, on one server per target (started and stopped by bench/servers.ts), each at
 * concurrency 8 with the bench's HTTP client (bench/client.ts) and the `chat` graph of the other scenarios:
 *   thread-create  POST /threads
 *   run-wait       POST /threads, then POST /threads/{id}/runs/wait            (the issue's "run")
 *   run-stream     POST /threads, then POST /threads/{id}/runs/stream, read to its end
 *   history        POST /threads/{id}/history of one thread with HISTORY_RUNS runs' checkpoints
 * `inprocess` has run-wait only: a new thread id, then graph.invoke. Each phase: a warm-up of 10% of n, or
 * --warmup operations (not counted), then n operations or PHASE_CAP_MS, whichever comes first (the count done is
 * reported). V8 keeps compiling a server's hot code for tens of seconds under load (three isolates with graph
 * threads, each its own), so the default warm-up measures a fresh server; --warmup 5000 its steady state.
 *
 * CPU = user + system time of the server's whole process tree from /proc/<pid>/stat: the pids servers.ts
 * spawned and all their descendants, utime + stime + cutime + cstime (so that a child reaped meanwhile still
 * counts), delta over the measured phase / operations done. `inprocess`: process.cpuUsage() of this process.
 * The client's own CPU (this process) is reported too: on a 2-core machine it competes for the cores.
 *
 * A pg target is split into its API and worker processes, the PostgreSQL server (the postmaster of this
 * bench's own backend and all its children; failing that, every process named `postgres`) and the Redis
 * server (INFO's process_id; failing that, every `redis-server`). Those two serve every client of the
 * machine, so on a shared machine they include other clients' work (run quiet); hence also `pg own`: the
 * PostgreSQL backends serving the target's processes (pg_stat_activity's client_port matched against the
 * local ports of their sockets), and `total own` = api + worker + pg own + redis. Per operation, too:
 * - PostgreSQL statements: pg_stat_statements deltas of this database, grouped by text (top 10), when the
 *   extension is loaded via shared_preload_libraries (it is then created if missing); else pg_stat_database's
 *   transaction and tuple counters. Both count the whole database (the statements naming the deployment's
 *   schema are its own). Plus the deployment schema's table scans and row writes (pg_stat_user_tables).
 * - Redis commands: INFO commandstats deltas (whole server, commands run inside Lua scripts included), and,
 *   from an extra unmeasured pass of REDIS_SAMPLE_OPS operations under MONITOR, the commands sent by the
 *   target's own connections (`redis own`).
 * A pg target's phases take 2 x PG_STATS_SETTLE_MS longer (the late PostgreSQL views, see there).
 * After its phases, each server is left idle (IDLE_PAUSE_MS, then IDLE_MS measured) to report its
 * background CPU in ms per second.
 *
 * Prints a table per phase and the ratios the issue's acceptance uses; writes JSON to
 * bench/results/cpu-<timestamp>.json (server logs beside it). Nothing is asserted on timings: the exit code
 * is 1 only if an operation failed or a target did not start.
 */
import { spawnSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { join, relative } from "node:path";
import { parseArgs } from "node:util";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import type { Redis } from "ioredis";
import type pg from "pg";
import { invokeOnNewThread, loadInvoker, loadStreamingInvoker } from "./baseline.ts";
import { postJsonSized, postSse } from "./client.ts";
import { runLevel, runMain, summarise, UsageError } from "./measure.ts";
import {
  checkStream,
  checkValues,
  createThread,
  GRAPH_ID,
  INPUT,
  runWait,
  STREAM_MODE,
} from "./scenarios.ts";
import {
  DATABASE_URL,
  installCleanupHandlers,
  isPgTarget,
  pgClient,
  redisClient,
  REDIS_URL,
  RESULTS_DIR,
  ROOT,
  startTargetServer,
  type BenchServer,
  type TargetName,
} from "./servers.ts";

/** Every target of this bench, in report order, and the default selection. */
type CpuTarget = TargetName | "inprocess" | "inprocess-stream" | "executor";
const CPU_TARGETS: readonly CpuTarget[] = [
  "hangar",
  "hangar-aes",
  "pg1",
  "pg1-aes",
  "pg2",
  "peer",
  "inprocess",
  "inprocess-stream",
  "executor",
];
const DEFAULT_TARGETS: CpuTarget[] = ["hangar", "pg1", "peer", "inprocess"];

const DEFAULT_N = 1000;
const QUICK_N = 200;
const DEFAULT_CONCURRENCY = 8;
/** Warm-up operations before each phase, as a fraction of n (not counted), and their time cap. */
const WARMUP_FRACTION = 0.1;
const WARMUP_CAP_MS = 30_000;
/** Time cap of each measured phase: no operation starts after it. */
const PHASE_CAP_MS = 120_000;
/** Idle time measured after a target's phases (its background CPU), after a pause (trailing work). */
const IDLE_MS = 2_000;
const IDLE_PAUSE_MS = 1_000;
/**
 * Operations of the extra, unmeasured pass after each pg phase that counts the Redis commands the target's
 * own connections send (MONITOR: too costly for Redis to run during the CPU measurement).
 */
const REDIS_SAMPLE_OPS = 50;
/**
 * PostgreSQL publishes a connection's pg_stat_database / pg_stat_user_tables counts at most once a second
 * while it is busy and 10 s after it went idle (PGSTAT_IDLE_INTERVAL): a pg target's phase reads them this
 * long before its warm-up and after its end (its CPU is read at the phase's edges, as for every target).
 */
const PG_STATS_SETTLE_MS = 11_000;
/** Runs on the history phase's thread (each adds 3 checkpoints on the chat graph) and the page size. */
const HISTORY_RUNS = 3;
const HISTORY_LIMIT = 10;

// ---------- phases ----------

type PhaseId = "thread-create" | "run-wait" | "run-stream" | "history";

interface Phase<S = any> {
  id: PhaseId;
  title: string;
  /** Untimed, before the warm-up. */
  setup?: (url: string) => Promise<S>;
  /** One operation (checks its answer); returns its latency and extra values (averaged into the JSON). */
  op: (url: string, state: S) => Promise<Record<string, number>>;
}

const threadCreatePhase: Phase<void> = {
  id: "thread-create",
  title: "POST /threads",
  async op(url) {
    const t0 = performance.now();
    await createThread(url);
    return { latency: performance.now() - t0 };
  },
};

const runWaitPhase: Phase<void> = {
  id: "run-wait",
  title: "POST /threads, then POST /threads/{id}/runs/wait",
  async op(url) {
    const t0 = performance.now();
    const { thread_id } = await createThread(url);
    const values = await runWait(url, thread_id);
    const latency = performance.now() - t0;
    checkValues(values, "runs/wait");
    return { latency };
  },
};

const runStreamPhase: Phase<void> = {
  id: "run-stream",
  title: "POST /threads, then POST /threads/{id}/runs/stream read to its end",
  async op(url) {
    const t0 = performance.now();
    const { thread_id } = await createThread(url);
    const s = await postSse(`${url}/threads/${thread_id}/runs/stream`, {
      assistant_id: GRAPH_ID,
      input: INPUT,
      stream_mode: STREAM_MODE,
    });
    const latency = performance.now() - t0;
    const { events, bytes } = checkStream(s, "threads/runs/stream");
    return { latency, events, bytes };
  },
};

interface HistoryState {
  threadId: string;
  /** States a history read returns (read once in the setup; every operation must get as many). */
  states: number;
}

const historyPhase: Phase<HistoryState> = {
  id: "history",
  title: `POST /threads/{id}/history (limit ${HISTORY_LIMIT}) of a thread after ${HISTORY_RUNS} runs`,
  async setup(url) {
    const { thread_id } = await createThread(url);
    for (let i = 0; i < HISTORY_RUNS; i++) checkValues(await runWait(url, thread_id), "history setup");
    const { body } = await postJsonSized<unknown[]>(`${url}/threads/${thread_id}/history`, {
      limit: HISTORY_LIMIT,
    });
    if (!Array.isArray(body) || body.length === 0) throw new Error("history setup: no states");
    return { threadId: thread_id, states: body.length };
  },
  async op(url, s) {
    const t0 = performance.now();
    const { body, bytes } = await postJsonSized<unknown[]>(`${url}/threads/${s.threadId}/history`, {
      limit: HISTORY_LIMIT,
    });
    const latency = performance.now() - t0;
    if (!Array.isArray(body) || body.length !== s.states) {
      throw new Error(
        `history: expected ${s.states} states, got ${Array.isArray(body) ? body.length : body}`,
      );
    }
    return { latency, bytes, states: body.length };
  },
};

const PHASES: Phase[] = [threadCreatePhase, runWaitPhase, runStreamPhase, historyPhase];
const PHASE_IDS = PHASES.map((p) => p.id);

// ---------- CPU from /proc ----------

/** Clock ticks per second of /proc/<pid>/stat times. */
const CLK_TCK = (() => {
  const out = spawnSync("getconf", ["CLK_TCK"], { encoding: "utf-8", timeout: 5_000 });
  const v = Number(out.stdout?.trim());
  return Number.isFinite(v) && v > 0 ? v : 100;
})();

interface ProcRow {
  ppid: number;
  comm: string;
  /** utime + cutime and stime + cstime, in ms (the process and its reaped children). */
  userMs: number;
  sysMs: number;
}

/** Every process of /proc/<pid>/stat (those that vanish while read are skipped). */
function readProcs(): Map<number, ProcRow> {
  const procs = new Map<number, ProcRow>();
  const ms = (ticks: string) => (Number(ticks) * 1000) / CLK_TCK;
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, "utf-8");
    } catch {
      continue;
    }
    const close = stat.lastIndexOf(")");
    // Fields after "(comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime ...
    const f = stat.slice(close + 2).split(" ");
    procs.set(Number(d), {
      ppid: Number(f[1]),
      comm: stat.slice(stat.indexOf("(") + 1, close),
      userMs: ms(f[11]) + ms(f[13]),
      sysMs: ms(f[12]) + ms(f[14]),
    });
  }
  return procs;
}

/** `roots` (those still alive) and all their descendants. */
function treeOf(procs: Map<number, ProcRow>, roots: number[]): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) {
    const list = children.get(p.ppid);
    if (list) list.push(pid);
    else children.set(p.ppid, [pid]);
  }
  const out: number[] = [];
  const stack = roots.filter((p) => procs.has(p));
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

const byName = (procs: Map<number, ProcRow>, comm: string) =>
  [...procs].filter(([, p]) => p.comm === comm).map(([pid]) => pid);

/** One CPU figure: user and system ms, and how many processes it summed. */
interface Cpu {
  userMs: number;
  sysMs: number;
  procs: number;
}

/** A named part of a target's CPU (e.g. "api") and how to find its processes in a /proc table. */
interface Part {
  name: string;
  pids: (procs: Map<number, ProcRow>) => number[];
}

function readParts(procs: Map<number, ProcRow>, parts: Part[]): Record<string, Cpu> {
  const out: Record<string, Cpu> = {};
  for (const part of parts) {
    const cpu: Cpu = { userMs: 0, sysMs: 0, procs: 0 };
    for (const pid of part.pids(procs)) {
      const p = procs.get(pid)!;
      cpu.userMs += p.userMs;
      cpu.sysMs += p.sysMs;
      cpu.procs++;
    }
    out[part.name] = cpu;
  }
  return out;
}

/**
 * Local ports of the TCP connections to `remotePort` that the processes `pids` hold (their socket fds
 * matched against /proc/net/tcp and tcp6 by inode).
 */
function connectionPorts(pids: number[], remotePort: number): Set<number> {
  const inodes = new Set<string>();
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
        if (link.startsWith("socket:[")) inodes.add(link.slice(8, -1));
      } catch {
        // closed meanwhile
      }
    }
  }
  const ports = new Set<number>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(file, "utf-8");
    } catch {
      continue;
    }
    // Columns: sl local_address rem_address st ... inode (10th); addresses are hex "ip:port".
    for (const line of text.split("\n").slice(1)) {
      const c = line.trim().split(/\s+/);
      if (c.length < 10 || !inodes.has(c[9])) continue;
      if (parseInt(c[2].split(":")[1], 16) === remotePort) ports.add(parseInt(c[1].split(":")[1], 16));
    }
  }
  return ports;
}

// ---------- PostgreSQL and Redis counters ----------

type PgSource = "pg_stat_statements" | "pg_stat_database";

/** Our own monitoring queries, left out of the statement counts. */
const MONITOR_QUERY =
  /pg_stat_statements|pg_stat_database|pg_stat_user_tables|pg_backend_pid|shared_preload_libraries|pg_extension/;

interface PgViews {
  /** pg_stat_database of this database: xact_commit, xact_rollback, tup_* counters. */
  database?: Record<string, number>;
  /** pg_stat_user_tables of the deployment's schema, by table: seq_scan, idx_scan, n_tup_ins/upd/del. */
  tables?: Record<string, Record<string, number>>;
}

interface PgCounters {
  /** The deployment's schema (its statements name it: Hangar qualifies every table). */
  schema?: string;
  /** Calls by statement text (pg_stat_statements, this database), when available. */
  statements?: Record<string, number>;
}

interface PgMonitor {
  db: pg.Client;
  source: PgSource;
  /** Why pg_stat_statements is not used, or that the bench created the extension. */
  note?: string;
  /** The postmaster of the server DATABASE_URL points at, when its processes are visible in /proc. */
  postmasterPid?: number;
  /** The server's TCP port (DATABASE_URL's, default 5432). */
  port: number;
}

async function openPgMonitor(): Promise<PgMonitor> {
  const db = pgClient();
  await db.connect();
  let source: PgSource = "pg_stat_database";
  let note: string | undefined;
  const preload = (await db.query<{ shared_preload_libraries: string }>("SHOW shared_preload_libraries"))
    .rows[0].shared_preload_libraries;
  if (/\bpg_stat_statements\b/.test(preload)) {
    try {
      const had = await db.query("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'");
      if (!had.rowCount) {
        await db.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
        note = "the bench created extension pg_stat_statements in this database";
      }
      await db.query("SELECT 1 FROM pg_stat_statements LIMIT 1");
      source = "pg_stat_statements";
    } catch (err) {
      note = `pg_stat_statements unusable: ${(err as Error).message}`;
    }
  } else {
    note = "pg_stat_statements is not in shared_preload_libraries (a server restart would be needed)";
  }
  // Our backend's parent is the postmaster (if this machine's /proc shows it: a local server).
  const backend = (await db.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0].pid;
  const procs = readProcs();
  const parent = procs.get(backend)?.ppid;
  const postmasterPid = parent !== undefined && procs.get(parent)?.comm === "postgres" ? parent : undefined;
  const port = Number(new URL(DATABASE_URL).port || 5432);
  return { db, source, note, postmasterPid, port };
}

/**
 * The backends serving the processes `pids`: pg_stat_activity's client_port matched against the local ports
 * of those processes' connections to the server (loopback TCP; none over a Unix socket).
 */
async function ownBackends(m: PgMonitor, pids: number[]): Promise<number[]> {
  const ports = connectionPorts(pids, m.port);
  if (!ports.size) return [];
  const { rows } = await m.db.query<{ pid: number; client_port: number }>(
    "SELECT pid, client_port FROM pg_stat_activity WHERE client_port IS NOT NULL AND pid <> pg_backend_pid()",
  );
  return rows.filter((r) => ports.has(r.client_port)).map((r) => r.pid);
}

/** pg_stat_statements calls by statement text, this database (exact at once). */
async function pgStatements(m: PgMonitor): Promise<Record<string, number>> {
  const { rows } = await m.db.query<{ query: string; calls: number }>(
    `SELECT query, calls::float8 AS calls FROM pg_stat_statements
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
  );
  const statements: Record<string, number> = {};
  for (const r of rows) {
    if (!r.query || MONITOR_QUERY.test(r.query)) continue;
    const text = r.query.replace(/\s+/g, " ").trim();
    statements[text] = (statements[text] ?? 0) + r.calls;
  }
  return statements;
}

/** pg_stat_database of this database and pg_stat_user_tables of `schema` (published late: see settle). */
async function pgViews(m: PgMonitor, schema: string | undefined): Promise<Required<PgViews>> {
  const num = (row: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v ?? 0)]));
  const database = num(
    (
      await m.db.query(
        `SELECT xact_commit, xact_rollback, tup_returned, tup_fetched, tup_inserted, tup_updated, tup_deleted
           FROM pg_stat_database WHERE datname = current_database()`,
      )
    ).rows[0],
  );
  const tables: PgViews["tables"] = {};
  if (schema) {
    const { rows } = await m.db.query(
      `SELECT relname, seq_scan, idx_scan, n_tup_ins, n_tup_upd, n_tup_del
         FROM pg_stat_user_tables WHERE schemaname = $1`,
      [schema],
    );
    for (const { relname, ...rest } of rows) tables[relname as string] = num(rest);
  }
  return { database, tables };
}

interface RedisMonitor {
  redis: Redis;
  /** The server's pid (INFO server process_id), when this machine's /proc shows it. */
  pid?: number;
}

async function openRedisMonitor(): Promise<RedisMonitor> {
  const redis = redisClient();
  await redis.connect();
  const pid = Number(/^process_id:(\d+)/m.exec(await redis.info("server"))?.[1]);
  const visible = Number.isFinite(pid) && readProcs().get(pid)?.comm === "redis-server";
  return { redis, pid: visible ? pid : undefined };
}

/** Calls by command (INFO commandstats: `cmdstat_<cmd>:calls=<n>,...`). */
async function redisCommands(m: RedisMonitor): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const match of (await m.redis.info("commandstats")).matchAll(/^cmdstat_(\S+?):calls=(\d+)/gm)) {
    out[match[1]] = Number(match[2]);
  }
  return out;
}

/** Commands by name, and of all, sent per operation by the target's own connections. */
interface RedisOwn {
  ops: number;
  commands: number;
  byCommand: Record<string, number>;
}

/**
 * Runs `ops` operations with a MONITOR connection open and counts the commands sent from the connections of
 * the processes `pids` (MONITOR's source address matched against their sockets' local ports, looked up
 * before and after; commands a Lua script runs show as source "lua" and are not counted: its EVAL/EVALSHA is).
 */
async function sampleRedisOwn(
  m: RedisMonitor,
  pids: () => number[],
  op: () => Promise<unknown>,
  ops: number,
  concurrency: number,
): Promise<RedisOwn> {
  const redisPort = Number(new URL(REDIS_URL).port || 6379);
  const ports = connectionPorts(pids(), redisPort);
  const seen: [number, string][] = [];
  const monitor = await m.redis.monitor();
  try {
    monitor.on("monitor", (_time: string, args: unknown[], source: string) => {
      seen.push([Number(source.slice(source.lastIndexOf(":") + 1)), String(args[0]).toLowerCase()]);
    });
    await runLevel({
      concurrency,
      warmup: 0,
      warmupMaxMs: 0,
      n: ops,
      maxMs: PHASE_CAP_MS,
      hardMaxMs: PHASE_CAP_MS,
      minSamples: 0,
      op: async () => {
        await op();
        return {};
      },
    });
    await sleep(200); // the monitor stream lags a little
  } finally {
    monitor.disconnect();
  }
  for (const p of connectionPorts(pids(), redisPort)) ports.add(p);
  const byCommand: Record<string, number> = {};
  for (const [port, cmd] of seen) if (ports.has(port)) byCommand[cmd] = (byCommand[cmd] ?? 0) + 1 / ops;
  const sorted = Object.fromEntries(Object.entries(byCommand).sort((x, y) => y[1] - x[1]));
  return { ops, commands: Object.values(byCommand).reduce((a, b) => a + b, 0), byCommand: sorted };
}

// ---------- sampling a target ----------

interface Snapshot {
  at: number;
  cpu: Record<string, Cpu>;
  /** A pg target: CPU ms (user + system) of each PostgreSQL backend serving its processes, by pid. */
  backends?: Record<number, number>;
  /** This process (the load generator; for `inprocess` also the server). */
  client: NodeJS.CpuUsage;
  pg?: PgCounters;
  redis?: Record<string, number>;
}

interface Sampler {
  /** CPU parts in display order; `server` parts are the target's own processes (or this process). */
  parts: string[];
  /** Reads CPU and counters; counters outside the CPU window (before it at the start, after it at the end). */
  snapshot: (edge: "start" | "end") => Promise<Snapshot>;
  /** A pg target: PostgreSQL's late-published views (see PG_STATS_SETTLE_MS). */
  views?: () => Promise<PgViews>;
}

/** CPU parts that are the target's own processes (the rest, postgres and redis, serve it). */
const OWN_PARTS = new Set(["server", "api", "worker"]);

interface SamplerHooks {
  /** Counters exact at once: pg_stat_statements, Redis INFO commandstats. */
  counters?: () => Promise<Pick<Snapshot, "pg" | "redis">>;
  /** PostgreSQL's late-published views (read by runPhase, see PG_STATS_SETTLE_MS). */
  views?: () => Promise<PgViews>;
  /** The PostgreSQL backends serving the target (looked up at each snapshot, before reading CPU). */
  backends?: () => Promise<number[]>;
}

function procSampler(parts: Part[], hooks: SamplerHooks = {}): Sampler {
  return {
    parts: parts.map((p) => p.name),
    views: hooks.views,
    async snapshot(edge) {
      const before = edge === "start" && hooks.counters ? await hooks.counters() : {};
      const backendPids = hooks.backends ? await hooks.backends() : undefined;
      const procs = readProcs();
      const snap: Snapshot = {
        at: performance.now(),
        cpu: readParts(procs, parts),
        client: process.cpuUsage(),
      };
      if (backendPids) {
        snap.backends = {};
        for (const pid of backendPids) {
          const p = procs.get(pid);
          if (p) snap.backends[pid] = p.userMs + p.sysMs;
        }
      }
      const after = edge === "end" && hooks.counters ? await hooks.counters() : {};
      return { ...snap, ...before, ...after };
    },
  };
}

/** This process's CPU as the one part `server` (the in-process target). */
function selfSampler(): Sampler {
  return {
    parts: ["server"],
    async snapshot() {
      const u = process.cpuUsage();
      return {
        at: performance.now(),
        cpu: { server: { userMs: u.user / 1000, sysMs: u.system / 1000, procs: 1 } },
        client: u,
      };
    },
  };
}

interface Monitors {
  pg?: PgMonitor;
  redis?: RedisMonitor;
  /** Why a monitor could not be opened. */
  errors: string[];
}

function serverSampler(server: BenchServer, monitors: Monitors): Sampler {
  if (!isPgTarget(server.name)) {
    return procSampler([{ name: "server", pids: (procs) => treeOf(procs, server.pids) }]);
  }
  const { pg: pgm, redis } = monitors;
  const parts: Part[] = [
    { name: "api", pids: (procs) => treeOf(procs, [server.pids[0]]) },
    { name: "worker", pids: (procs) => treeOf(procs, server.pids.slice(1)) },
    {
      name: "postgres",
      pids: (procs) => (pgm?.postmasterPid ? treeOf(procs, [pgm.postmasterPid]) : byName(procs, "postgres")),
    },
    {
      name: "redis",
      pids: (procs) => (redis?.pid ? treeOf(procs, [redis.pid]) : byName(procs, "redis-server")),
    },
  ];
  return procSampler(parts, {
    counters: async () => ({
      pg: pgm && {
        schema: server.schema,
        statements: pgm.source === "pg_stat_statements" ? await pgStatements(pgm) : undefined,
      },
      redis: redis ? await redisCommands(redis) : undefined,
    }),
    views: pgm ? () => pgViews(pgm, server.schema) : undefined,
    backends: pgm ? () => ownBackends(pgm, treeOf(readProcs(), server.pids)) : undefined,
  });
}

// ---------- results ----------

interface PgPerOp {
  source: PgSource;
  /** pg_stat_statements: statements per op, of which naming the deployment's schema, and each, most first. */
  statements?: number;
  schemaStatements?: number;
  byStatement?: { perOp: number; query: string }[];
  /** pg_stat_database counter deltas per op (whole database); not read for the idle figures. */
  database?: Record<string, number>;
  /** pg_stat_user_tables deltas per op, summed over the deployment schema's tables, and the busiest tables. */
  schema?: Record<string, number>;
  busiestTables?: { table: string; scansPerOp: number; writesPerOp: number }[];
}

interface RedisPerOp {
  commands: number;
  /** Per command, most called first. */
  byCommand: Record<string, number>;
}

/**
 * CPU of the PostgreSQL backends serving a pg target (part of `postgres`): summed per backend over those
 * seen at the end (a backend new since the start counts whole); backends gone meanwhile are lost.
 */
interface BackendsDelta {
  ms: number;
  /** Backends at the end, of which new since the start, and backends of the start gone at the end. */
  seen: number;
  added: number;
  gone: number;
}

interface Delta {
  wallMs: number;
  /** CPU ms by part (user, system) over the interval. */
  cpu: Record<string, Cpu>;
  backends?: BackendsDelta;
  clientMs: number;
  pg?: PgPerOp;
  redis?: RedisPerOp;
}

/** The late PostgreSQL views read around a phase, and the operations between the two reads. */
interface ViewsWindow {
  start: PgViews;
  end: PgViews;
  ops: number;
}

/**
 * The difference of two snapshots, counters divided by `per` (operations, or seconds for idle); the
 * PostgreSQL views, if given, by their own window's operations.
 */
function delta(a: Snapshot, b: Snapshot, per: number, source?: PgSource, views?: ViewsWindow): Delta {
  const cpu: Record<string, Cpu> = {};
  for (const [name, end] of Object.entries(b.cpu)) {
    const start = a.cpu[name];
    cpu[name] = {
      userMs: end.userMs - (start?.userMs ?? 0),
      sysMs: end.sysMs - (start?.sysMs ?? 0),
      procs: end.procs,
    };
  }
  const clientMs = (b.client.user - a.client.user + b.client.system - a.client.system) / 1000;
  const out: Delta = { wallMs: b.at - a.at, cpu, clientMs };
  if (a.backends && b.backends) {
    const start = a.backends;
    const end = b.backends;
    const pids = Object.keys(end);
    out.backends = {
      ms: pids.reduce((s, pid) => s + end[+pid] - (start[+pid] ?? 0), 0),
      seen: pids.length,
      added: pids.filter((pid) => !(pid in start)).length,
      gone: Object.keys(start).filter((pid) => !(pid in end)).length,
    };
  }
  if (a.pg && b.pg && source) out.pg = pgPerOp(a.pg, b.pg, per, source, views);
  if (a.redis && b.redis) {
    const byCommand: Record<string, number> = {};
    for (const [cmd, calls] of Object.entries(b.redis)) {
      // The start snapshot's own INFO is counted by the end one.
      const d = calls - (a.redis[cmd] ?? 0) - (cmd === "info" ? 1 : 0);
      if (d > 0) byCommand[cmd] = d / per;
    }
    const sorted = Object.fromEntries(Object.entries(byCommand).sort((x, y) => y[1] - x[1]));
    out.redis = { commands: Object.values(byCommand).reduce((s, v) => s + v, 0), byCommand: sorted };
  }
  return out;
}

function pgPerOp(
  a: PgCounters,
  b: PgCounters,
  per: number,
  source: PgSource,
  views: ViewsWindow | undefined,
): PgPerOp {
  const diff = (x: Record<string, number>, y: Record<string, number>, by = per) =>
    Object.fromEntries(Object.entries(y).map(([k, v]) => [k, (v - (x[k] ?? 0)) / by]));
  const out: PgPerOp = { source };
  if (a.statements && b.statements) {
    const calls = Object.entries(diff(a.statements, b.statements)).filter(([, v]) => v > 0);
    out.statements = calls.reduce((s, [, v]) => s + v, 0);
    const schema = b.schema && `"${b.schema}"`;
    out.schemaStatements = calls.filter(([q]) => schema && q.includes(schema)).reduce((s, [, v]) => s + v, 0);
    out.byStatement = calls
      .sort((x, y) => y[1] - x[1])
      .map(([query, perOp]) => ({ perOp, query: query.slice(0, 500) }));
  }
  if (!views) return out;
  const { start, end, ops } = views;
  if (start.database && end.database) out.database = diff(start.database, end.database, ops);
  if (!start.tables || !end.tables) return out;
  const before = start.tables;
  const tables = Object.entries(end.tables).map(([t, v]) => [t, diff(before[t] ?? {}, v, ops)] as const);
  const schema: Record<string, number> = {};
  for (const [, v] of tables) {
    for (const [k, x] of Object.entries(v)) schema[k] = (schema[k] ?? 0) + x;
  }
  out.schema = schema;
  out.busiestTables = tables
    .map(([table, v]) => ({
      table,
      scansPerOp: v.seq_scan + v.idx_scan,
      writesPerOp: v.n_tup_ins + v.n_tup_upd + v.n_tup_del,
    }))
    .filter((t) => t.scansPerOp + t.writesPerOp > 0)
    .sort((x, y) => y.scansPerOp + y.writesPerOp - (x.scansPerOp + x.writesPerOp))
    .slice(0, 5);
  return out;
}

interface PhaseResult {
  target: CpuTarget;
  phase: PhaseId;
  concurrency: number;
  /** Operations asked for, done (successful), failed. */
  n: number;
  warmup: number;
  done: number;
  errors: number;
  firstError?: string;
  /** True when the time cap stopped the phase before n operations. */
  capped: boolean;
  wallMs: number;
  opsPerS: number;
  latencyMs: { p50: number; p95: number; mean: number };
  /** Means of the operations' extra values (response bytes, SSE events, history states). */
  extra: Record<string, number>;
  /** CPU ms per operation by part (user + system), and the user/system totals over the phase. */
  cpuMsPerOp: Record<string, number>;
  cpuMs: Record<string, Cpu>;
  /** The target's own processes (Hangar's API + worker, the peer, this process for inprocess). */
  serverMsPerOp: number;
  /** serverMsPerOp plus PostgreSQL and Redis. */
  totalMsPerOp: number;
  /** A pg target: CPU of the PostgreSQL backends serving it (part of `postgres`) per operation. */
  pgBackendsMsPerOp?: number;
  pgBackends?: BackendsDelta;
  /** serverMsPerOp plus those backends and Redis: the total without other clients' PostgreSQL work. */
  ownTotalMsPerOp?: number;
  /** This process (the load generator); undefined for inprocess, where it is the server. */
  clientMsPerOp?: number;
  pg?: PgPerOp;
  redis?: RedisPerOp;
  /** A pg target: Redis commands its own connections send per operation (a separate MONITOR pass). */
  redisOwn?: RedisOwn;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const sumCpu = (c: Cpu) => c.userMs + c.sysMs;

interface PhaseRun {
  target: CpuTarget;
  phase: Phase;
  op: () => Promise<Record<string, number>>;
  sampler: Sampler;
  opts: Options;
  pgSource?: PgSource;
  /** A pg target: the MONITOR pass after the measured phase (it runs this many more operations). */
  redisPass?: { ops: number; run: () => Promise<RedisOwn> };
  /** Told what went wrong outside the measured operations (e.g. the MONITOR pass). */
  note: (msg: string) => void;
}

/**
 * One phase: warm-up, the measured operations framed by two snapshots, then (pg targets) the MONITOR pass.
 * A pg target's late PostgreSQL views are read PG_STATS_SETTLE_MS before the warm-up and after the MONITOR
 * pass, and divided by every operation in between (warm-up, measured and MONITOR pass alike).
 */
async function runPhase(run: PhaseRun): Promise<PhaseResult> {
  const { target, phase, sampler, opts } = run;
  const { n, concurrency } = opts;
  const warmup = opts.warmup;
  const settledViews = async () => {
    await sleep(PG_STATS_SETTLE_MS);
    return sampler.views!();
  };
  const viewsStart = sampler.views ? await settledViews() : undefined;
  let warmed = 0;
  const warmOp = async () => {
    const r = await run.op();
    warmed++;
    return r;
  };
  // Warm-up alone (runLevel with n = 0), then the measured level alone, so that the snapshots frame it.
  await runLevel({
    concurrency,
    minSamples: 0,
    op: warmOp,
    warmup,
    // A warm-up asked for by count runs to its count (within a phase's cap).
    warmupMaxMs: opts.warmup === Math.ceil(n * WARMUP_FRACTION) ? WARMUP_CAP_MS : PHASE_CAP_MS,
    n: 0,
    maxMs: 0,
    hardMaxMs: 0,
  });
  const start = await sampler.snapshot("start");
  const level = await runLevel({
    concurrency,
    minSamples: 0,
    op: run.op,
    warmup: 0,
    warmupMaxMs: 0,
    n,
    maxMs: PHASE_CAP_MS,
    hardMaxMs: PHASE_CAP_MS,
  });
  const end = await sampler.snapshot("end");
  const done = level.count;
  const redisOwn = await run.redisPass?.run().catch((err) => {
    run.note(`${target} ${phase.id}: Redis MONITOR pass failed: ${(err as Error).message}`);
    return undefined;
  });
  const views: ViewsWindow | undefined = viewsStart && {
    start: viewsStart,
    end: await settledViews(),
    // A failed operation did its share of the work too (roughly): count it.
    ops: warmed + done + level.errors + (redisOwn?.ops ?? 0),
  };
  const d = delta(start, end, Math.max(done, 1), run.pgSource, views);
  const cpuMsPerOp = Object.fromEntries(Object.entries(d.cpu).map(([k, c]) => [k, sumCpu(c) / done]));
  const own = sampler.parts.filter((p) => OWN_PARTS.has(p));
  const serverMsPerOp = own.reduce((s, p) => s + cpuMsPerOp[p], 0);
  const lat = level.metrics.latency ?? summarise([]);
  const extra = Object.fromEntries(
    Object.entries(level.metrics)
      .filter(([k]) => k !== "latency")
      .map(([k, m]) => [k, m.mean]),
  );
  return {
    target,
    phase: phase.id,
    concurrency,
    n,
    warmup,
    done,
    errors: level.errors,
    firstError: level.firstError,
    capped: done + level.errors < n,
    wallMs: level.wallMs,
    opsPerS: level.throughput,
    latencyMs: { p50: lat.p50, p95: lat.p95, mean: lat.mean },
    extra,
    cpuMsPerOp,
    cpuMs: d.cpu,
    serverMsPerOp,
    totalMsPerOp: Object.values(cpuMsPerOp).reduce((s, v) => s + v, 0),
    clientMsPerOp: isInProcess(target) ? undefined : d.clientMs / done,
    pgBackendsMsPerOp: d.backends && d.backends.ms / done,
    pgBackends: d.backends,
    ownTotalMsPerOp: d.backends && serverMsPerOp + d.backends.ms / done + (cpuMsPerOp.redis ?? 0),
    pg: d.pg,
    redis: d.redis,
    redisOwn,
  };
}

// ---------- targets ----------

interface TargetInfo {
  startupMs?: number;
  details?: string;
  pids?: number[];
  logs?: string;
  error?: string;
  /** Background CPU after the phases, ms per second by part (and statements/commands per second). */
  idle?: Delta;
  /** Setup failures by phase. */
  setupErrors: Record<string, string>;
  notes: string[];
}

interface Options {
  targets: CpuTarget[];
  phases: Phase[];
  n: number;
  /** Operations before the measured ones (not counted): --warmup, else WARMUP_FRACTION of n. */
  warmup: number;
  concurrency: number;
  quick: boolean;
}

const log = (msg: string) => process.stderr.write(`${msg}\n`);

/** Opens the PostgreSQL and Redis monitors (once per bench run), keeping going without either on failure. */
async function openMonitors(): Promise<Monitors> {
  const monitors: Monitors = { errors: [] };
  try {
    monitors.pg = await openPgMonitor();
  } catch (err) {
    monitors.errors.push(`PostgreSQL monitor (${DATABASE_URL}): ${(err as Error).message}`);
  }
  try {
    monitors.redis = await openRedisMonitor();
  } catch (err) {
    monitors.errors.push(`Redis monitor (${REDIS_URL}): ${(err as Error).message}`);
  }
  return monitors;
}

async function closeMonitors(m: Monitors): Promise<void> {
  await m.pg?.db.end().catch(() => {});
  m.redis?.redis.disconnect();
}

/** All phases of one server target, on one server; then its idle CPU. */
async function benchServer(
  target: TargetName,
  opts: Options,
  stamp: string,
  info: TargetInfo,
  monitors: () => Promise<Monitors>,
  results: PhaseResult[],
): Promise<void> {
  let server: BenchServer;
  try {
    server = await startTargetServer(target, stamp);
  } catch (err) {
    info.error = (err as Error).message;
    log(`  ${target}: FAILED TO START\n${info.error}`);
    return;
  }
  try {
    info.startupMs = Math.round(server.startupMs);
    info.details = server.details;
    info.pids = server.pids;
    info.logs = server.logFiles.map((f) => relative(ROOT, f)).join(", ");
    const m = isPgTarget(target) ? await monitors() : { errors: [] };
    info.notes.push(...m.errors);
    const sampler = serverSampler(server, m);
    log(
      `  ${target}: ${server.url} (pid ${server.pids.join(", ")}, ready in ${info.startupMs} ms` +
        `${server.details ? `; ${server.details}` : ""})`,
    );
    for (const phase of opts.phases) {
      let state: unknown;
      try {
        state = await phase.setup?.(server.url);
      } catch (err) {
        info.setupErrors[phase.id] = (err as Error).message;
        log(`  ${target} ${phase.id}: SETUP FAILED: ${(err as Error).message}`);
        continue;
      }
      const op = () => phase.op(server.url, state);
      const redis = m.redis;
      const ops = Math.min(REDIS_SAMPLE_OPS, opts.n);
      const pids = () => treeOf(readProcs(), server.pids);
      const r = await runPhase({
        target,
        phase,
        op,
        sampler,
        opts,
        pgSource: m.pg?.source,
        redisPass:
          isPgTarget(target) && redis
            ? { ops, run: () => sampleRedisOwn(redis, pids, op, ops, opts.concurrency) }
            : undefined,
        note: (msg) => info.notes.push(msg),
      });
      results.push(r);
      log(`  ${target} ${phase.id}: ${describe(r)}`);
    }
    await sleep(IDLE_PAUSE_MS);
    const start = await sampler.snapshot("start");
    await sleep(IDLE_MS);
    const end = await sampler.snapshot("end");
    info.idle = delta(start, end, (end.at - start.at) / 1000, m.pg?.source);
  } finally {
    await server.stop();
  }
}

/**
 * Hangar's own execution of a run, in this process, on the same graph and SQLite file as `inprocess`: the server's
 * runner (InProcessRunner, what a graph thread runs) as a `runs/wait` runs it (stream modes values and tasks, the chat
 * model made to stream its tokens as the official server does for every run, each event serialized as it would be
 * for a stream) and the thread's state at the end as the server takes it (runs/end-state.ts), on Hangar's saver (it
 * records its writes for that), with no HTTP, no run or thread record, no log and no other thread. What a run costs
 * before the server's own work.
 */
async function executorInvoker(saver: SqliteSaver): Promise<(threadId: string) => Promise<unknown>> {
  const { HangarSqliteSaver } = await import("../src/storage/sqlite/checkpointer.ts");
  const { WriteTracker } = await import("../src/storage/sqlite/write-tracker.ts");
  const { InProcessRunner } = await import("../src/runs/graph-runner.ts");
  const { serialize } = await import("../src/streams/channel.ts");
  const { createLogger } = await import("../src/lib/logger.ts");
  // Each write commits at once (the server groups them in one transaction per turn).
  const hangarSaver = new HangarSqliteSaver(saver.db, () => {}, new WriteTracker());
  await loadInvoker(hangarSaver); // the project's env applied and the graph given the checkpointer
  const { graph } = await import("../examples/src/chat.ts");
  // The registry's part the runner uses: the graph, bound to its checkpointer.
  const graphs = { get: async () => graph, getWith: async () => graph };
  const runner = new InProcessRunner(graphs as never);
  const silent = createLogger({ level: "silent" });
  const emit = (_event: string, data: unknown) => void serialize(data);
  return async (threadId) => {
    const job = {
      graphId: GRAPH_ID,
      runId: randomUUID(),
      threadId,
      kwargs: {
        input: INPUT,
        config: { configurable: { thread_id: threadId } },
        stream_mode: ["values"],
        subgraphs: false,
      },
    };
    const { outcome, state } = await runner.run(job as never, new AbortController().signal, emit, silent);
    if (outcome.status !== "success" || !state) throw new Error(`executor: run ended ${outcome.status}`);
    return outcome.values;
  };
}

const IN_PROCESS = {
  inprocess: { invoker: loadInvoker, details: "graph.invoke in this process" },
  "inprocess-stream": {
    invoker: loadStreamingInvoker,
    details: "graph.invoke in this process, the chat model made to stream (as a server runs it)",
  },
  executor: {
    invoker: executorInvoker,
    details: "Hangar's InProcessRunner in this process (no HTTP, no records)",
  },
} as const;

/** Whether a target runs in this process (no server). */
const isInProcess = (t: string): t is keyof typeof IN_PROCESS => Object.hasOwn(IN_PROCESS, t);

async function benchInProcess(
  opts: Options,
  info: TargetInfo,
  results: PhaseResult[],
  target: keyof typeof IN_PROCESS,
): Promise<void> {
  if (!opts.phases.includes(runWaitPhase)) {
    info.notes.push(`${target} has the run-wait phase only (not selected)`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "hangar-bench-cpu-"));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  process.once("exit", cleanup);
  const saver = SqliteSaver.fromConnString(join(dir, "checkpoints.sqlite"));
  try {
    const invoke = await IN_PROCESS[target].invoker(saver);
    info.details = `${IN_PROCESS[target].details}, SqliteSaver on a file (${dir})`;
    log(`  ${target}: ${info.details}`);
    const op = async () => {
      const t0 = performance.now();
      await invokeOnNewThread(invoke);
      return { latency: performance.now() - t0 };
    };
    const r = await runPhase({
      target,
      phase: runWaitPhase,
      op,
      sampler: selfSampler(),
      opts,
      note: (msg) => info.notes.push(msg),
    });
    results.push(r);
    log(`  ${target} run-wait: ${describe(r)}`);
  } catch (err) {
    info.error = (err as Error).message;
    log(`  ${target}: FAILED: ${info.error}`);
  } finally {
    saver.db.close();
    cleanup();
    process.removeListener("exit", cleanup);
  }
}

// ---------- formatting ----------

function fmt(v: number | undefined): string {
  if (v === undefined || !Number.isFinite(v)) return "-";
  const a = Math.abs(v);
  if (a < 10) return v.toFixed(2);
  if (a < 100) return v.toFixed(1);
  return v.toFixed(0);
}

const fmtRatio = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined && Number.isFinite(a / b) && b !== 0 ? `${(a / b).toFixed(2)}x` : "-";

function table(header: string[], body: string[][], rightAlign: (col: number) => boolean): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (rightAlign(i) ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...body.map(line)].join("\n");
}

function describe(r: PhaseResult): string {
  const split = Object.entries(r.cpuMsPerOp)
    .map(([k, v]) => `${k} ${fmt(v)}`)
    .join(", ");
  const err = r.errors ? `  ERRORS ${r.errors}: ${r.firstError}` : "";
  return (
    `${fmt(r.totalMsPerOp)} CPU ms/op (${split}), ${fmt(r.opsPerS)} ops/s, ` +
    `${r.done}/${r.n} done in ${(r.wallMs / 1000).toFixed(1)} s${r.capped ? " (time cap)" : ""}${err}`
  );
}

function renderPhase(phase: Phase, rows: PhaseResult[], pgSource: PgSource | undefined): string {
  const hasPg = rows.some((r) => r.pg || r.redis || "api" in r.cpuMsPerOp);
  const header = ["target", "done", "err", "ops/s", "p50 ms", "server CPU", "sys%"];
  if (hasPg) header.push("api", "worker", "postgres", "pg own", "redis", "total", "total own");
  header.push("client CPU");
  if (hasPg) {
    header.push(pgSource === "pg_stat_statements" ? "pg stmts" : "pg xacts", "redis cmds", "redis own");
  }
  const body = rows.map((r) => {
    const own = Object.entries(r.cpuMs).filter(([k]) => OWN_PARTS.has(k));
    const total = own.reduce((s, [, c]) => s + sumCpu(c), 0);
    const sys = own.reduce((s, [, c]) => s + c.sysMs, 0);
    const cells = [
      r.target,
      `${r.done}/${r.n}${r.capped ? " cap" : ""}`,
      String(r.errors),
      fmt(r.opsPerS),
      fmt(r.latencyMs.p50),
      fmt(r.serverMsPerOp),
      total > 0 ? `${Math.round((sys / total) * 100)}%` : "-",
    ];
    if (hasPg) {
      const c = r.cpuMsPerOp;
      const pg = "postgres" in c;
      cells.push(
        fmt(c.api),
        fmt(c.worker),
        fmt(c.postgres),
        fmt(r.pgBackendsMsPerOp),
        fmt(c.redis),
        pg ? fmt(r.totalMsPerOp) : "-",
        fmt(r.ownTotalMsPerOp),
      );
    }
    cells.push(fmt(r.clientMsPerOp));
    if (hasPg) {
      cells.push(fmt(r.pg && pgCount(r.pg)), fmt(r.redis?.commands), fmt(r.redisOwn?.commands));
    }
    return cells;
  });
  const out = [`== ${phase.id}: ${phase.title}, c=${rows[0]?.concurrency} (CPU in ms per operation)`];
  out.push(table(header, body, (i) => i >= 1));
  for (const r of rows) {
    const b = r.pgBackends;
    if (b) {
      out.push(
        `  ${r.target} PostgreSQL backends serving it: ${b.seen} at the end (${b.added} new); ` +
          `${b.gone} gone meanwhile (their CPU is not in pg own)`,
      );
    }
    if (r.pg) out.push(...renderPg(r));
    if (r.redis) {
      const cmds = Object.entries(r.redis.byCommand)
        .slice(0, 12)
        .map(([k, v]) => `${k} ${fmt(v)}`)
        .join(", ");
      out.push(
        `  ${r.target} Redis commands/op (INFO commandstats, whole server): ${fmt(r.redis.commands)}: ${cmds || "-"}`,
      );
    }
    if (r.redisOwn) {
      const cmds = Object.entries(r.redisOwn.byCommand)
        .map(([k, v]) => `${k} ${fmt(v)}`)
        .join(", ");
      out.push(
        `  ${r.target} Redis commands/op sent by its own connections (MONITOR, ${r.redisOwn.ops} more ops): ` +
          `${fmt(r.redisOwn.commands)}: ${cmds || "-"}`,
      );
    }
    if (r.errors) out.push(`  ! ${r.target}: ${r.errors} error(s), first: ${r.firstError}`);
  }
  return out.join("\n");
}

/** Statements (pg_stat_statements) or else transactions (pg_stat_database) per op. */
const pgCount = (pg: PgPerOp) =>
  pg.statements ?? (pg.database ? pg.database.xact_commit + pg.database.xact_rollback : undefined);

function renderPg(r: PhaseResult): string[] {
  const pg = r.pg!;
  const out: string[] = [];
  if (pg.byStatement) {
    out.push(
      `  ${r.target} PostgreSQL statements/op (pg_stat_statements, whole database): ${fmt(pg.statements)}, ` +
        `of which ${fmt(pg.schemaStatements)} name the deployment's schema; top 10:`,
    );
    for (const s of pg.byStatement.slice(0, 10))
      out.push(`    ${fmt(s.perOp).padStart(6)}  ${s.query.slice(0, 110)}`);
  }
  const d = pg.database;
  if (d) {
    out.push(
      `  ${r.target} PostgreSQL per op (pg_stat_database, whole database): ` +
        `${fmt(d.xact_commit + d.xact_rollback)} transactions, tuples returned ${fmt(d.tup_returned)}, ` +
        `fetched ${fmt(d.tup_fetched)}, inserted ${fmt(d.tup_inserted)}, updated ${fmt(d.tup_updated)}, ` +
        `deleted ${fmt(d.tup_deleted)}`,
    );
  }
  const s = pg.schema;
  if (s && Object.keys(s).length) {
    const busiest = (pg.busiestTables ?? [])
      .map((t) => `${t.table} ${fmt(t.scansPerOp)}/${fmt(t.writesPerOp)}`)
      .join(", ");
    out.push(
      `  ${r.target} deployment schema per op (pg_stat_user_tables): scans ${fmt(s.seq_scan + s.idx_scan)} ` +
        `(seq ${fmt(s.seq_scan)}, index ${fmt(s.idx_scan)}), rows inserted ${fmt(s.n_tup_ins)}, ` +
        `updated ${fmt(s.n_tup_upd)}, deleted ${fmt(s.n_tup_del)}; busiest (scans/rows written): ${busiest || "-"}`,
    );
  }
  return out;
}

interface Ratio {
  name: string;
  value?: number;
  text: string;
  goal?: string;
  met?: boolean;
}

/** The issue's acceptance figures, on run-wait (thread + run) at this run's concurrency. */
function ratios(results: PhaseResult[]): Ratio[] {
  const rw = (t: CpuTarget) => results.find((r) => r.target === t && r.phase === "run-wait" && r.done > 0);
  const hangar = rw("hangar");
  const inproc = rw("inprocess");
  const out: Ratio[] = [];
  const ratio = (name: string, a?: number, b?: number, goal?: [string, (v: number) => boolean]) => {
    if (a === undefined || b === undefined) return;
    const value = a / b;
    out.push({
      name,
      value,
      text: `${fmt(a)} / ${fmt(b)} ms = ${fmtRatio(a, b)}`,
      goal: goal?.[0],
      met: goal?.[1](value),
    });
  };
  ratio("embedded CPU/run ÷ in-process CPU/run", hangar?.serverMsPerOp, inproc?.serverMsPerOp, [
    "≤ 1.5",
    (v) => v <= 1.5,
  ]);
  // The floor of any wire-compatible server: Hangar's executor alone (see executorInvoker) over graph.invoke.
  ratio("executor CPU/run ÷ in-process CPU/run", rw("executor")?.serverMsPerOp, inproc?.serverMsPerOp);
  ratio("embedded CPU/run ÷ executor CPU/run", hangar?.serverMsPerOp, rw("executor")?.serverMsPerOp);
  // The fair floor: the graph invoked as every wire-compatible server runs it (its model streaming).
  const streamed = rw("inprocess-stream")?.serverMsPerOp;
  ratio("in-process streaming CPU/run ÷ in-process CPU/run", streamed, inproc?.serverMsPerOp);
  ratio("embedded CPU/run ÷ in-process streaming CPU/run", hangar?.serverMsPerOp, streamed);
  ratio("pg1 total CPU/run ÷ in-process streaming CPU/run", rw("pg1")?.totalMsPerOp, streamed);
  for (const t of ["pg1", "pg2"] as const) {
    ratio(
      `${t} total CPU/run (incl. PostgreSQL + Redis) ÷ embedded`,
      rw(t)?.totalMsPerOp,
      hangar?.serverMsPerOp,
      ["≤ 2", (v) => v <= 2],
    );
    ratio(
      `${t} same, PostgreSQL = only the backends serving ${t}`,
      rw(t)?.ownTotalMsPerOp,
      hangar?.serverMsPerOp,
      ["≤ 2", (v) => v <= 2],
    );
    ratio(
      `${t} own processes CPU/run (api + worker) ÷ embedded`,
      rw(t)?.serverMsPerOp,
      hangar?.serverMsPerOp,
    );
  }
  if (hangar) {
    out.push({
      name: `embedded runs/s at c=${hangar.concurrency}`,
      value: hangar.opsPerS,
      text: fmt(hangar.opsPerS),
      goal: "≥ 400",
      met: hangar.opsPerS >= 400,
    });
  }
  ratio("peer CPU/run ÷ embedded (reference)", rw("peer")?.serverMsPerOp, hangar?.serverMsPerOp);
  return out;
}

function renderRatios(rs: Ratio[]): string {
  if (!rs.length) return "";
  const body = rs.map((r) => [
    r.name,
    r.text,
    r.goal ?? "",
    r.met === undefined ? "" : r.met ? "met" : "not met",
  ]);
  return [
    "Acceptance figures of issue 15 (run = POST /threads + runs/wait; informative, nothing is asserted):",
    table(["figure", "value", "goal", ""], body, () => false),
  ].join("\n");
}

function renderIdle(info: Partial<Record<CpuTarget, TargetInfo>>): string {
  const lines: string[] = [];
  for (const [t, i] of Object.entries(info)) {
    if (!i?.idle) continue;
    const cpu = Object.entries(i.idle.cpu)
      .map(([k, c]) => `${k} ${fmt((sumCpu(c) / i.idle!.wallMs) * 1000)} (${c.procs} proc)`)
      .join(", ");
    const pg = i.idle.pg;
    const stmts = pg?.statements !== undefined ? `; PostgreSQL ${fmt(pg.statements)} statements/s` : "";
    const redis = i.idle.redis ? `, Redis ${fmt(i.idle.redis.commands)} commands/s` : "";
    lines.push(`  ${t}: CPU ms/s ${cpu}${stmts}${redis}`);
  }
  return lines.length
    ? [`Idle after the phases (${IDLE_MS / 1000} s, background work):`, ...lines].join("\n")
    : "";
}

// ---------- main ----------

const USAGE = `Usage: npm run bench:cpu -- [options]

  --target <list>      comma-separated (default ${DEFAULT_TARGETS.join(",")}; all = ${CPU_TARGETS.join(",")}):
                         hangar     hangar dev, embedded SQLite
                         pg1        hangar serve, 1 --mode api + 1 --mode worker, PostgreSQL + Redis
                         pg2        the same with 2 worker processes
                         peer       the official dev server (@langchain/langgraph-cli dev)
                         inprocess  graph.invoke in this process, SQLite file checkpointer (run-wait only)
                         inprocess-stream  the same, the chat model made to stream its tokens as every server's
                                    runs have it (run-wait only)
                         executor   Hangar's runner of the same graph in this process, its end state as the
                                    server takes it; no HTTP, no records (run-wait only): a run's floor
  --only <phases>      comma-separated (default all): ${PHASE_IDS.join(", ")}
  --n <count>          operations per phase (default ${DEFAULT_N})
  --warmup <count>     operations before each phase's measured ones, not counted (default ${WARMUP_FRACTION * 100}% of n;
                       a server's JIT compiles for tens of seconds: a larger warm-up measures its steady state)
  --quick              --n ${QUICK_N}
  --concurrency <c>    operations in flight (default ${DEFAULT_CONCURRENCY})
  -h, --help           this help

Each phase stops after ${PHASE_CAP_MS / 1000} s at the latest. pg targets use $DATABASE_URL (default
${DATABASE_URL}) and $REDIS_URL (default ${REDIS_URL}).
`;

function parseCli(): Options {
  const { values } = parseArgs({
    options: {
      target: { type: "string" },
      only: { type: "string" },
      n: { type: "string" },
      warmup: { type: "string" },
      quick: { type: "boolean", default: false },
      concurrency: { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    process.stdout.write(USAGE);
    process.exit(0);
  }
  const list = (s: string) =>
    s
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean);
  const asked = values.target
    ? list(values.target).flatMap((t) => (t === "all" ? [...CPU_TARGETS] : [t]))
    : DEFAULT_TARGETS;
  const bad = asked.filter((t) => !(CPU_TARGETS as readonly string[]).includes(t));
  if (bad.length || !asked.length) throw new UsageError(`unknown target(s): ${bad.join(", ")}\n\n${USAGE}`);
  const only = values.only ? list(values.only) : PHASE_IDS;
  const badPhase = only.filter((p) => !(PHASE_IDS as string[]).includes(p));
  if (badPhase.length || !only.length) {
    throw new UsageError(`unknown phase(s): ${badPhase.join(", ")}\n\n${USAGE}`);
  }
  const int = (name: string, v: string | undefined, dflt: number) => {
    const x = v === undefined ? dflt : Number(v);
    if (!Number.isInteger(x) || x < 1) throw new UsageError(`--${name} takes a positive integer (got ${v})`);
    return x;
  };
  const n = int("n", values.n, values.quick ? QUICK_N : DEFAULT_N);
  return {
    targets: CPU_TARGETS.filter((t) => asked.includes(t)),
    phases: PHASES.filter((p) => only.includes(p.id)),
    n,
    warmup: int("warmup", values.warmup, Math.ceil(n * WARMUP_FRACTION)),
    concurrency: int("concurrency", values.concurrency, DEFAULT_CONCURRENCY),
    quick: values.quick,
  };
}

async function main(): Promise<number> {
  const opts = parseCli();
  installCleanupHandlers();
  mkdirSync(RESULTS_DIR, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, "-");
  const started = Date.now();
  const loadStart = loadavg();
  const logLevel = process.env.LOG_LEVEL;
  log(
    `Hangar CPU bench: targets ${opts.targets.join(", ")}, phases ${opts.phases.map((p) => p.id).join(", ")}, ` +
      `n=${opts.n} (+${opts.warmup} warm-up), c=${opts.concurrency}, ` +
      `cap ${PHASE_CAP_MS / 1000} s/phase; LOG_LEVEL=${logLevel ?? "(unset)"}; ` +
      `load average ${loadStart.map((l) => l.toFixed(2)).join(" ")}`,
  );

  // PostgreSQL / Redis monitors: opened at the first pg target, shared by the next ones.
  let monitors: Promise<Monitors> | undefined;
  const getMonitors = () => (monitors ??= openMonitors());
  const results: PhaseResult[] = [];
  const info: Partial<Record<CpuTarget, TargetInfo>> = {};
  try {
    for (const t of opts.targets) {
      log(`\n== ${t}`);
      const i: TargetInfo = { setupErrors: {}, notes: [] };
      info[t] = i;
      if (isInProcess(t)) await benchInProcess(opts, i, results, t);
      else await benchServer(t, opts, `cpu-${stamp}`, i, getMonitors, results);
    }
  } finally {
    if (monitors) await closeMonitors(await monitors);
  }
  const m = monitors ? await monitors : undefined;
  const loadEnd = loadavg();

  const out: string[] = [];
  for (const phase of opts.phases) {
    const rows = results.filter((r) => r.phase === phase.id);
    if (rows.length) out.push(renderPhase(phase, rows, m?.pg?.source), "");
  }
  out.push(
    "CPU = user + system ms per operation done, of the process tree from /proc (server CPU: the target's own",
    "processes; inprocess: this process, process.cpuUsage). client CPU = this process (the load generator).",
  );
  if (results.some((r) => r.pg || r.redis)) {
    const pgProcs = m?.pg?.postmasterPid
      ? `postmaster ${m.pg.postmasterPid} and its children`
      : "every `postgres` process";
    const redisProcs = m?.redis?.pid ? `redis-server ${m.redis.pid}` : "every `redis-server` process";
    out.push(
      `postgres / redis = the whole PostgreSQL server (${pgProcs}) and Redis server (${redisProcs}); ` +
        "pg stmts / xacts and redis cmds",
      "count the whole database / server: on a shared machine these include other clients' activity (run quiet).",
      "pg own = only the PostgreSQL backends serving the target; total own = api + worker + pg own + redis;",
      "redis own = commands sent by the target's own connections (MONITOR, in a separate pass after the phase).",
      m?.pg?.source === "pg_stat_statements"
        ? "PostgreSQL statements from pg_stat_statements (this database)."
        : `PostgreSQL: pg_stat_database transactions (commit + rollback), not statements: ${m?.pg?.note ?? "-"}.`,
      `pg_stat_database / pg_stat_user_tables (published late by PostgreSQL) are read ${PG_STATS_SETTLE_MS / 1000} s ` +
        "before the warm-up and after the MONITOR pass, per operation in between (warm-up + phase + pass),",
      "so they include that idle time's background work.",
    );
    if (m?.pg?.note && m.pg.source === "pg_stat_statements") out.push(`Note: ${m.pg.note}.`);
  }
  out.push("");
  const rs = ratios(results);
  const ratioText = renderRatios(rs);
  if (ratioText) out.push(ratioText, "");
  const idle = renderIdle(info);
  if (idle) out.push(idle, "");
  for (const [t, i] of Object.entries(info)) {
    if (!i) continue;
    const head = i.details ? `${t}: ${i.details}` : t;
    const extra = [
      i.startupMs !== undefined && `ready in ${i.startupMs} ms`,
      i.logs && `log ${i.logs}`,
    ].filter(Boolean);
    out.push(`${head}${extra.length ? ` (${extra.join("; ")})` : ""}`);
    if (i.error) out.push(`  ! failed: ${i.error.split("\n")[0]}`);
    for (const [p, e] of Object.entries(i.setupErrors)) out.push(`  ! ${p} setup: ${e}`);
    for (const n of i.notes) out.push(`  note: ${n}`);
  }
  out.push(
    `Host: ${availableParallelism()} CPUs, node ${process.version}, LOG_LEVEL=${logLevel ?? "(unset)"}, ` +
      `load average (1/5/15 min) ${loadStart.map((l) => l.toFixed(2)).join(" ")} at start, ` +
      `${loadEnd.map((l) => l.toFixed(2)).join(" ")} at end.`,
  );
  process.stdout.write(`\n${out.join("\n")}\n`);

  const file = join(RESULTS_DIR, `cpu-${stamp}.json`);
  const durationMs = Date.now() - started;
  writeFileSync(
    file,
    JSON.stringify(
      {
        startedAt: new Date(started).toISOString(),
        durationMs,
        options: {
          targets: opts.targets,
          phases: opts.phases.map((p) => p.id),
          n: opts.n,
          quick: opts.quick,
          concurrency: opts.concurrency,
          warmup: opts.warmup,
          phaseCapMs: PHASE_CAP_MS,
          idleMs: IDLE_MS,
          historyRuns: HISTORY_RUNS,
          historyLimit: HISTORY_LIMIT,
        },
        host: {
          node: process.version,
          platform: process.platform,
          cpus: availableParallelism(),
          cpuModel: cpus()[0]?.model,
          clkTck: CLK_TCK,
          loadavgStart: loadStart,
          loadavgEnd: loadEnd,
          logLevel: logLevel ?? null,
        },
        monitors: m && {
          pgSource: m.pg?.source,
          pgNote: m.pg?.note,
          postmasterPid: m.pg?.postmasterPid,
          redisPid: m.redis?.pid,
          errors: m.errors,
        },
        targetInfo: info,
        results,
        ratios: rs,
      },
      null,
      2,
    ),
  );
  process.stdout.write(`\nJSON: ${relative(ROOT, file)}   (total ${(durationMs / 1000).toFixed(0)} s)\n`);
  const failed =
    results.some((r) => r.errors > 0) ||
    Object.values(info).some((i) => i?.error || Object.keys(i?.setupErrors ?? {}).length);
  return failed ? 1 : 0;
}

runMain("bench:cpu", main);
