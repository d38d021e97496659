// The scale-out storage: PostgreSQL holding assistants, threads, runs, crons, the long-term store and
// LangGraph checkpoints, in one schema (several servers with different schemas may share a database).
import pg from "pg";
import type { BaseStore } from "@langchain/langgraph-checkpoint";
import { rootLogger } from "../../lib/logger.js";
import type { StoreIndex } from "../store-index.js";
import type { Storage } from "../types.js";
import { PostgresAssistants } from "./assistants.js";
import { HangarPostgresSaver } from "./checkpointer.js";
import { PostgresCrons } from "./crons.js";
import { checkSchemaName, connectPool, Db, isUuid, prepareStatements } from "./db.js";
import { WalFlusher } from "./flush.js";
import { ident, migratePostgres } from "./migrate.js";
import { PostgresRuns } from "./runs.js";
import { PostgresStore } from "./store.js";
import { PostgresThreads } from "./threads.js";
import { checkKeys, type StorageCipher } from "../encryption/index.js";
import { EncryptedItemStore, encryptedStorage } from "../encryption/storage.js";
import { LazyResealer } from "../encryption/reseal.js";
import { postgresRawColumns } from "./raw-columns.js";

export interface PostgresStorageOptions {
  /** postgres://user:password@host:port/database (any option pg understands, e.g. ?sslmode=require). */
  url: string;
  /** The schema holding Hangar's tables; created when missing. Default "public". */
  schema?: string;
  storeIndex?: StoreIndex;
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
  /** Each connection prepares the statements it runs, planning each once (default true). */
  preparedStatements?: boolean;
  /** application_name of the connections, as pg_stat_activity shows it (default "hangar"). */
  applicationName?: string;
  /** Told about connections that broke while idle in the pool (default: one line on stderr). */
  onError?: (err: Error) => void;
  /** Encryption at rest (LANGGRAPH_AES_KEY); null or absent: off. */
  cipher?: StorageCipher | null;
}

export interface PostgresStorage extends Storage {
  pool: pg.Pool;
  schema: string;
  /** Checkpoints were written with an asynchronous commit elsewhere (a graph thread): sync() flushes over them. */
  checkpointWritten(): void;
}

export async function openPostgresStorage(opts: PostgresStorageOptions): Promise<PostgresStorage> {
  const schema = opts.schema ?? "public";
  checkSchemaName(schema);
  const config: pg.PoolConfig = {
    connectionString: opts.url,
    max: opts.poolSize ?? 10,
    application_name: opts.applicationName ?? "hangar",
  };

  const onError =
    opts.onError ??
    ((err: Error) =>
      rootLogger().warn(`hangar: PostgreSQL connection lost (the pool replaces it): ${err.message}`));
  const pool = await connectPool(config, onError);
  // Checkpoints commit without waiting for the WAL flush; sync() flushes before anything is acknowledged.
  const checkpointPool = new pg.Pool({ ...config, options: "-c synchronous_commit=off" });
  if (opts.preparedStatements ?? true) {
    prepareStatements(pool);
    prepareStatements(checkpointPool);
  }
  checkpointPool.on("error", (err) => onError(err));
  checkpointPool.on("connect", (client) => client.on("error", () => undefined));
  try {
    await migratePostgres(pool, schema);
    await HangarPostgresSaver.setupSchema(pool, schema);
    const keys = `${ident(schema)}.encryption_keys`;
    const { rows } = await pool.query(`SELECT key_id FROM ${keys}`);
    const record = checkKeys(
      rows.map((r) => r.key_id as string),
      opts.cipher ?? null,
      `PostgreSQL schema ${schema}`,
    );
    if (record) await pool.query(`INSERT INTO ${keys} (key_id) VALUES ($1) ON CONFLICT DO NOTHING`, [record]);
  } catch (e) {
    await pool.end().catch(() => undefined);
    await checkpointPool.end().catch(() => undefined);
    throw e;
  }

  const db = new Db(pool, schema);
  const store = new PostgresStore(db, opts.storeIndex);
  const flusher = new WalFlusher(pool);
  let closing: Promise<void> | undefined;
  const cipher = opts.cipher ?? null;
  const lazy = cipher
    ? new LazyResealer(postgresRawColumns(pool, schema), cipher, (e) =>
        rootLogger().warn(`hangar: could not encrypt values again with the current key: ${e.message}`),
      )
    : undefined;
  const storage: PostgresStorage = {
    pool,
    schema,
    assistants: new PostgresAssistants(db),
    threads: new PostgresThreads(db, flusher),
    runs: new PostgresRuns(db),
    crons: new PostgresCrons(db),
    checkpointer: new HangarPostgresSaver(
      checkpointPool,
      schema,
      () => flusher.wrote(),
      cipher,
      (threadId) => {
        for (const t of ["checkpoints", "checkpoint_blobs", "checkpoint_writes"])
          lazy?.request(t, "thread_id", threadId);
      },
    ),
    store,
    // Other statements commit synchronously; checkpoint writes wait here for one shared WAL flush.
    sync: () => flusher.sync(),
    checkpointWritten: () => flusher.wrote(),
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
        await checkpointPool.end();
      })();
      return closing;
    },
  };
  return cipher ? encryptedStorage(storage, cipher, lazy) : storage;
}

/**
 * What a graph thread needs of an open PostgreSQL backend (its schema already migrated by the server): the
 * checkpointer and the store on pools of its own. `wrote` is told after each asynchronous checkpoint commit, so that
 * the server's sync() flushes the WAL over it.
 */
export async function openPostgresGraphStorage(opts: {
  url: string;
  schema: string;
  poolSize: number;
  storeIndex?: StoreIndex;
  wrote: () => void;
  cipher?: StorageCipher | null;
}): Promise<{ checkpointer: HangarPostgresSaver; store: BaseStore; close: () => Promise<void> }> {
  checkSchemaName(opts.schema);
  const config: pg.PoolConfig = {
    connectionString: opts.url,
    max: opts.poolSize,
    application_name: "hangar-graph-thread",
  };
  const onError = (err: Error) =>
    rootLogger().warn(`hangar: PostgreSQL connection lost (the pool replaces it): ${err.message}`);
  const pool = await connectPool(config, onError);
  const checkpointPool = new pg.Pool({ ...config, options: "-c synchronous_commit=off" });
  prepareStatements(pool);
  prepareStatements(checkpointPool);
  checkpointPool.on("error", (err) => onError(err));
  checkpointPool.on("connect", (client) => client.on("error", () => undefined));
  const store = new PostgresStore(new Db(pool, opts.schema), opts.storeIndex);
  store.stop();
  return {
    checkpointer: new HangarPostgresSaver(checkpointPool, opts.schema, opts.wrote, opts.cipher),
    store: opts.cipher ? new EncryptedItemStore(store, opts.cipher) : store,
    close: async () => {
      await pool.end();
      await checkpointPool.end();
    },
  };
}
