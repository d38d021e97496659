// `hangar dev`: starts the Agent Server on a project; with reload, supervises a child and restarts it on
// changes (./reload.ts).
import { resolve } from "node:path";
import { AuthError } from "../auth/auth.js";
import { ConfigError } from "../lib/settings/project.js";
import { SettingsError, loadSettings, settings } from "../lib/settings.js";
import { GraphLoadError } from "../graphs/registry.js";
import { rootLogger, type Logger } from "../lib/logger.js";
import { setUpLogging } from "./logging.js";
import { invalidPort, portFlag } from "./port.js";
import { StartupError, startServer, type ClusterBackend, type RunningServer } from "../server.js";

export interface DevOptions {
  config: string;
  port?: string;
  host: string;
  dataDir?: string;
  reload: boolean;
  nJobsPerWorker?: string;
}

/** --port, else PORT, else the command's default; a message when it is not a port. */
function parsePort(opts: { port?: string }, fallback: string): number | string {
  if (opts.port === undefined) {
    try {
      return settings().server.port ?? Number(fallback);
    } catch (e) {
      if (e instanceof SettingsError) return e.message;
      throw e;
    }
  }
  return portFlag(opts.port) ?? invalidPort(opts.port);
}

/** Validates the shared flags; a message (and exit code 2) when one is wrong. */
export function checkFlags(
  cmd: string,
  opts: { port?: string; nJobsPerWorker?: string },
  defaultPort: string,
): { port: number; nJobs: number } | undefined {
  const port = parsePort(opts, defaultPort);
  if (typeof port === "string") {
    console.error(`hangar ${cmd}: ${port}`);
    return undefined;
  }
  if (opts.nJobsPerWorker === undefined) {
    // N_JOBS_PER_WORKER, the official server's setting, else its default.
    try {
      return { port, nJobs: loadSettings(process.env).server.jobsPerWorker };
    } catch (e) {
      if (!(e instanceof SettingsError)) throw e;
      console.error(`hangar ${cmd}: ${e.message}`);
      return undefined;
    }
  }
  const nJobs = Number(opts.nJobsPerWorker);
  if (!Number.isInteger(nJobs) || nJobs < 1) {
    console.error(
      `hangar ${cmd}: --n-jobs-per-worker must be a positive integer, not "${opts.nJobsPerWorker}"`,
    );
    return undefined;
  }
  return { port, nJobs };
}

export async function runDev(opts: DevOptions): Promise<number> {
  const flags = checkFlags("dev", opts, "2024");
  if (!flags) return 2;
  if (!setUpLogging("dev", "pretty")) return 2;
  // Before a reloading supervisor starts its first server: built once, not in each child.
  await (await import("./consoles.js")).ensureConsoles(rootLogger());
  if (opts.reload) return (await import("./reload.js")).supervise(opts);
  return runServer("dev", opts, flags.port, flags.nJobs);
}

/**
 * A rejected promise nobody handled yet must not stop the server: LangGraph keeps a checkpoint write's
 * promise and awaits it only at the next step, so a write failing meanwhile (the database went away) would
 * otherwise end the process and every run in it. The run still sees the error when it awaits the write.
 */
function keepRunningOnUnhandledRejections(): void {
  process.on("unhandledRejection", (reason) => {
    const msg = reason instanceof Error ? reason.message : String(reason);
    rootLogger().warn(`hangar: an operation failed before anyone awaited it (continuing): ${msg}`);
  });
}

/**
 * Logs where a started server listens, its graphs and data; `listening` runs once the URL is out (`runServer`
 * tells a reloading supervisor there that its child started).
 */
export function announce(
  log: Logger,
  server: RunningServer,
  cluster?: ClusterBackend,
  listening: () => void = () => {},
): void {
  const role =
    cluster?.mode === "worker"
      ? "Hangar worker (health and metrics only)"
      : cluster?.mode === "api"
        ? "Hangar Agent Server (API only)"
        : "Hangar Agent Server";
  // The URL ends the message: test harnesses and the control plane read it there (in JSON too); it is logged
  // whatever LOG_LEVEL says.
  const banner = log.isLevelEnabled("info") ? log : log.child({}, { level: "info" });
  banner.info(`${role} listening on ${server.url}`);
  listening();
  log.info(`graphs: ${server.graphs.join(", ")}`);
  log.info(`data: ${server.dataDir}`);
  // A worker serves only /ok and /metrics.
  if (cluster?.mode !== "worker") log.info(`docs: ${server.url}/docs`);
  if (server.console) log.info(`console: ${server.url}/console/`);
  if (server.recovered) {
    // Pending runs count too (a delayed one starts when due): say so rather than "resumed".
    log.info(
      `${server.recovered} run(s) the last process left pending or running taken up again (a delayed one when due)`,
    );
  }
}

/** Starts the server in this process, prints where it listens, and serves until a signal. */
export async function runServer(
  cmd: string,
  opts: { config: string; dataDir?: string; host: string },
  port: number,
  nJobs: number,
  cluster?: ClusterBackend,
): Promise<number> {
  keepRunningOnUnhandledRejections();
  try {
    const server = await startServer({
      configPath: resolve(opts.config),
      dataDir: opts.dataDir ? resolve(opts.dataDir) : undefined,
      host: opts.host,
      port,
      nJobsPerWorker: nJobs,
      cluster,
      // `dev` always serves the console; `serve` when HANGAR_CONSOLE says so.
      console: cmd === "dev" ? true : undefined,
      // `serve` lets running runs finish when stopped; `dev` (restarted on every save) stops them at once.
      drainOnClose: cmd === "serve",
    });
    // The logger as the project's .env left it (startServer applies its LOG_LEVEL and LOG_FORMAT).
    const log = rootLogger();
    announce(log, server, cluster, () => process.send?.({ hangar: "listening" }));
    let stopping = false;
    const stop = async (signal: NodeJS.Signals) => {
      // A second signal while closing exits at once (with reload, the supervisor's SIGTERM follows the terminal's
      // SIGINT to the whole process group).
      if (stopping) process.exit(130);
      stopping = true;
      // Said, so that a slow stop is explained (the run engine then says which runs it lets finish).
      log.info(`hangar ${cmd}: ${signal}: stopping`);
      await server.close().catch((e: Error) => log.error({ err: e }, `hangar ${cmd}: error while stopping`));
      log.info(`hangar ${cmd}: stopped`);
      process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    return await new Promise<number>(() => {});
  } catch (e) {
    if (
      e instanceof ConfigError ||
      e instanceof GraphLoadError ||
      e instanceof StartupError ||
      e instanceof AuthError
    ) {
      rootLogger().error(`hangar ${cmd}: ${e.message}`);
      return 1;
    }
    rootLogger().error({ err: e }, `hangar ${cmd}: failed to start: ${(e as Error)?.message ?? e}`);
    return 1;
  }
}
