// `hangar serve`: the production Agent Server, without reload. With DATABASE_URL and REDIS_URL it runs on
// PostgreSQL + Redis, as an API process, a worker, or both (--mode); without them, on the embedded backend.
// --migrate-only applies the PostgreSQL migrations and exits (./migrate.ts).
import { settings, SettingsError, type ClusterSettings } from "../lib/settings.js";
import type { ClusterBackend } from "../server.js";
import { checkFlags, runServer } from "./dev.js";
import { rootLogger } from "../lib/logger.js";
import { setUpLogging } from "./logging.js";

export interface ServeOptions {
  config: string;
  port?: string;
  host: string;
  dataDir?: string;
  nJobsPerWorker?: string;
  mode: string;
  /** Apply the PostgreSQL migrations and exit (./migrate.ts). */
  migrateOnly?: boolean;
}

export async function runServe(opts: ServeOptions): Promise<number> {
  if (opts.migrateOnly) {
    if (!setUpLogging("serve", "json")) return 2;
    return (await import("./migrate.js")).runMigrateOnly(opts);
  }
  const flags = checkFlags("serve", opts, "8123");
  if (!flags) return 2;
  if (!setUpLogging("serve", "json")) return 2;
  const mode = opts.mode as ClusterBackend["mode"];
  if (!["api", "worker", "all"].includes(mode)) {
    console.error(`hangar serve: --mode must be api, worker or all, not "${opts.mode}"`);
    return 2;
  }
  let env: ClusterSettings;
  try {
    env = settings().cluster;
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    console.error(`hangar serve: ${e.message}`);
    return 2;
  }
  const backend = serveBackend(env, mode, opts.dataDir);
  if (typeof backend === "string") {
    console.error(`hangar serve: ${backend}`);
    return 2;
  }
  // Its console when HANGAR_CONSOLE is on in the environment (a project's .env is read later, by the server).
  if (settings().server.console) await (await import("./consoles.js")).ensureConsoles(rootLogger());
  return runServer("serve", opts, flags.port, flags.nJobs, backend);
}

/**
 * The backend `hangar serve` runs on: PostgreSQL + Redis when the settings give DATABASE_URL and REDIS_URL
 * (undefined: the embedded one), or what is wrong with the combination (a message).
 */
export function serveBackend(
  env: ClusterSettings,
  mode: ClusterBackend["mode"],
  dataDir?: string,
): ClusterBackend | undefined | string {
  const { databaseUrl, redisUrl } = env;
  if (!databaseUrl && !redisUrl) {
    if (mode !== "all") {
      return (
        `--mode ${mode} needs the PostgreSQL + Redis backend (set DATABASE_URL and REDIS_URL); ` +
        `the embedded one runs "all"`
      );
    }
    return undefined;
  }
  if (!databaseUrl || !redisUrl) {
    return (
      `${databaseUrl ? "REDIS_URL" : "DATABASE_URL"} is not set; the scale-out backend needs both ` +
      "DATABASE_URL (PostgreSQL) and REDIS_URL"
    );
  }
  if (dataDir) return "--data-dir is for the embedded backend; unset DATABASE_URL/REDIS_URL to use it";
  return { databaseUrl, redisUrl, schema: env.databaseSchema, redisPrefix: env.redisPrefix, mode };
}
