// Composes an Agent Server: project config, storage (embedded SQLite, or PostgreSQL + Redis for scale-out),
// graphs, run manager, HTTP app; listens.
import { homedir } from "node:os";
import { join } from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { buildApp } from "./api/app.js";
import { Metrics } from "./api/metrics.js";
import { Guard } from "./api/guard.js";
import { loadUserApp } from "./api/http-config.js";
import { Authorizer } from "./auth/auth.js";
import { applyEnv, assistantDefaultsFromEnv, loadProjectConfig } from "./lib/settings/project.js";
import type { CheckpointerConfig } from "./lib/settings/sections.js";
import { loadSettings, type Env, type Settings } from "./lib/settings.js";
import { ensureSystemAssistants } from "./graphs/assistants.js";
import { schemasOf } from "./graphs/introspect.js";
import { GraphRegistry } from "./graphs/registry.js";
import { bundleUi } from "./graphs/ui-bundle.js";
import { CronScheduler } from "./runs/crons.js";
import { InProcessRunner, type GraphRunner } from "./runs/graph-runner.js";
import { GraphThreadPool, type GraphThreadBackend } from "./runs/graph-threads/pool.js";
import {
  encryptionSpecOf,
  loadCipher,
  type EncryptionSpec,
  type StorageCipher,
} from "./storage/encryption/index.js";
import { RunEngine } from "./runs/engine.js";
import { ThreadSweeper } from "./runs/sweeper.js";
import { ThreadStateService } from "./runs/thread-state.js";
import type { Synchronous } from "./storage/sqlite/db.js";
import { loadStoreIndex } from "./storage/store-index.js";
import type { Storage } from "./storage/types.js";
import type { Broker } from "./streams/channel.js";
import { configureStreams } from "./streams/limits.js";
import { StartupError } from "./lib/errors.js";
import { openEmbeddedBackend } from "./backends/embedded.js";
import type { Backend } from "./backends/types.js";
import { protectSecretEnv, reconfigureLogging, rootLogger, type Logger } from "./lib/logger.js";
import { fastifyLogging, listen, logRequests } from "./lib/request-log.js";
import { safeEqual } from "./lib/safe-equal.js";
import { VERSION } from "./lib/version.js";
import { webhookPolicy, type AddressPolicy } from "./runs/net-policy.js";

export { VERSION } from "./lib/version.js";
export { StartupError } from "./lib/errors.js";

/** The scale-out backend: PostgreSQL for storage and the run queue, Redis for event logs and signals. */
export interface ClusterBackend {
  databaseUrl: string;
  redisUrl: string;
  /** PostgreSQL schema of this deployment (default "public"). */
  schema: string;
  /** Prefix of this deployment's Redis keys (default "hangar:"). */
  redisPrefix: string;
  /** api: serve the HTTP API only; worker: execute runs only; all: both. */
  mode: "api" | "worker" | "all";
}

export interface ServerOptions {
  configPath: string;
  dataDir?: string;
  /** Given: run on PostgreSQL + Redis; absent: embedded SQLite in dataDir. */
  cluster?: ClusterBackend;
  host: string;
  port: number;
  synchronous?: Synchronous;
  /** Runs executing at once (default 10). */
  nJobsPerWorker?: number;
  /** Serve the web console at /console (default: the HANGAR_CONSOLE setting). */
  console?: boolean;
  /**
   * Extract the graphs' schemas from their types in the background once listening (default: HANGAR_SCHEMAS_AHEAD of
   * the server's settings, the project's env applied); otherwise on the first request that needs them.
   */
  warmSchemas?: boolean;
  /**
   * On the embedded backend, let running runs finish for HANGAR_SHUTDOWN_GRACE_SECONDS when the server closes (as
   * `serve` does, and the scale-out backend always); otherwise (`dev`, which restarts on every save) they stop at
   * once and resume from their last checkpoint at the next start.
   */
  drainOnClose?: boolean;
  /** Where the server logs; default the process's logger (`rootLogger()`). */
  logger?: Logger;
  /**
   * The environment this server's settings are parsed from (default process.env); the project's env (its
   * `.env`) fills what it does not set. Several servers in one process each get their own settings.
   */
  env?: Env;
}

