// PostgreSQL migrations, for the Agent Server's storage and the control plane's store alike: numbered .sql files
// applied in order under an advisory lock (safe when several processes start at once), recorded in a ledger,
// and refused when the schema is newer than this build.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Pool } from "pg";
import { MigrationError } from "../errors.js";
import { ident } from "./postgres.js";

export { MigrationError } from "../errors.js";

export interface MigrateOptions {
  /** The directory of the numbered .sql files. */
  dir: string;
  /**
   * First key of the advisory lock (the second is a hash of the schema). Each set of migrations has its own, so
   * two of them never wait for each other on one schema name.
   */
  lockKey: number;
}

/** Applies pending migrations of `opts.dir` to `schema`; returns the versions applied by this call. */
export async function migratePostgres(pool: Pool, schema: string, opts: MigrateOptions): Promise<number[]> {
  const { dir, lockKey } = opts;
  const files = readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
  const known = new Set(files.map((f) => parseInt(f, 10)));
  const client = await pool.connect();
  const applied: number[] = [];
  try {
    await client.query("SELECT pg_advisory_lock($1, hashtext($2))", [lockKey, schema]);
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${ident(schema)}`);
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${ident(schema)}.schema_migrations (
           version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL DEFAULT now())`,
      );
      const { rows } = await client.query<{ version: number }>(
        `SELECT version FROM ${ident(schema)}.schema_migrations`,
      );
      const newer = rows.filter((r) => !known.has(r.version)).map((r) => r.version);
      if (newer.length) {
        throw new MigrationError(
          `schema "${schema}" has migrations this build does not know (${newer.join(", ")}); upgrade Hangar`,
        );
      }
      const done = new Set(rows.map((r) => r.version));
      for (const file of files) {
        const version = parseInt(file, 10);
        if (done.has(version)) continue;
        const sql = readFileSync(join(dir, file), "utf8");
        await client.query("BEGIN");
        try {
          await client.query(`SET LOCAL search_path TO ${ident(schema)}`);
          await client.query(sql);
          await client.query(
            `INSERT INTO ${ident(schema)}.schema_migrations (version, name) VALUES ($1, $2)`,
            [version, file],
          );
          await client.query("COMMIT");
        } catch (e) {
          await client.query("ROLLBACK");
          throw new MigrationError(`migration ${file} failed: ${(e as Error).message}`);
        }
        applied.push(version);
      }
    } finally {
      await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [lockKey, schema]);
    }
  } finally {
    client.release();
  }
  return applied;
}
