// The scale-out storage: PostgreSQL holding assistants, threads, runs, crons, the long-term store and
// LangGraph checkpoints, in one schema (several servers with different schemas may share a database).
import pg from "pg";
import type { StoreIndex } from "../store-index.js";
import type { Storage } from "../types.js";
import { PostgresAssistants } from "./assistants.js";
import { HangarPostgresSaver } from "./checkpointer.js";
import { PostgresCrons } from "./crons.js";
import { Db, isUuid } from "./db.js";
import { migratePostgres } from "./migrate.js";
import { PostgresRuns } from "./runs.js";
import { PostgresStore } from "./store.js";
import { PostgresThreads } from "./threads.js";

export interface PostgresStorageOptions {
  /** postgres://user:password@host:port/database (any option pg understands, e.g. ?sslmode=require). */
  url: string;
  /** The schema holding Hangar's tables; created when missing. Default "public". */
  schema?: string;
  storeIndex?: StoreIndex;
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
  /** application_name of the connections, as pg_stat_activity shows it (default "hangar"). */
  applicationName?: string;
  /** Told about connections that broke while idle in the pool (default: one line on stderr). */
  onError?: (err: Error) => void;
}

export interface PostgresStorage extends Storage {
  pool: pg.Pool;
  schema: string;
}

/** How long opening waits for the first connection before giving up. */
const CONNECT_TIMEOUT_MS = 15_000;

/** A one-line reason for a failed first connection, naming the server but never the password. */
function connectError(client: pg.Client, e: unknown): Error {
  const err = e as NodeJS.ErrnoException & { errors?: unknown[] };
  const first = (err.errors?.[0] ?? err) as NodeJS.ErrnoException;
  const network = typeof first.syscall === "string" && typeof first.code === "string";
  const reason = network
    ? `${first.syscall} ${first.code}`
    : err.message || (typeof err.code === "string" ? err.code : String(e));
  const unreachable = network || /timeout/i.test(reason);
  const where = client.host?.startsWith("/") ? client.host : `${client.host}:${client.port}`;
  return new Error(
    `${unreachable ? "cannot reach" : "cannot connect to"} PostgreSQL at ${where}: ${reason.replace(/\s+/g, " ").trim()}`,
  );
}

function checkSchemaName(schema: string): void {
  // The checkpointer quotes the schema without escaping; PostgreSQL truncates identifiers at 63 bytes.
  if (!schema || schema.includes('"') || schema.includes("\0") || Buffer.byteLength(schema) > 63) {
    throw new Error(`invalid PostgreSQL schema name "${schema}": 1 to 63 bytes, without double quotes`);
  }
}

export async function openPostgresStorage(opts: PostgresStorageOptions): Promise<PostgresStorage> {
  const schema = opts.schema ?? "public";
  checkSchemaName(schema);
  const config: pg.PoolConfig = {
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    application_name: opts.applicationName ?? "hangar",
  };

  // Fail fast, in one line, when the server cannot be reached (the pool itself would wait in its queue).
  const probe = new pg.Client({ ...config, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  probe.on("error", () => undefined);
  try {
    await probe.connect();
  } catch (e) {
    throw connectError(probe, e);
  } finally {
    await probe.end().catch(() => undefined);
  }

  const pool = new pg.Pool(config);
  const onError =
    opts.onError ??
    ((err: Error) =>
      console.error(`hangar: PostgreSQL connection lost (the pool replaces it): ${err.message}`));
  // A connection terminated by the server emits "error": on an idle client the pool reports it here and
  // discards the client; on a checked-out one the statement in flight fails (and the client is discarded
  // when released). Unhandled, either would crash the process.
  pool.on("error", (err) => onError(err));
  pool.on("connect", (client) => client.on("error", () => undefined));
  try {
    await migratePostgres(pool, schema);
    await HangarPostgresSaver.setupSchema(pool, schema);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }

  const db = new Db(pool, schema);
  const store = new PostgresStore(db, opts.storeIndex);
  let closing: Promise<void> | undefined;
  return {
    pool,
    schema,
    assistants: new PostgresAssistants(db),
    threads: new PostgresThreads(db),
    runs: new PostgresRuns(db),
    crons: new PostgresCrons(db),
    checkpointer: new HangarPostgresSaver(pool, schema),
    store,
    // Every statement is committed before its promise resolves: nothing is pending.
    sync: async () => {},
    // Other processes write the same checkpoints, so the token is read from the database: one indexed
    // query (count, newest id, and the newest row version, xmin, of the thread's checkpoints and writes)
    // instead of reading and decoding the whole history.
    checkpointToken: async (threadId) => {
      if (!isUuid(threadId)) return null;
      const { rows } = await db.query(
        `SELECT (SELECT count(*) || ':' || coalesce(max(checkpoint_id), '') || ':' ||
                        coalesce(max(xmin::text::bigint), 0)
                   FROM ${db.t.checkpoints} WHERE thread_id = $1) || '|' ||
                (SELECT count(*) || ':' || coalesce(max(xmin::text::bigint), 0)
                   FROM ${db.t.checkpoint_writes} WHERE thread_id = $1) AS token`,
        [threadId],
      );
      return (rows[0]?.token as string | undefined) ?? null;
    },
    close: () => {
      closing ??= (async () => {
        store.stop();
        await pool.end();
      })();
      return closing;
    },
  };
}
