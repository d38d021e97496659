// The control plane's store as the CLI opens it: PostgreSQL when DATABASE_URL is set (schema
// HANGAR_CP_DATABASE_SCHEMA), else SQLite in the data directory. Shared by `control-plane` and its `admin` commands.
import { AdminError } from "../control-plane/admin.js";
import { checkSchemaName, PostgresConnectError } from "../lib/db/postgres.js";
import { ConfigError, MigrationError } from "../lib/errors.js";
import { settings, SettingsError, type ControlPlaneSettings } from "../lib/settings.js";
import { DEFAULT_CP_SCHEMA } from "../control-plane/store/postgres.js";

/** The data directory when --data-dir is not given (named in the help, in ./main.ts). */
export const DEFAULT_DATA_DIR = ".hangar-control-plane";

export interface CpDatabase {
  url: string;
  schema: string;
}

/**
 * The control plane's PostgreSQL store when DATABASE_URL is set (schema HANGAR_CP_DATABASE_SCHEMA, default
 * hangar_control_plane, separate from the `d_<id>` schemas of prod deployments); undefined for SQLite.
 */
export function cpDatabase(env: ControlPlaneSettings = settings().controlPlane): CpDatabase | undefined {
  const url = env.databaseUrl?.trim();
  if (!url) return undefined;
  const schema = env.databaseSchema?.trim() || DEFAULT_CP_SCHEMA;
  try {
    checkSchemaName(schema);
  } catch (e) {
    throw new ConfigError(`HANGAR_CP_DATABASE_SCHEMA: ${(e as Error).message}`);
  }
  return { url, schema };
}

/** Where the PostgreSQL store is, for the start-up lines: host, port and database, never the password. */
export function describeDatabase(db: CpDatabase): string {
  let where = "";
  try {
    const u = new URL(db.url);
    where = ` at ${u.hostname || "localhost"}:${u.port || "5432"}${u.pathname.length > 1 ? u.pathname : ""}`;
  } catch {
    // not a URL (a connection string pg understands otherwise): the server is not named
  }
  return `PostgreSQL${where}, schema "${db.schema}"`;
}

/**
 * Errors `control-plane` and its `admin` commands report in one line, without a stack: configuration
 * (ControlPlaneConfigError, SandboxConfigError, a bad HANGAR_CP_DATABASE_SCHEMA), settings, an admin refusal, an
 * unreachable database, a migration.
 */
export const reportedInOneLine = (e: unknown): boolean =>
  e instanceof ConfigError ||
  e instanceof SettingsError ||
  e instanceof AdminError ||
  e instanceof PostgresConnectError ||
  e instanceof MigrationError;
