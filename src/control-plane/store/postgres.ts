// The control plane's store on PostgreSQL (`hangar control-plane` with DATABASE_URL): the same records and
// behaviour as the SQLite store (sqlite.ts; the statements are queries.ts's), in one schema (default "hangar_control_plane") with
// numbered migrations (migrations/postgres/) applied under an advisory lock with a ledger, so several control
// planes may start at once on one database. JSONB for the API's objects, TIMESTAMPTZ for times.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { checkSchemaName, connectPool, ident, PgDb, jsonb, type Queryable } from "../../lib/db/postgres.js";
import { migratePostgres } from "../../lib/db/postgres-migrate.js";
import { rootLogger, type Logger } from "../../lib/logger.js";
import { loadSecretBox, wrongKeyError, type SecretBox } from "../domain/secrets-crypto.js";
import type { CpStore } from "../domain/types.js";
import { cpStoreOn } from "./queries.js";
import type { SqlDb, SqlExec } from "./sql.js";

export const DEFAULT_CP_SCHEMA = "hangar_control_plane";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations", "postgres");
/** First key of the migrations' advisory lock (the Agent Server's storage uses another). */
const MIGRATION_LOCK = 0x48435031; // "HCP1"
/** First key of the advisory lock of `exclusive` (the bootstrap). */
const EXCLUSIVE_LOCK = 0x48435032; // "HCP2"

export interface CpPostgresOptions {
  /** postgres://user:password@host:port/database (any option pg understands). */
  url: string;
  /** The schema of the control plane's tables; created when missing. Default "hangar_control_plane". */
  schema?: string;
  /**
   * The control plane's data directory: purging a deployment also removes its uploaded files there
   * (`uploads/<deployment id>/`), as the SQLite store does. Without it, files are left alone.
   */
  dataDir?: string;
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
  /** application_name of the connections (default "hangar control-plane <pid>"). */
  applicationName?: string;
  /** Told about connections that broke while idle in the pool (default: one line on stderr). */
  onError?: (err: Error) => void;
  /**
   * The key of deployments' secrets; default loadSecretBox (HANGAR_CP_SECRET_KEY of `env`, else the key file of
   * `dataDir`). Every control plane sharing a store needs the same key.
   */
  secretBox?: SecretBox;
  /** HANGAR_CP_SECRET_KEY's value, when no secretBox is given; default this process's setting. */
  secretKey?: string;
  /** Told when a key file is generated. */
  log?: Logger;
}

/** PostgreSQL TEXT cannot hold U+0000 (SQLite can): it is dropped. */
const text = <T extends string | null | undefined>(v: T): T =>
  (typeof v === "string" && v.includes("\0") ? v.replace(/\0/g, "") : v) as T;

/**
 * Binds the store to the secrets key (its id recorded on first use; another key refused with SecretKeyError),
 * then encrypts the secrets of rows written before encryption (a JSONB array), all in one transaction under a
 * lock of the settings table, so control planes starting together agree.
 */
async function sealStoredSecrets(pool: pg.Pool, s: string, box: SecretBox): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    await c.query(`LOCK TABLE ${s}.store_settings IN EXCLUSIVE MODE`);
    await c.query(
      `INSERT INTO ${s}.store_settings (key, value) VALUES ('secrets_key_id', $1) ON CONFLICT DO NOTHING`,
      [box.keyId],
    );
    const { rows } = await c.query(`SELECT value FROM ${s}.store_settings WHERE key = 'secrets_key_id'`);
    if (rows[0].value !== box.keyId) throw wrongKeyError(rows[0].value as string, box);
    const plain = await c.query(
      `SELECT id, secrets FROM ${s}.deployments WHERE jsonb_typeof(secrets) <> 'string' FOR UPDATE`,
    );
    for (const r of plain.rows) {
      const sealed = box.seal(box.open(r.secrets, r.id), r.id);
      await c.query(`UPDATE ${s}.deployments SET secrets = $1::jsonb WHERE id = $2`, [jsonb(sealed), r.id]);
    }
    await c.query("COMMIT");
  } catch (e) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/**
 * Opens the control plane's store on PostgreSQL: connects (one-line PostgresConnectError when the server
 * cannot be reached), creates the schema and applies pending migrations.
 */