export interface RunningServer {
  url: string;
  graphs: string[];
  /** Where the data lives: the embedded data directory, or the database (password hidden) and schema. */
  dataDir: string;
  recovered: number;
  /** The web console is served at /console/. */
  console: boolean;
  close: () => Promise<void>;
}

/**
 * checkpointer.ttl of langgraph.json: {strategy, default_ttl (minutes), sweep_interval_minutes};
 * HANGAR_SWEEP_INTERVAL_MS overrides the sweep interval (tests).
 */
function checkpointerTtl(checkpointer: CheckpointerConfig | null | undefined, sweepIntervalMs?: number) {
  const ttl = checkpointer?.ttl ?? {};
  const sweepMs = sweepIntervalMs ?? Math.max(1, ttl.sweep_interval_minutes ?? 5) * 60_000;
  const strategy = ttl.strategy ?? "delete";
  return { sweepMs, default: ttl.default_ttl ? { ttl: ttl.default_ttl, strategy } : undefined };
}

/** Starts the graph threads of a backend, or none (runs then execute on the API's thread). */
type RunnerFor = (access: GraphThreadBackend, graphs: GraphRegistry) => GraphRunner | undefined;

/** The backend wired to its run engine: what the rest of the start and the close use. */
interface Wired {
  storage: Storage;
  broker: Broker;
  graphs: GraphRegistry;
  runs: RunEngine;
  /** Starts what runs in the background (after the HTTP server listens); returns how many runs it took up. */
  start: () => Promise<number>;
  /** Stops taking runs and lets running ones end (or hands them back). */
  drain: () => Promise<void>;
  where: string;
  /** Whether this process executes runs (and so runs the cron scheduler and sweepers). */
  worker: boolean;
  /** Whether this process serves the HTTP API. */
  api: boolean;
}

/** Opens the backend the options name: PostgreSQL + Redis, or embedded SQLite in `dataDir`. */
async function openBackend(
  opts: ServerOptions,
  env: Settings,
  dataDir: string,
  storeIndex: Awaited<ReturnType<typeof loadStoreIndex>>,
  cipher: StorageCipher | null,
  log: Logger,
): Promise<Backend> {
  const resumableTtlMs = env.server.resumableTtlSeconds * 1000;
  const cluster = opts.cluster;
  if (!cluster) {
    return openEmbeddedBackend({
      dataDir,
      synchronous: opts.synchronous ?? (env.server.sqliteSync satisfies Synchronous),
      storeIndex,
      resumableTtlMs,
      threadLogsCacheBytes: env.server.threadLogsCacheBytes,
      cipher,
      exclusive: env.server.recoverOnStart,
    });
  }
  // Loaded only here: an embedded server never loads pg, ioredis or the PostgreSQL checkpointer.
  const { openScaleOutBackend } = await import("./backends/scale-out.js");
  const { connectTimeoutSeconds, poolSize, preparedStatements } = env.cluster;
  return openScaleOutBackend({
    databaseUrl: cluster.databaseUrl,
    redisUrl: cluster.redisUrl,
    schema: cluster.schema,
    redisPrefix: cluster.redisPrefix,
    storeIndex,
    applicationName: `hangar ${cluster.mode} ${process.pid}`,
    poolSize,
    preparedStatements,
    connectTimeoutMs: connectTimeoutSeconds * 1000,
    resumableTtlMs,
    log,
    cipher,
  });
}

