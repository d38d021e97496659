/**
 * Benchmark servers: starts Hangar (`hangar dev`, embedded SQLite), the official peer dev server
 * (`langgraphjs dev` from `@langchain/langgraph-cli`) and Hangar's scale-out deployments (`hangar serve` on
 * PostgreSQL + Redis: one `--mode api` process plus 1 or 2 `--mode worker` processes) as detached child
 * processes on free loopback ports, and stops each of them by its own process group (the pid we spawned),
 * also on error, SIGINT and SIGTERM.
 *
 * The peer runs against a temporary copy of `examples/` (so its `.langgraph_api` data dir and the `.gitignore`
 * it edits stay out of the repository); a `node_modules` symlink next to the copy makes the graph code resolve
 * the very same packages as the repository (Node follows the symlink to the real path).
 *
 * A scale-out deployment gets a fresh PostgreSQL schema and Redis key prefix per start
 * (`hangar_bench_<bench pid>_<n>_<random>`, on $DATABASE_URL / $REDIS_URL, default the local servers), which
 * are dropped (DROP SCHEMA ... CASCADE, SCAN + DEL) once its processes are stopped; leftovers of a bench
 * process that no longer exists (killed with SIGKILL) are dropped when the next pg target starts.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  cpSync,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Redis } from "ioredis";
import pg from "pg";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const RESULTS_DIR = join(ROOT, "bench/results");
export const EXAMPLES_DIR = join(ROOT, "examples");

/** Every bench target, in report order. */
export const TARGETS = ["hangar", "peer", "pg1", "pg2", "hangar-aes", "pg1-aes"] as const;
export type TargetName = (typeof TARGETS)[number];
/** The scale-out targets and their worker process count (each beside one `--mode api` process). */
export const PG_WORKERS = { pg1: 1, pg2: 2, "pg1-aes": 1 } as const;
/** The `-aes` targets: the same servers with encryption at rest on (docs/encryption.md). */
export const AES_ENV = { LANGGRAPH_AES_KEY: Buffer.alloc(32, 1).toString("base64") };
export type PgTarget = keyof typeof PG_WORKERS;
export const isPgTarget = (t: string): t is PgTarget => t in PG_WORKERS;

export const DATABASE_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379";
/** Prefix of every bench schema and Redis key prefix (followed by the bench's pid). */
const SCHEMA_PREFIX = "hangar_bench_";

export interface BenchServer {
  name: TargetName;
  /** The URL the client talks to (a scale-out deployment: its API process). */
  url: string;
  /** The process (group) the client talks to. */
  pid: number;
  /** Every process group of the target (a scale-out deployment: API first, then the workers). */
  pids: number[];
  logFile: string;
  /** Every log file of the target (a scale-out deployment: one per process). */
  logFiles: string[];
  /** What the target runs on, for the report (a scale-out deployment: its processes). */
  details?: string;
  /** A scale-out deployment's PostgreSQL schema (= its Redis prefix without the trailing colon). */
  schema?: string;
  /** Wall time from spawn to "ready", in ms. */
  startupMs: number;
  /** Stops the process group (SIGTERM, then SIGKILL after a grace period) and removes temp dirs. */
  stop: () => Promise<void>;
}

interface Live {
  proc: ChildProcess;
  dirs: string[];
}

/** Every process group we started and have not stopped yet, for the emergency handlers. */
const live = new Set<Live>();

/** A scale-out deployment's PostgreSQL schema and Redis prefix, until dropped. */
export interface Deployment {
  schema: string;
  redisPrefix: string;
}

/** Every deployment created and not dropped yet, for the emergency handlers. */
const deployments = new Set<Deployment>();