export async function openCpPostgresStore(opts: CpPostgresOptions): Promise<CpStore> {
  const schema = opts.schema ?? DEFAULT_CP_SCHEMA;
  checkSchemaName(schema);
  const pool: pg.Pool = await connectPool(
    {
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      application_name: opts.applicationName ?? `hangar control-plane ${process.pid}`,
    },
    opts.onError ??
      ((err: Error) =>
        (opts.log ?? rootLogger()).warn(
          `hangar control-plane: PostgreSQL connection lost (the pool replaces it): ${err.message}`,
        )),
  );
  let box: SecretBox;
  try {
    // The key file is kept in the data directory, made here as the SQLite store makes it: an admin command may be
    // the first to run on a new machine, before any control plane made the directory.
    if (!opts.secretBox && opts.dataDir) mkdirSync(opts.dataDir, { recursive: true });
    box =
      opts.secretBox ?? loadSecretBox({ secretKey: opts.secretKey, dataDir: opts.dataDir, log: opts.log });
    await migratePostgres(pool, schema, { dir: MIGRATIONS_DIR, lockKey: MIGRATION_LOCK });
    await sealStoredSecrets(pool, ident(schema), box);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }

  const db = new PgDb(pool, schema);
  let closing: Promise<void> | undefined;
  return cpStoreOn(postgresDb(db, ident(schema)), {
    box,
    dataDir: opts.dataDir,
    async exclusive(fn) {
      // A session lock on a client of its own; `fn` runs its statements on the pool meanwhile.
      const client = await pool.connect();
      try {
        await client.query("SELECT pg_advisory_lock($1, hashtext($2))", [EXCLUSIVE_LOCK, schema]);
        try {
          return await fn();
        } finally {
          await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [EXCLUSIVE_LOCK, schema]);
        }
      } finally {
        client.release();
      }
    },
    close() {
      closing ??= pool.end();
      return closing;
    },
  });
}

/** `?` placeholders as PostgreSQL's `$1, $2, ...` (the statements hold no other `?`). */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/** Runs statements on `q` (the pool, with its retries; or a transaction's client). */
const execOn = (q: Queryable): SqlExec => ({
  one: async (sql, args = []) => (await q.query(numbered(sql), args)).rows[0],
  all: async (sql, args = []) => (await q.query(numbered(sql), args)).rows,
  run: async (sql, args = []) => (await q.query(numbered(sql), args)).rowCount ?? 0,
});

/** `SqlDb` on the control plane's schema `s` (quoted). */
function postgresDb(db: PgDb, s: string): SqlDb {
  return {
    ...execOn(db),
    tx: (fn) => db.tx((client) => fn(execOn(client))),
    table: (name) => `${s}.${name}`,
    toJson: jsonb,
    fromJson: (v) => v,
    text,
    contains: (column) => `strpos(lower(${column}), lower(?)) > 0`,
    forUpdate: " FOR UPDATE",
    isUniqueViolation: (e) => (e as { code?: string }).code === "23505",
    async insertLogs(lines) {
      // One statement (unnest of arrays): the lines keep their order in `seq`.
      await db.query(
        `INSERT INTO ${s}.logs (deployment_id, revision_id, kind, level, message, timestamp)
         SELECT deployment_id, revision_id, kind, level, message, timestamp FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
           WITH ORDINALITY AS l(deployment_id, revision_id, kind, level, message, timestamp, n)
         ORDER BY n`,
        [
          lines.map((l) => l.deployment_id),
          lines.map((l) => l.revision_id),
          lines.map((l) => l.kind),
          lines.map((l) => l.level),
          lines.map((l) => l.message),
          lines.map((l) => l.timestamp),
        ],
      );
    },
  };
}