/** The backend's run engine: graphs loaded, graph threads started where runs execute. */
async function wire(
  backend: Backend,
  opts: ServerOptions,
  env: Settings,
  webhooks: AddressPolicy,
  graphsFor: (storage: Storage) => Promise<GraphRegistry>,
  runnerFor: RunnerFor,
  log: Logger,
): Promise<Wired> {
  const { storage, queue, broker } = backend;
  const mode = opts.cluster?.mode ?? "all";
  const worker = mode !== "api";
  const graphs = await graphsFor(storage);
  // Graph threads only where runs execute (on PostgreSQL they share two more pools' worth of connections: runnerFor).
  const runner = worker ? runnerFor(backend.graphThreads, graphs) : undefined;
  // The embedded queue is this process's alone: no leases to renew, and the runs still running after the grace
  // period (none under `dev`) stop with the process and resume at the next start. A shared queue's runs finish for
  // the grace period, then go back to the queue for another worker.
  const shared = queue.shared ? env.cluster : undefined;
  // A server the control plane runs (HANGAR_INTERNAL_TOKEN) does not drain: its successor, started beside it on the
  // same data, takes its runs up once told it stopped, and clients already talk to the successor.
  const drain = shared !== undefined || (opts.drainOnClose === true && !env.server.internalToken);
  const runs = new RunEngine(storage, queue, graphs, broker, log, {
    worker,
    maxConcurrent: opts.nJobsPerWorker ?? env.server.jobsPerWorker ?? 10,
    maxAttempts: env.server.maxAttempts,
    leaseMs: (shared?.leaseSeconds ?? 0) * 1000,
    pollMs: shared?.queuePollMs ?? 0,
    graceMs: drain ? env.cluster.shutdownGraceSeconds * 1000 : 0,
    settleMs: shared ? undefined : 2_000,
    webhooks,
    apiUrl: env.server.apiUrl,
    runner,
    runTimeoutMs: env.server.runTimeoutSeconds * 1000,
  });
  return {
    storage,
    broker,
    graphs,
    runs,
    start: async () => {
      await runs.start();
      // A successor revision started beside its predecessor on the same data (the control plane's switch) must
      // not take over the predecessor's runs while it still runs them: it recovers when told.
      return env.server.recoverOnStart ? runs.recover() : 0;
    },
    drain: async () => {
      await runs.shutdown();
      await runner?.close();
    },
    where: backend.where,
    worker,
    api: mode !== "worker",
  };
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  let log = opts.logger ?? rootLogger();
  // The official image's variables may give langgraph.json's sections (LANGSERVE_GRAPHS, ...), read from the
  // environment the server starts in; its variables that Hangar ignores are among the warnings.
  const project = loadProjectConfig(opts.configPath, opts.env ?? process.env);
  for (const w of project.warnings) log.warn(`hangar: warning: ${w}`);
  // Graphs read the project's env from process.env (what is set already wins).
  applyEnv(project.env);
  const serverEnv: Env = opts.env ? { ...project.env, ...opts.env } : process.env;
  protectSecretEnv(); // the project's .env may bring API keys
  if (opts.env) protectSecretEnv(serverEnv);
  // This server's settings, parsed once the project's env is applied (it may set HANGAR_* too); a malformed
  // one stops the start. Passed to what needs them, never installed process-wide.
  const env = loadSettings(serverEnv);
  let webhooks: AddressPolicy;
  try {
    // LOG_LEVEL or LOG_FORMAT in the project's .env apply to the process's logger (not to one given by an embedder).
    if (!opts.logger && ("LOG_LEVEL" in project.env || "LOG_FORMAT" in project.env)) {
      log = reconfigureLogging(env.logging);
    }
    webhooks = webhookPolicy(env.webhooks); // a malformed HANGAR_WEBHOOK_ALLOW_ADDRESSES stops the start, naming it
    void env.server;
    if (opts.cluster || opts.drainOnClose) void env.cluster;
  } catch (e) {
    throw new StartupError((e as Error).message);
  }
  // What a stream holds for a client that does not read, and how long it waits for it (then drops it).
  configureStreams({
    bufferBytes: env.server.streamBufferBytes,
    stallMs: env.server.streamStallSeconds * 1000,
  });
  const assistantDefaults = assistantDefaultsFromEnv(env.server.langgraphConfig);
  // Await LangChain callbacks inline: backgrounded ones can deliver the last token after the run ended.
  process.env.LANGCHAIN_CALLBACKS_BACKGROUND ??= "false";
  const dataDir = opts.dataDir ?? join(project.projectDir, ".hangar");
  const storeIndex = await loadStoreIndex(project.projectDir, project.raw.store);
  const graphsFor = async (storage: Storage) => {
    const graphs = new GraphRegistry(storage.checkpointer, storage.store, log);
    await graphs.loadAll(project.graphs);
    for (const w of graphs.warnings) log.warn(`hangar: warning: ${w}`);
    await ensureSystemAssistants(storage, graphs, assistantDefaults);
    return graphs;
  };
  // Encryption at rest (LANGGRAPH_AES_KEY): a bad key stops the start, naming the variable.
  const encryption: EncryptionSpec = {
    ...encryptionSpecOf(env.server),
    customPath: project.raw.encryption?.path,
    projectDir: project.projectDir,
  };
  const cipher = await loadCipher(encryption).catch((e: Error) => {
    throw e instanceof StartupError ? e : new StartupError(e.message);
  });
  // Graph threads (HANGAR_GRAPH_THREADS), started once the backend is open and the graphs loaded here; they load the
  // graphs in the background (runs wait for one ready). None: runs execute on this thread.
  const runnerFor: RunnerFor = (access, graphs) => {
    const threads = env.server.graphThreads;
    if (!threads) return undefined;
    return new GraphThreadPool({
      threads,
      projectDir: project.projectDir,
      graphs: project.graphs,
      store: project.raw.store,
      // On PostgreSQL the threads share HANGAR_DATABASE_POOL_SIZE per pool between them (at least 2 each), so a
      // worker holds about 4 x that many connections whatever the number of threads.
      backend:
        access.kind === "postgres"
          ? { ...access, poolSize: Math.max(2, Math.ceil(access.poolSize / threads)) }
          : access,
      encryption,
      log,
      cancelGraceMs: env.server.graphCancelGraceSeconds * 1000,
      fallback: new InProcessRunner(graphs),
    });
  };
  const opened = await openBackend(opts, env, dataDir, storeIndex, cipher, log);
  // A start that fails (a graph's missing export, a port in use) leaves behind no data directory it created
  // (Backend.abandon); a failure to clean up never hides the start's own error.
  const abandon = () =>
    opened
      .abandon()
      .catch((e: Error) => log.warn(`hangar: cleaning up after the failed start: ${e.message}`));
  const backend = await wire(opened, opts, env, webhooks, graphsFor, runnerFor, log).catch(async (e) => {
    await abandon();
    throw e;
  });
  const { storage, graphs, broker, runs } = backend;
  let app: FastifyInstance | undefined;
  try {
    const ttlConfig = checkpointerTtl(project.raw.checkpointer, env.server.sweepIntervalMs);
    const http = project.raw.http ?? {};
    const consoleOn = opts.console ?? env.server.console;
    const auth = await Authorizer.load(project.projectDir, project.raw.auth, env.server.apiKeys);
    if (auth.custom && env.server.apiKeys.length && backend.api) {
      log.warn(
        "hangar: warning: HANGAR_API_KEYS is ignored: langgraph.json's auth.path authenticates every request (its " +
          "authenticate handler may check the x-api-key header itself)",
      );
    }
    const guard = new Guard(auth, storage);
    const metrics = new Metrics(() => runs.stats());
    runs.onFinished((status) => metrics.runsFinished.labels(status).inc());
    const threadState = new ThreadStateService(
      storage,
      graphs,
      (id) => runs.isBusy(id),
      env.server.stateCacheBytes,
    );
    app = backend.api
      ? await buildApp(
          {
            storage,
            graphs,
            runs,
            threadState,
            broker,
            metrics,
            guard,
            defaultTtl: ttlConfig.default,
            http,
            userApp: await loadUserApp(project.projectDir, http.app),
            ui: await bundleUi(project.projectDir, project.raw.ui, project.raw.ui_config),
            webhooks,
            version: VERSION,
            console: consoleOn,
            encryptionScoped: Boolean(encryption.customPath),
          },
          log,
        )
      : workerApp(metrics, log);
    // Set once the schedulers exist: a successor revision starts them only when told to recover.
    const afterRecover = { run: () => {} };
    internalRoutes(app, backend, env.server.internalToken, () => afterRecover.run());
    try {
      await listen(app, { host: opts.host, port: opts.port });
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      if (err.code === "EADDRINUSE") {
        throw new StartupError(
          `port ${opts.port} on ${opts.host} is already in use; choose another with --port or PORT`,
        );
      }
      if (err.code === "EACCES")
        throw new StartupError(`no permission to listen on ${opts.host}:${opts.port}`);
      throw e;
    }
    if (backend.api) {
      schemasOf(graphs).useCache(env.server.schemasCacheDir ?? schemaCacheDir(opts, dataDir));
      if (opts.warmSchemas ?? env.server.schemasAhead) schemasOf(graphs).warm();
    }
    const recovered = await backend.start();
    const crons = new CronScheduler(storage, runs, log, broker);
    const sweeper = new ThreadSweeper(storage, broker, (id) => runs.isBusy(id), log);
    let background = false;
    const startBackground = () => {
      if (background || !backend.worker) return;
      background = true;
      crons.start();
      sweeper.start(ttlConfig.sweepMs);
    };
    // A successor beside its predecessor (HANGAR_RECOVER_ON_START=false) must not fire crons or sweep
    // threads while the predecessor still does: it starts both once the predecessor is gone.
    afterRecover.run = startBackground;
    if (env.server.recoverOnStart) {
      startBackground();
    }
    const addr = app.server.address();
    const port = typeof addr === "object" && addr ? addr.port : opts.port;
    const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
    const running = { app };
    return {
      url: `http://${host}:${port}`,
      graphs: graphs.ids(),
      dataDir: backend.where,
      recovered,
      console: Boolean(backend.api && consoleOn),
      close: async () => {
        crons.stop();
        sweeper.stop();
        // Stop accepting connections; let runs finish (or hand them back), then end what is still open
        // (streams: their clients reconnect to another replica with Last-Event-ID).
        const closing = running.app.close();
        await schemasOf(graphs).close();
        await backend.drain();
        running.app.server.closeAllConnections();
        await closing;
        // The broker, then the storage (and the embedded data directory's lock).
        await opened.close();
      },
    };
  } catch (e) {
    await app?.close().catch(() => {});
    await schemasOf(graphs).close();
    await backend.drain().catch(() => {});
    await abandon();
    throw e;
  }
}

