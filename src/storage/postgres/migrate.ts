// The Agent Server's PostgreSQL migrations (migrations/*.sql), applied by the shared runner of
// lib/db/postgres-migrate.ts under their own advisory lock.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Pool } from "pg";
import { migratePostgres as migrate } from "../../lib/db/postgres-migrate.js";

export { ident } from "../../lib/db/postgres.js";
export { MigrationError } from "../../lib/errors.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");
/** First key of the two-key advisory lock: Hangar migrations (the second is the schema). */
const LOCK_CLASS = 0x48414e47; // "HANG"

/** Applies the Agent Server's pending migrations to `schema`; returns the versions applied by this call. */
export function migratePostgres(pool: Pool, schema: string): Promise<number[]> {
  return migrate(pool, schema, { dir: MIGRATIONS_DIR, lockKey: LOCK_CLASS });
}
