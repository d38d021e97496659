// The scale-out backend: PostgreSQL for storage and the run queue, Redis for the event logs and the signals
// between processes. Loaded only when used: an embedded server never loads pg, ioredis or the PostgreSQL
// checkpointer.
import { withBackoff } from "../lib/backoff.js";
import { StartupError } from "../lib/errors.js";
import type { Logger } from "../lib/logger.js";
import { PgRunQueue } from "../runs/postgres-queue.js";
import { openPostgresStorage } from "../storage/postgres/index.js";
import type { StorageCipher } from "../storage/encryption/index.js";
import { MigrationError } from "../storage/postgres/migrate.js";
import type { StoreIndex } from "../storage/store-index.js";
import { RedisBroker, type EventSealer } from "../streams/redis.js";
import type { Backend } from "./types.js";

export interface ScaleOutOptions {
  databaseUrl: string;
  redisUrl: string;
  /** PostgreSQL schema of this deployment. */
  schema: string;
  /** Prefix of this deployment's Redis keys. */
  redisPrefix: string;
  storeIndex?: StoreIndex;
  /** Names this process's connections in pg_stat_activity. */
  applicationName: string;
  /** Connections of the pool (and of each graph thread's two pools). */
  poolSize: number;
  preparedStatements: boolean;
  /** How long the start keeps trying to reach PostgreSQL and Redis. */
  connectTimeoutMs: number;
  /** How long a resumable run's events stay joinable after it ends. */
  resumableTtlMs: number;
  log: Logger;
  /** Encryption at rest; null: off. */
  cipher?: StorageCipher | null;
}

/** Retries `connect` with backoff until it succeeds or `timeoutMs` passed, saying each time what failed. */
async function connectWithBackoff<T>(
  what: string,
  timeoutMs: number,
  log: Logger,
  connect: () => Promise<T>,
) {
  const firstLine = (e: unknown) => (e as Error).message.split("\n")[0];
  try {
    return await withBackoff(connect, {
      firstMs: 500,
      maxMs: 5_000,
      patienceMs: timeoutMs,
      retry: (e) => !(e instanceof StartupError),
      onRetry: (e, delay) => log.warn(`hangar: ${firstLine(e)}; retrying ${what} in ${delay / 1000} s`),
    });
  } catch (e) {
    if (e instanceof StartupError) throw e;
    throw new StartupError(`${firstLine(e)} (gave up after ${Math.round(timeoutMs / 1000)} s)`);
  }
}

/** A database URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}

/** How Redis event logs are sealed: with the key ring at once, or through a project's (asynchronous) handlers. */
function eventSealer(cipher: StorageCipher): EventSealer {
  const ring = cipher.ring;
  if (ring) {
    return {
      seal: (data) => ring.sealText(data),
      open: (data) => ring.openText(data, "an event of a stream in Redis")?.plain ?? data,
    };
  }
  const where = { model: "run", field: "event" } as const;
  return {
    seal: async (data) =>
      Buffer.from(await cipher.sealBytes(Buffer.from(data, "utf8"), where)).toString("latin1"),
    open: async (data) => {
      const opened = await cipher.openBytes(data, where);
      return typeof opened === "string" ? opened : Buffer.from(opened).toString("utf8");
    },
  };
}

export async function openScaleOutBackend(opts: ScaleOutOptions): Promise<Backend> {
  const { log } = opts;
  const storage = await connectWithBackoff("PostgreSQL", opts.connectTimeoutMs, log, () =>
    openPostgresStorage({
      url: opts.databaseUrl,
      schema: opts.schema,
      storeIndex: opts.storeIndex,
      applicationName: opts.applicationName,
      poolSize: opts.poolSize,
      preparedStatements: opts.preparedStatements,
      cipher: opts.cipher,
      onError: (err) => log.warn(`hangar: PostgreSQL connection lost (the pool replaces it): ${err.message}`),
    }).catch((e) => {
      if (e instanceof MigrationError) throw new StartupError(e.message);
      throw e;
    }),
  );
  const queue = new PgRunQueue(storage.pool, opts.schema, storage.runs, opts.cipher);
  const broker = new RedisBroker({
    url: opts.redisUrl,
    prefix: opts.redisPrefix,
    resumableTtlMs: opts.resumableTtlMs,
    sealer: opts.cipher ? eventSealer(opts.cipher) : null,
    runEnded: (id) => queue.ended(id),
    log,
  });
  try {
    await connectWithBackoff("Redis", opts.connectTimeoutMs, log, () => broker.connect());
  } catch (e) {
    await broker.close().catch(() => {});
    await storage.close().catch(() => {});
    throw e;
  }
  const close = async () => {
    try {
      await broker.close();
    } finally {
      await storage.close();
    }
  };
  return {
    storage,
    queue,
    broker,
    graphThreads: {
      kind: "postgres",
      url: opts.databaseUrl,
      schema: opts.schema,
      poolSize: opts.poolSize,
      wrote: () => storage.checkpointWritten(),
    },
    where: `${redactUrl(opts.databaseUrl)} (schema ${opts.schema}), ${redactUrl(opts.redisUrl)}`,
    close,
    // Nothing to remove: its schema and Redis prefix outlive any one server.
    abandon: close,
  };
}