/** The process group `pid` leads still has a process. */
export function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signals the whole process group `pid` leads (nothing if it is gone). */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stopLive(entry: Live): Promise<void> {
  if (!live.has(entry)) return;
  const pid = entry.proc.pid!;
  signalGroup(pid, "SIGTERM");
  const deadline = Date.now() + 5_000;
  while (groupAlive(pid) && Date.now() < deadline) await sleep(100);
  if (groupAlive(pid)) {
    signalGroup(pid, "SIGKILL");
    const killDeadline = Date.now() + 2_000;
    while (groupAlive(pid) && Date.now() < killDeadline) await sleep(50);
  }
  live.delete(entry);
  for (const dir of entry.dirs) rmSync(dir, { recursive: true, force: true });
}

/**
 * Synchronous last resort (process "exit"): SIGKILL whatever is still running, drop temp dirs, and drop the
 * deployments' schemas and Redis keys (in a child node process: "exit" handlers cannot wait for I/O).
 */
function killAllSync(): void {
  for (const entry of live) {
    signalGroup(entry.proc.pid!, "SIGKILL");
    for (const dir of entry.dirs) rmSync(dir, { recursive: true, force: true });
  }
  live.clear();
  if (deployments.size) {
    dropDeploymentsSync([...deployments]);
    deployments.clear();
  }
}

let handlersInstalled = false;

/** Installs SIGINT/SIGTERM/exit handlers that stop every server started here. */
export function installCleanupHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const onSignal = (signal: NodeJS.Signals) => {
    process.stderr.write(`\n${signal}: stopping benchmark servers...\n`);
    void Promise.all([...live].map(stopLive))
      .then(() => Promise.all([...deployments].map((d) => dropDeployment(d).catch(() => {}))))
      .finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", killAllSync);
}

/** Asks the kernel for a free loopback port (bind to 0, read, release). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.once("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => (port ? res(port) : rej(new Error("no port"))));
    });
  });
}

function spawnLogged(
  cmd: string,
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; logFile: string; dirs: string[] },
): { entry: Live; output: () => string } {
  const proc = spawn(cmd, args, {
    cwd: opts.cwd,
    env: opts.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true, // own process group: we can stop the CLI and every child it spawns by one pid
  });
  const entry: Live = { proc, dirs: opts.dirs };
  live.add(entry);
  const log = createWriteStream(opts.logFile, { flags: "a" });
  log.write(`\n===== ${new Date().toISOString()} ${[cmd, ...args].join(" ")}\n`);
  let out = "";
  const onData = (d: Buffer) => {
    log.write(d);
    if (out.length < 200_000) out += d.toString();
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  proc.once("exit", () => log.end());
  return { entry, output: () => out };
}

function exitPromise(proc: ChildProcess): Promise<never> {
  return new Promise((_, rej) =>
    proc.once("exit", (code, signal) => rej(new Error(`exited early (code ${code}, signal ${signal})`))),
  );
}

/** Whether a process started with `env` executes runs on graph threads (HANGAR_GRAPH_THREADS, default 2). */
const withGraphThreads = (env: NodeJS.ProcessEnv) => (env.HANGAR_GRAPH_THREADS ?? "2") !== "0";

/**
 * Resolves with the URL a Hangar process prints ("... listening on <url>") once it answers GET /ok, and, for a
 * process that executes runs with graph threads (`graphThreads`), once they have loaded the graphs: they load them
 * in the background after the server listens, CPU that would otherwise count in the first phase measured.
 */
async function waitListening(entry: Live, output: () => string, graphThreads = false): Promise<string> {
  const url = await Promise.race([
    exitPromise(entry.proc),
    (async () => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const m = /listening on (http:\/\/[^\s"]+)/.exec(output());
        if (m) return m[1].replace(/\/+$/, "");
        await sleep(50);
      }
      throw new Error("timed out after 60 s waiting for 'listening on'");
    })(),
  ]);
  await waitOk(url, 30_000);
  if (graphThreads) {
    const deadline = Date.now() + 90_000;
    while (!/graph threads ready|no graph thread could load/.test(output())) {
      if (Date.now() > deadline) throw new Error("timed out after 90 s waiting for 'graph threads ready'");
      await sleep(50);
    }
  }
  return url;
}

