// Test harness: starts an Agent Server on a free loopback port, in this process by default (`startServer`, as
// `hangar dev` does), or as the real CLI process (`process: true`: `hangar dev`, or `hangar serve`) for tests
// about the process. In the "postgres" vitest project (HANGAR_TEST_BACKEND=postgres) it runs on PostgreSQL +
// Redis, as `hangar serve` does: each data dir then stands for a deployment (schema + Redis prefix derived
// from its path), dropped after the file.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { SERVER_NODE_FLAGS } from "../../src/control-plane/runtime/local/proc.ts";
import { afterAll, beforeAll } from "vitest";
import { announce } from "../../src/cli/dev.ts";
import { serveBackend } from "../../src/cli/serve.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { loadSettings } from "../../src/lib/settings.ts";
import { startServer, type ClusterBackend } from "../../src/server.ts";
import { BACKEND, clusterEnv, clusterTargetFor, dropCluster, type ClusterTarget } from "./backend.ts";

export { BACKEND, type Backend, type ClusterTarget } from "./backend.ts";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = join(ROOT, "bin/hangar.js");
export const EXAMPLE_CONFIG = join(ROOT, "examples/langgraph.json");
/** The schema cache shared by the servers of the test run (see baseEnv). */
export const TEST_SCHEMAS_CACHE = join(ROOT, "node_modules/.cache/hangar-test-schemas");

export interface HangarProcess {
  url: string;
  client: Client;
  dataDir: string;
  /** The CLI process, when started with `process: true`; absent for a server in this process. */
  proc?: ChildProcess;
  /** On the postgres backend: where its data lives (share it with `startHangar({ cluster })`). */
  cluster?: ClusterTarget;
  output: () => string;
  /** Graceful stop (SIGTERM and wait for exit; in this process: the server closes). */
  stop: () => Promise<void>;
  /** SIGKILL and wait for exit (a server process only: start it with `process: true`). */
  kill: () => Promise<void>;
}

/** A server started as a CLI process (`process: true`). */
export interface SpawnedHangar extends HangarProcess {
  proc: ChildProcess;
}

export interface StartOptions {
  /**
   * Run the real CLI as a child process (what the test is about is the process: kills, signals, its output
   * and exit code, env files `dev` loads, reload). Implied by `args` and `mode`. Default: in this process.
   */
  process?: boolean;
  config?: string;
  /** The CLI process's working directory (with `process`; default the repository's root): a relative `config` is in it. */
  cwd?: string;
  dataDir?: string;
  /** Added to the environment; a key set to undefined is removed from it. */
  env?: Record<string, string | undefined>;
  args?: string[];
  /** Node flags added to the server process's own (with `process`), e.g. `--inspect=127.0.0.1:0`. */
  nodeFlags?: string[];
  /** The CLI command (with `process`): `dev` (default, started with --no-reload) or `serve`. Always `serve` on postgres. */
  command?: "dev" | "serve";
  /** `serve --mode` (api, worker or all); not passed when absent. */
  mode?: "api" | "worker" | "all";
  /**
   * Postgres backend: the deployment to join (e.g. `clusterOf(other)`), so several processes share one
   * schema and Redis prefix. Default: the one derived from the data dir.
   */
  cluster?: ClusterTarget;
}

/** The tuning of postgres-backend servers in tests (a test's own `env` overrides them). */
export const POSTGRES_TEST_KNOBS: Record<string, string> = {
  HANGAR_LEASE_SECONDS: "3",
  HANGAR_QUEUE_POLL_MS: "200",
  HANGAR_SHUTDOWN_GRACE_SECONDS: "2",
  HANGAR_CONNECT_TIMEOUT_SECONDS: "5",
  // Two pools of this size per server (queries, checkpoints): with the default 10, two test runs side by side on
  // one PostgreSQL (max_connections 100) ran out of connections.
  HANGAR_DATABASE_POOL_SIZE: "5",
};

/** Env that selects the backend: a server or CLI run gets it only when the harness or the test sets it. */
const BACKEND_ENV = ["DATABASE_URL", "REDIS_URL", "HANGAR_DATABASE_SCHEMA", "HANGAR_REDIS_PREFIX"];

