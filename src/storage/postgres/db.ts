// The Agent Server's access to PostgreSQL: its schema-qualified tables and ids, on the shared helpers of
// lib/db/postgres.ts (pool, retries, transactions), which the control plane's store uses too.
import type pg from "pg";
import { ident, PgDb } from "../../lib/db/postgres.js";
import { isUuid } from "../../lib/uuid.js";

export {
  checkSchemaName,
  connectPool,
  jsonb,
  prepareStatements,
  withRetry,
  type Queryable,
  type Row,
} from "../../lib/db/postgres.js";

/**
 * Every relation and function the stores use, qualified with the schema (any schema name works, several per
 * database).
 */
export function tables(schema: string) {
  const s = ident(schema);
  return {
    assistants: `${s}.assistants`,
    assistant_versions: `${s}.assistant_versions`,
    threads: `${s}.threads`,
    runs: `${s}.runs`,
    crons: `${s}.crons`,
    store_items: `${s}.store_items`,
    checkpoints: `${s}.checkpoints`,
    checkpoint_blobs: `${s}.checkpoint_blobs`,
    checkpoint_writes: `${s}.checkpoint_writes`,
    // Functions (migration 5)
    admit_run: `${s}.admit_run`,
    end_run: `${s}.end_run`,
  };
}

export type Tables = ReturnType<typeof tables>;

/** Ids are UUID columns here: a string that is not one matches nothing (instead of failing the statement). */
export { isUuid };

export function requireUuid(field: string, v: string): string {
  if (!isUuid(v)) throw new Error(`${field} must be a UUID, not "${v}"`);
  return v;
}

/** The Agent Server's database: a pool, its schema, and the tables in it. */
export class Db extends PgDb {
  readonly t: Tables;

  constructor(pool: pg.Pool, schema: string) {
    super(pool, schema);
    this.t = tables(schema);
  }
}