/**
 * Hangar's servers here extract schemas when asked (as the official dev server does), not in the background once
 * listening: a fresh data dir would otherwise spend the first minute compiling the graphs' types, counted as the
 * server's CPU of the phases measured (82.7 ms per run-wait instead of 22.9). Set HANGAR_SCHEMAS_AHEAD to override.
 */
const SCHEMAS_OFF = { HANGAR_SCHEMAS_AHEAD: process.env.HANGAR_SCHEMAS_AHEAD ?? "false" };

/**
 * `BENCH_PROF_DIR=<dir>`: Hangar's server processes write a V8 CPU profile there when they exit (node --cpu-prof;
 * NODE_OPTIONS may not carry it). Open it in Chrome's DevTools or summarise it with bench/prof-top.ts.
 */
/**
 * Node's flags for a Hangar process: those of bin/hangar.js's `#!` line (what a user running `hangar` gets; the
 * bench runs `node bin/hangar.js`, which would skip them), or BENCH_NODE_FLAGS when set (space-separated; to
 * compare settings), then the profiler's with BENCH_PROF_DIR.
 */
function nodeFlags(): string[] {
  const given = process.env.BENCH_NODE_FLAGS;
  const shebang = readFileSync(join(ROOT, "bin/hangar.js"), "utf8").split("\n", 1)[0];
  const flags = (given ?? /^#!.*\bnode\b(.*)$/.exec(shebang)?.[1] ?? "").split(" ").filter(Boolean);
  const dir = process.env.BENCH_PROF_DIR;
  return [...flags, ...(dir ? ["--cpu-prof", "--cpu-prof-dir", resolve(dir)] : [])];
}

/** Starts `node bin/hangar.js dev --port 0 ...` and resolves once it prints where it listens. */
export async function startHangar(
  stamp: string,
  opts: { config?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<BenchServer> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const dataDir = mkdtempSync(join(tmpdir(), "hangar-bench-data-"));
  const logFile = join(RESULTS_DIR, `${stamp}-hangar.log`);
  const env: NodeJS.ProcessEnv = { ...process.env, ...SCHEMAS_OFF, ...opts.env };
  delete env.PORT;
  // The start waits for the graph threads' "ready" line (an info line), so that loading them is not measured.
  if (withGraphThreads(env) && /^(warn|error|fatal|silent)$/i.test(env.LOG_LEVEL ?? "")) {
    throw new Error(
      `LOG_LEVEL=${env.LOG_LEVEL} hides the line saying the graph threads are ready, which the bench waits for: ` +
        "use LOG_LEVEL=info, or HANGAR_GRAPH_THREADS=0",
    );
  }
  const t0 = performance.now();
  const { entry, output } = spawnLogged(
    process.execPath,
    [
      ...nodeFlags(),
      join(ROOT, "bin/hangar.js"),
      "dev",
      "--config",
      opts.config ?? join(EXAMPLES_DIR, "langgraph.json"),
      "--port",
      "0",
      "--host",
      "127.0.0.1",
      "--data-dir",
      dataDir,
      "--no-reload",
    ],
    { cwd: ROOT, env, logFile, dirs: [dataDir] },
  );
  try {
    const url = await waitListening(entry, output, withGraphThreads(env));
    return {
      name: "hangar",
      url,
      pid: entry.proc.pid!,
      pids: [entry.proc.pid!],
      logFile,
      logFiles: [logFile],
      startupMs: performance.now() - t0,
      stop: () => stopLive(entry),
    };
  } catch (err) {
    await stopLive(entry);
    throw new Error(`hangar failed to start: ${(err as Error).message}\n--- log tail ---\n${tail(output())}`);
  }
}

/** Starts a target's server(s) for one scenario. */
export function startTargetServer(name: TargetName, stamp: string): Promise<BenchServer> {
  if (name === "hangar") return startHangar(stamp);
  if (name === "hangar-aes") return startHangar(stamp, { env: AES_ENV });
  if (name === "peer") return startPeer(stamp);
  return startCluster(name, stamp);
}

// ---------- scale-out deployments (PostgreSQL + Redis) ----------

/** Quotes an SQL identifier. */
const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A PostgreSQL client on $DATABASE_URL (not connected yet). */
export function pgClient(): pg.Client {
  return new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 5_000 });
}