function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of BACKEND_ENV) delete env[k];
  delete env.PORT;
  // Pretty logs, also from `serve` (JSON by default): tests read its human lines, quotes unescaped. Schemas are
  // extracted when asked for, not ahead (a compile of every graph per CLI server, which few tests ask for:
  // test/e2e/schemas.test.ts turns it on where it is what is tested), and kept in one cache for the whole run
  // (and the next): every server has a data dir of its own, and without it each file asking for a fixture's
  // schemas compiled its graphs again (minutes of the suite). Entries hold only while their sources are unchanged.
  // Graph threads (on by default: 2) off unless a test turns them on, or the run does (HANGAR_GRAPH_THREADS=2 npm
  // test): each thread loads the fixture's graphs again, CPU that hundreds of servers in the suite would pay; the
  // files about threads (graph-threads, run-timeout, langchain-agents) turn them on.
  return {
    ...env,
    HANGAR_GRAPH_THREADS: env.HANGAR_GRAPH_THREADS ?? "0",
    LOG_FORMAT: "pretty",
    HANGAR_SCHEMAS_AHEAD: "false",
    HANGAR_SCHEMAS_CACHE_DIR: env.HANGAR_SCHEMAS_CACHE_DIR ?? TEST_SCHEMAS_CACHE,
  };
}

/** A server of this test file still running: how to end it at once, and its schema on postgres. */
interface Live {
  halt: () => Promise<void>;
  schema?: string;
}

/** Servers of this test file still running, and the deployments used. */
const live = new Set<Live>();
const deployments = new Map<string, ClusterTarget>();

/** Drops a deployment once no server of this file runs on it any more. */
async function dropIfUnused(target: ClusterTarget): Promise<void> {
  if ([...live].some((l) => l.schema === target.schema)) return;
  if (deployments.delete(target.schema)) await dropCluster(target);
}

/**
 * After each test file (registered by test/helpers/file-cleanup.ts, a setup file, so it runs after the file's own
 * afterAll hooks): whatever a test left running is ended (killed, or closed in this process), then on postgres
 * every schema and Redis prefix it used dropped.
 */
export async function endFileServers(): Promise<void> {
  await Promise.all([...live].map((l) => l.halt()));
  live.clear();
  for (const target of deployments.values()) await dropCluster(target);
  deployments.clear();
}

/** The deployment (schema, Redis prefix, URLs) of a server started on the postgres backend. */
export function clusterOf(server: HangarProcess): ClusterTarget {
  if (!server.cluster) throw new Error(`clusterOf: the server runs on the ${BACKEND} backend`);
  return server.cluster;
}