/**
 * The schema cache's default directory: in the data directory on the embedded backend; on the scale-out backend
 * (no data directory) in the user's cache directory (entries are keyed by their module's path: projects share it).
 */
function schemaCacheDir(opts: ServerOptions, dataDir: string): string {
  if (!opts.cluster) return join(dataDir, "schemas-cache");
  return join(homedir(), ".cache", "hangar", "schemas");
}

/**
 * With HANGAR_INTERNAL_TOKEN set (by the control plane that started this server), `POST /internal/recover`
 * with that token in `x-hangar-internal-token` resumes the runs a stopped predecessor left unfinished
 * (embedded backend; on the scale-out backend expired leases do this by themselves).
 */
function internalRoutes(
  app: FastifyInstance,
  backend: Wired,
  token: string | undefined,
  afterRecover: () => void,
): void {
  if (!token) return;
  app.post("/internal/recover", { schema: { hide: true } }, async (req, reply) => {
    const given = req.headers["x-hangar-internal-token"];
    if (!safeEqual(typeof given === "string" ? given : undefined, token)) {
      return reply.status(403).send({ detail: "x-hangar-internal-token is missing or wrong" });
    }
    const recovered = await backend.runs.recover();
    afterRecover();
    return { recovered };
  });
}

/** A worker's HTTP server: health and metrics only (the API is served by api processes). */
function workerApp(metrics: Metrics, log: Logger): FastifyInstance {
  const app = Fastify(fastifyLogging(log));
  logRequests(app, log);
  app.get("/ok", async () => ({ ok: true }));
  app.get("/metrics", async (_req, reply) =>
    reply.header("Content-Type", metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  return app;
}
