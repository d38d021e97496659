// Composes an Agent Server: project config, embedded storage, graphs, run manager, HTTP app; listens.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { buildApp } from "./api/app.js";
import { Metrics } from "./api/metrics.js";
import { Guard } from "./api/guard.js";
import { loadUserApp, type HttpConfig } from "./api/http-config.js";
import { Authorizer } from "./auth/auth.js";
import { applyEnv, loadProjectConfig } from "./config/config.js";
import { ensureSystemAssistants } from "./graphs/assistants.js";
import { GraphRegistry } from "./graphs/registry.js";
import { CronScheduler } from "./runs/crons.js";
import { RunManager } from "./runs/manager.js";
import { ThreadSweeper } from "./runs/sweeper.js";
import { ThreadStateService } from "./runs/thread-state.js";
import type { Synchronous } from "./storage/sqlite/db.js";
import { openSqliteStorage } from "./storage/sqlite/index.js";
import { loadStoreIndex } from "./storage/store-index.js";
import type { Storage } from "./storage/types.js";
import { StreamBroker } from "./streams/channel.js";

export const VERSION: string = JSON.parse(
  readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../package.json"), "utf8"),
).version;

export interface ServerOptions {
  configPath: string;
  dataDir?: string;
  host: string;
  port: number;
  synchronous?: Synchronous;
  /** Runs executing at once (default 10). */
  nJobsPerWorker?: number;
  log?: (msg: string) => void;
}

export interface RunningServer {
  url: string;
  graphs: string[];
  dataDir: string;
  recovered: number;
  close: () => Promise<void>;
}

export class StartupError extends Error {}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1)
    throw new StartupError(`${name} must be a positive integer, not "${raw}"`);
  return n;
}

/**
 * checkpointer.ttl of langgraph.json: {strategy, default_ttl (minutes), sweep_interval_minutes};
 * HANGAR_SWEEP_INTERVAL_MS overrides the sweep interval (tests).
 */
function checkpointerTtl(raw: Record<string, unknown> | undefined) {
  const ttl = (raw?.ttl ?? {}) as {
    strategy?: string;
    default_ttl?: number;
    sweep_interval_minutes?: number;
  };
  const sweepMs = process.env.HANGAR_SWEEP_INTERVAL_MS
    ? positiveInt("HANGAR_SWEEP_INTERVAL_MS", 60_000)
    : Math.max(1, ttl.sweep_interval_minutes ?? 5) * 60_000;
  const strategy = ttl.strategy === "keep_latest" ? ("keep_latest" as const) : ("delete" as const);
  return { sweepMs, default: ttl.default_ttl ? { ttl: ttl.default_ttl, strategy } : undefined };
}

const SYNC_MODES = ["OFF", "NORMAL", "FULL", "EXTRA"] as const;

/** SQLite durability from HANGAR_SQLITE_SYNC; FULL (fsync on every commit) unless told otherwise. */
function sqliteSync(): Synchronous {
  const v = (process.env.HANGAR_SQLITE_SYNC ?? "FULL").toUpperCase();
  if (!(SYNC_MODES as readonly string[]).includes(v)) {
    throw new StartupError(`HANGAR_SQLITE_SYNC must be one of ${SYNC_MODES.join(", ")}, not "${v}"`);
  }
  return v as Synchronous;
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const log = opts.log ?? ((m: string) => console.error(m));
  const project = loadProjectConfig(opts.configPath);
  applyEnv(project.env);
  // Await LangChain callbacks inline: backgrounded ones can deliver the last token after the run ended.
  process.env.LANGCHAIN_CALLBACKS_BACKGROUND ??= "false";
  const dataDir = opts.dataDir ?? join(project.projectDir, ".hangar");
  let storage: Storage | undefined;
  let app: FastifyInstance | undefined;
  try {
    storage = openSqliteStorage(dataDir, {
      synchronous: opts.synchronous ?? sqliteSync(),
      storeIndex: await loadStoreIndex(project.projectDir, project.raw.store),
    });
    const graphs = new GraphRegistry(storage.checkpointer, storage.store);
    await graphs.loadAll(project.graphs);
    await ensureSystemAssistants(storage, graphs);
    const broker = new StreamBroker(positiveInt("HANGAR_RESUMABLE_TTL_SECONDS", 600) * 1000);
    const runs = new RunManager(storage, graphs, broker, log, {
      maxConcurrent: opts.nJobsPerWorker ?? 10,
      maxAttempts: positiveInt("HANGAR_MAX_ATTEMPTS", 3),
    });
    const ttlConfig = checkpointerTtl(project.raw.checkpointer);
    const http = (project.raw.http ?? {}) as HttpConfig;
    const auth = await Authorizer.load(
      project.projectDir,
      project.raw.auth as Record<string, unknown> | undefined,
    );
    const guard = new Guard(auth, storage);
    const metrics = new Metrics(() => runs.stats());
    runs.onFinished = (status) => metrics.runsFinished.labels(status).inc();
    const threadState = new ThreadStateService(storage, graphs, (id) => runs.isBusy(id));
    app = await buildApp(
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
        version: VERSION,
      },
      log,
    );
    try {
      await app.listen({ host: opts.host, port: opts.port });
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
    const recovered = await runs.recover();
    const crons = new CronScheduler(storage, runs, log);
    crons.start();
    const sweeper = new ThreadSweeper(storage, broker, (id) => runs.isBusy(id), log);
    sweeper.start(ttlConfig.sweepMs);
    const addr = app.server.address();
    const port = typeof addr === "object" && addr ? addr.port : opts.port;
    const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
    const running = { app, storage };
    return {
      url: `http://${host}:${port}`,
      graphs: graphs.ids(),
      dataDir,
      recovered,
      close: async () => {
        crons.stop();
        sweeper.stop();
        await running.app.close();
        await runs.shutdown();
        await running.storage.close();
      },
    };
  } catch (e) {
    await app?.close().catch(() => {});
    await storage?.close().catch(() => {});
    throw e;
  }
}