/** Creates a fresh temporary data directory; removed by `cleanupDir`. */
export function tempDir(prefix = "hangar-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cleanupDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

function waitExit(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((res) => proc.once("exit", () => res()));
}

/**
 * Starts a server on a free port of 127.0.0.1 and resolves once it listens: in this process (`startServer`,
 * embedded in the data dir, or on the data dir's PostgreSQL + Redis deployment on postgres), or with
 * `process: true` the CLI, `hangar dev --port 0 --data-dir <dir>` (embedded) or `hangar serve --port 0`
 * (postgres).
 */
export async function startHangar(opts: StartOptions & { process: true }): Promise<SpawnedHangar>;
export async function startHangar(opts?: StartOptions): Promise<HangarProcess>;
export async function startHangar(opts: StartOptions = {}): Promise<HangarProcess> {
  const dataDir = opts.dataDir ?? tempDir();
  const cluster = BACKEND === "postgres" ? (opts.cluster ?? clusterTargetFor(dataDir)) : undefined;
  const env = cluster
    ? { ...baseEnv(), ...POSTGRES_TEST_KNOBS, ...clusterEnv(cluster), ...opts.env }
    : { ...baseEnv(), ...opts.env };
  if (cluster) deployments.set(cluster.schema, cluster);
  const spawned = opts.process || opts.args?.length || opts.mode;
  return spawned ? spawnHangar(opts, dataDir, env, cluster) : inProcess(opts, dataDir, env, cluster);
}

/**
 * tsx's CommonJS loader, as the CLI registers it (src/cli/typescript.ts): a CommonJS project's graphs
 * `require()` TypeScript. (The test runner already loads ES modules and TypeScript through its own loader.)
 */
let cjsTypeScript: Promise<void> | undefined;
const requireTypeScript = () =>
  (cjsTypeScript ??= import("tsx/cjs/api").then(({ register }) => void register()));

/** The server in this process, logging into a buffer (`output()`) as the CLI would to its terminal. */
async function inProcess(
  opts: StartOptions,
  dataDir: string,
  env: Record<string, string | undefined>,
  cluster: ClusterTarget | undefined,
): Promise<HangarProcess> {
  await requireTypeScript();
  let out = "";
  const settings = loadSettings(env);
  const log = createLogger({
    level: settings.logging.level,
    format: settings.logging.format ?? (opts.command === "serve" ? "json" : "pretty"),
    destination: { write: (line: string) => void (out += line) },
  });
  let backend: ClusterBackend | undefined;
  if (cluster) {
    const b = serveBackend(settings.cluster, "all");
    if (typeof b === "string") throw new Error(`hangar serve: ${b}`);
    backend = b;
  }
  const server = await startServer({
    configPath: resolve(ROOT, opts.config ?? EXAMPLE_CONFIG),
    dataDir: backend ? undefined : dataDir,
    cluster: backend,
    host: "127.0.0.1",
    port: 0,
    logger: log,
    env,
  }).catch((e: Error) => {
    throw new Error(`hangar failed to start: ${e.message}\n${out}`, { cause: e });
  });
  announce(log, server, backend);
  let closed: Promise<void> | undefined;
  const me: Live = { halt: () => (closed ??= server.close()), schema: cluster?.schema };
  live.add(me);
  const stop = async () => {
    await me.halt();
    live.delete(me);
  };
  return {
    url: server.url,
    dataDir,
    cluster,
    client: new Client({ apiUrl: server.url }),
    output: () => out,
    stop,
    kill: () => {
      throw new Error("kill(): this server runs in the test's process; start it with { process: true }");
    },
  };
}

/** The CLI as a child process: `hangar dev --no-reload` or `hangar serve` (always `serve` on postgres). */
async function spawnHangar(
  opts: StartOptions,
  dataDir: string,
  env: Record<string, string | undefined>,
  cluster: ClusterTarget | undefined,
): Promise<SpawnedHangar> {
  const command = cluster ? "serve" : (opts.command ?? "dev");
  const args = [
    BIN,
    command,
    "--config",
    opts.config ?? EXAMPLE_CONFIG,
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    ...(cluster ? [] : ["--data-dir", dataDir]),
    ...(command === "dev" ? ["--no-reload"] : []),
    ...(opts.mode ? ["--mode", opts.mode] : []),
    ...(opts.args ?? []),
  ];
  // With the node flags the `hangar` command gives itself (bin/hangar.js's first line): as users run it.
  const proc = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...(opts.nodeFlags ?? []), ...args], {
    cwd: opts.cwd ?? ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const me: Live = {
    halt: () => {
      proc.kill("SIGKILL");
      return waitExit(proc);
    },
    schema: cluster?.schema,
  };
  live.add(me);
  proc.once("exit", () => live.delete(me));
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((res, rej) => {
    const onData = () => {
      // The end of the line in pretty logs, of the JSON entry's "msg" with LOG_FORMAT=json (serve's default).
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        proc.stdout!.off("data", onData);
        res(m[1]);
      }
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", (code) => rej(new Error(`hangar exited with ${code} before listening:\n${out}`)));
  });
  return {
    url,
    dataDir,
    proc,
    cluster,
    client: new Client({ apiUrl: url }),
    output: () => out,
    stop: async () => {
      proc.kill("SIGTERM");
      await waitExit(proc);
    },
    kill: async () => {
      proc.kill("SIGKILL");
      await waitExit(proc);
    },
  };
}

/**
 * Runs the CLI to completion (for error cases) and returns its exit code and output. The backend env
 * (DATABASE_URL, REDIS_URL, ...) is only what `env` gives, whatever the project.
 */
export function runHangar(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((res) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...baseEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    proc.once("exit", (code) => res({ code, output: out }));
  });
}

/** An SDK client for `url` that does not retry: a failing request must surface at once, not after back-off. */
export function noRetryClient(url: string): Client {
  return new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
}

export interface HangarHandle {
  /** The running server; only available inside tests and hooks that run after the `beforeAll`. */
  readonly server: HangarProcess;
  /** A no-retry SDK client for `server`. */
  readonly client: Client;
}

/**
 * Starts a server in `beforeAll` and stops it (and removes its data dir, and on postgres drops its
 * schema and Redis keys) in `afterAll` of the current file or describe block. Returns getters for the
 * server and a no-retry client.
 */
export function useHangar(opts: StartOptions = {}): HangarHandle {
  let server: HangarProcess | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    server = await startHangar(opts);
    client = noRetryClient(server.url);
  });
  afterAll(async () => {
    if (server) {
      await server.stop();
      cleanupDir(server.dataDir);
      if (server.cluster) await dropIfUnused(server.cluster);
    }
  });
  const notStarted = () =>
    new Error("useHangar: the server is not started yet (use it inside tests or hooks)");
  return {
    get server() {
      if (!server) throw notStarted();
      return server;
    },
    get client() {
      if (!client) throw notStarted();
      return client;
    },
  };
}
