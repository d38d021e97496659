// `hangar serve --migrate-only`: applies the Agent Server's PostgreSQL migrations (its tables and LangGraph's
// checkpoint tables) to the schema `serve` would use, then exits: what a Kubernetes init container or Job runs.
import { existsSync } from "node:fs";
import { withBackoff } from "../lib/backoff.js";
import { ConfigError, MigrationError, UnavailableError } from "../lib/errors.js";
import { rootLogger } from "../lib/logger.js";
import { loadProjectConfig } from "../lib/settings/project.js";
import { loadSettings, SettingsError } from "../lib/settings.js";

/**
 * Migrates DATABASE_URL's HANGAR_DATABASE_SCHEMA (the project's env, when `config` exists, filling what the
 * environment does not set, as for `serve`). Retries an unreachable database for HANGAR_CONNECT_TIMEOUT_SECONDS.
 * Exit code: 0 done, 1 failed, 2 a setting is wrong or missing.
 */
export async function runMigrateOnly(opts: { config: string }): Promise<number> {
  const log = rootLogger();
  let databaseUrl: string | undefined, schema: string, connectTimeoutSeconds: number;
  try {
    const projectEnv = existsSync(opts.config) ? loadProjectConfig(opts.config).env : {};
    ({
      databaseUrl,
      databaseSchema: schema,
      connectTimeoutSeconds,
    } = loadSettings({
      ...projectEnv,
      ...process.env,
    }).cluster);
  } catch (e) {
    if (!(e instanceof SettingsError || e instanceof ConfigError)) throw e;
    console.error(`hangar serve: ${e.message}`);
    return 2;
  }
  if (!databaseUrl) {
    console.error(
      "hangar serve: --migrate-only needs DATABASE_URL (or DATABASE_URI); the embedded backend migrates at start-up",
    );
    return 2;
  }
  const [{ connectPool, checkSchemaName }, { migratePostgres }, { HangarPostgresSaver }] = await Promise.all([
    import("../storage/postgres/db.js"),
    import("../storage/postgres/migrate.js"),
    import("../storage/postgres/checkpointer.js"),
  ]);
  try {
    checkSchemaName(schema);
  } catch (e) {
    console.error(`hangar serve: HANGAR_DATABASE_SCHEMA: ${(e as Error).message}`);
    return 2;
  }
  try {
    const config = { connectionString: databaseUrl, max: 2, application_name: "hangar migrate" };
    const pool = await withBackoff(
      () => connectPool(config, (err) => log.warn(`hangar: PostgreSQL connection lost: ${err.message}`)),
      {
        firstMs: 500,
        maxMs: 5_000,
        patienceMs: connectTimeoutSeconds * 1000,
        retry: (e) => e instanceof UnavailableError,
        onRetry: (e, delay) => log.warn(`hangar: ${(e as Error).message}; retrying in ${delay / 1000} s`),
      },
    );
    try {
      const applied = await migratePostgres(pool, schema);
      await HangarPostgresSaver.setupSchema(pool, schema);
      log.info(
        applied.length
          ? `schema "${schema}" migrated: applied ${applied.join(", ")}`
          : `schema "${schema}" is up to date`,
      );
    } finally {
      await pool.end().catch(() => undefined);
    }
    return 0;
  } catch (e) {
    const known = e instanceof UnavailableError || e instanceof MigrationError;
    log.error(known ? {} : { err: e }, `hangar serve --migrate-only: ${(e as Error)?.message ?? e}`);
    return 1;
  }
}