/** A Redis client on $REDIS_URL that fails at once instead of retrying (lazyConnect: call connect()). */
export function redisClient(): Redis {
  return new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
}

/** Deletes every Redis key under `prefix` (SCAN MATCH + DEL); returns how many. */
async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<number> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== "0");
  return deleted;
}

/** Drops a deployment's schema and Redis keys (its processes must be stopped already). */
export async function dropDeployment(d: Deployment): Promise<void> {
  const db = pgClient();
  const redis = redisClient();
  try {
    await db.connect();
    await db.query(`DROP SCHEMA IF EXISTS ${ident(d.schema)} CASCADE`);
    await redis.connect();
    await deleteRedisPrefix(redis, d.redisPrefix);
    deployments.delete(d);
  } finally {
    await db.end().catch(() => {});
    redis.disconnect();
  }
}

/** `dropDeployment` for the "exit" handler: in a child node process, bounded to 15 s. */
export function dropDeploymentsSync(list: Deployment[]): void {
  const script = `
    import pg from "pg";
    import { Redis } from "ioredis";
    const list = JSON.parse(process.argv[1]);
    const db = new pg.Client({ connectionString: ${JSON.stringify(DATABASE_URL)}, connectionTimeoutMillis: 5000 });
    const redis = new Redis(${JSON.stringify(REDIS_URL)}, { maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await db.connect();
      for (const d of list) {
        await db.query('DROP SCHEMA IF EXISTS "' + d.schema.replace(/"/g, '""') + '" CASCADE');
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", d.redisPrefix + "*", "COUNT", 1000);
          cursor = next;
          if (keys.length) await redis.del(...keys);
        } while (cursor !== "0");
      }
    } finally {
      await db.end().catch(() => {});
      redis.disconnect();
    }`;
  spawnSync(process.execPath, ["--input-type=module", "-e", script, JSON.stringify(list)], {
    cwd: ROOT,
    timeout: 15_000,
    stdio: "ignore",
  });
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

let staleChecked = false;

/**
 * Once per bench process: drops the schemas and Redis keys of bench deployments whose bench process no
 * longer exists (the pid is part of the name), e.g. after a SIGKILL. Never touches a live bench's.
 */
async function dropStaleDeployments(): Promise<void> {
  if (staleChecked) return;
  staleChecked = true;
  const stale = (name: string) => {
    const m = new RegExp(`^${SCHEMA_PREFIX}(\\d+)_`).exec(name);
    return m !== null && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]));
  };
  const db = pgClient();
  const redis = redisClient();
  try {
    await db.connect();
    const { rows } = await db.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)",
      [SCHEMA_PREFIX],
    );
    const schemas = rows.map((r) => r.nspname).filter(stale);
    for (const schema of schemas) await db.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
    await redis.connect();
    const prefixes = new Set<string>();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${SCHEMA_PREFIX}*`, "COUNT", 1000);
      cursor = next;
      for (const k of keys) {
        const prefix = k.slice(0, k.indexOf(":") + 1);
        if (prefix && stale(prefix)) prefixes.add(prefix);
      }
    } while (cursor !== "0");
    for (const prefix of prefixes) await deleteRedisPrefix(redis, prefix);
    if (schemas.length || prefixes.size) {
      process.stderr.write(
        `  (dropped ${schemas.length} schema(s) and ${prefixes.size} Redis prefix(es) left by dead bench runs)\n`,
      );
    }
  } finally {
    await db.end().catch(() => {});
    redis.disconnect();
  }
}

let deploymentSeq = 0;

/**
 * Starts a scale-out deployment on a fresh schema + Redis prefix: one `hangar serve --mode api` process
 * (the URL the client uses) and PG_WORKERS[name] `--mode worker` processes, all at once (migrations run
 * under an advisory lock), each in its own process group and log file. `stop` stops them all, then drops
 * the schema and the Redis keys.
 */
export async function startCluster(name: PgTarget, stamp: string): Promise<BenchServer> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await dropStaleDeployments().catch((err) => {
    throw new Error(`${name}: PostgreSQL/Redis not usable (${DATABASE_URL}, ${REDIS_URL}): ${err.message}`);
  });
  const schema = `${SCHEMA_PREFIX}${process.pid}_${++deploymentSeq}_${randomBytes(3).toString("hex")}`;
  const deployment: Deployment = { schema, redisPrefix: `${schema}:` };
  deployments.add(deployment);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...SCHEMAS_OFF,
    DATABASE_URL,
    REDIS_URL,
    HANGAR_DATABASE_SCHEMA: schema,
    HANGAR_REDIS_PREFIX: deployment.redisPrefix,
    ...(name.endsWith("-aes") ? AES_ENV : {}),
  };
  delete env.PORT;
  const roles = ["api", ...Array.from({ length: PG_WORKERS[name] }, (_, i) => `worker${i + 1}`)];
  const t0 = performance.now();
  const procs = roles.map((role) => {
    const logFile = join(RESULTS_DIR, `${stamp}-${name}-${role}.log`);
    const spawned = spawnLogged(
      process.execPath,
      [
        ...nodeFlags(),
        join(ROOT, "bin/hangar.js"),
        "serve",
        "--config",
        join(EXAMPLES_DIR, "langgraph.json"),
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--mode",
        role === "api" ? "api" : "worker",
      ],
      { cwd: ROOT, env, logFile, dirs: [] },
    );
    return { role, logFile, ...spawned };
  });
  const stop = async () => {
    await Promise.all(procs.map((p) => stopLive(p.entry)));
    // A failure here is retried by the "exit" handler (the deployment stays registered).
    await dropDeployment(deployment).catch((err) =>
      process.stderr.write(`  ${name}: dropping schema ${schema} failed: ${(err as Error).message}\n`),
    );
  };
  try {
    const urls = await Promise.all(
      procs.map((p) => waitListening(p.entry, p.output, p.role !== "api" && withGraphThreads(env))),
    );
    return {
      name,
      url: urls[0],
      pid: procs[0].entry.proc.pid!,
      pids: procs.map((p) => p.entry.proc.pid!),
      logFile: procs[0].logFile,
      logFiles: procs.map((p) => p.logFile),
      details: `1 api + ${PG_WORKERS[name]} worker process(es), PostgreSQL + Redis`,
      schema,
      startupMs: performance.now() - t0,
      stop,
    };
  } catch (err) {
    const tails = procs.map((p) => `--- ${p.role} log tail ---\n${tail(p.output(), 15)}`).join("\n");
    await stop().catch(() => {});
    throw new Error(`${name} failed to start: ${(err as Error).message}\n${tails}`);
  }
}

/** Path of the `langgraphjs` CLI entry, read from the package's "bin" field. */
export function peerCliEntry(): string {
  const pkgDir = join(ROOT, "node_modules/@langchain/langgraph-cli");
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf-8")) as {
    bin: string | Record<string, string>;
  };
  const bin = typeof pkg.bin === "string" ? pkg.bin : (pkg.bin.langgraphjs ?? Object.values(pkg.bin)[0]);
  return join(pkgDir, bin);
}

/** Copies examples/ into a temp dir and starts the official dev server on it. Retries on port clashes. */
export async function startPeer(stamp: string): Promise<BenchServer> {
  let lastErr: Error | undefined;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await startPeerOnce(stamp);
    } catch (err) {
      lastErr = err as Error;
      if (!/EADDRINUSE/.test(lastErr.message)) break;
    }
  }
  throw lastErr;
}

async function startPeerOnce(stamp: string): Promise<BenchServer> {
  const base = mkdtempSync(join(tmpdir(), "hangar-bench-peer-"));
  const project = join(base, "examples");
  cpSync(EXAMPLES_DIR, project, {
    recursive: true,
    filter: (src) => !/[\\/](\.langgraph_api|\.hangar|node_modules)$/.test(src),
  });
  symlinkSync(join(ROOT, "node_modules"), join(base, "node_modules"), "dir");
  // The CLI appends `.langgraph_api` to the project's .gitignore if missing; keep it quiet (it is a copy).
  writeFileSync(join(project, ".gitignore"), ".langgraph_api\n");
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  mkdirSync(RESULTS_DIR, { recursive: true });
  const logFile = join(RESULTS_DIR, `${stamp}-peer.log`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    BROWSER: "none",
    LANGSMITH_TRACING: "false",
    LANGCHAIN_TRACING_V2: "false",
  };
  delete env.PORT;
  const t0 = performance.now();
  const { entry, output } = spawnLogged(
    process.execPath,
    [
      peerCliEntry(),
      "dev",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--config",
      join(project, "langgraph.json"),
      "--no-browser",
      "--no-reload",
    ],
    { cwd: project, env, logFile, dirs: [base] },
  );
  try {
    await Promise.race([
      exitPromise(entry.proc),
      (async () => {
        const deadline = Date.now() + 90_000;
        while (Date.now() < deadline) {
          const out = output();
          if (/EADDRINUSE/.test(out)) throw new Error(`port ${port} taken (EADDRINUSE)`);
          if (/Failed to launch server/.test(out)) throw new Error("CLI reported 'Failed to launch server'");
          // Only trust /ok once *our* server listens: another process could have taken the freed port.
          // Proof: our process group owns the listening socket (Linux /proc), else the info-level log line.
          const owned = ownsListeningPort(entry.proc.pid!, port);
          const ours = owned ?? /Server running at/.test(out);
          if (ours && (await ok(url))) return;
          await sleep(200);
        }
        throw new Error("timed out after 90 s waiting for the server to listen and answer GET /ok");
      })(),
    ]);
    return {
      name: "peer",
      url,
      pid: entry.proc.pid!,
      pids: [entry.proc.pid!],
      logFile,
      logFiles: [logFile],
      startupMs: performance.now() - t0,
      stop: () => stopLive(entry),
    };
  } catch (err) {
    await stopLive(entry);
    throw new Error(`peer failed to start: ${(err as Error).message}\n--- log tail ---\n${tail(output())}`);
  }
}

/**
 * Whether a process of group `pgid` holds the socket listening on 127.0.0.1/0.0.0.0:`port`, read from
 * /proc; undefined where /proc is unavailable (then the caller falls back to the server's log).
 */
export function ownsListeningPort(pgid: number, port: number): boolean | undefined {
  let tables: string[];
  try {
    tables = ["/proc/net/tcp", "/proc/net/tcp6"].map((f) => readFileSync(f, "utf-8"));
  } catch {
    return undefined;
  }
  const portHex = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const line of tables.join("\n").split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length > 9 && f[1].endsWith(`:${portHex}`) && f[3] === "0A") inodes.add(`socket:[${f[9]}]`);
  }
  if (inodes.size === 0) return false;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf-8");
      const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
      if (pgrp !== pgid) continue;
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
        } catch {
          // fd closed meanwhile
        }
      }
    } catch {
      // process gone meanwhile
    }
  }
  return false;
}

async function ok(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

async function waitOk(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await ok(url)) return;
    await sleep(100);
  }
  throw new Error(`GET ${url}/ok did not answer within ${timeoutMs} ms`);
}

function tail(text: string, lines = 30): string {
  const ansi = new RegExp(String.fromCharCode(27) + "\\[[0-9;]*m", "g");
  return text.replace(ansi, "").split("\n").slice(-lines).join("\n");
}
