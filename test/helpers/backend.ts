// Which backend the e2e suite runs servers on, and the PostgreSQL + Redis plumbing of the "postgres" project:
// one schema + Redis prefix per test deployment (derived from its data dir), dropped after the test file.
// No vitest hooks here: the project's globalSetup imports this module too.
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";

export type Backend = "embedded" | "postgres";

/** The backend servers of this test run use: `HANGAR_TEST_BACKEND=postgres` (the vitest project sets it). */
export const BACKEND: Backend = process.env.HANGAR_TEST_BACKEND === "postgres" ? "postgres" : "embedded";

export const DATABASE_URL = process.env.DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";
export const REDIS_URL = process.env.REDIS_URL || "redis://127.0.0.1:6379";

/** Prefix of every test schema (and Redis prefix); the globalSetup drops stale ones. */
export const TEST_SCHEMA_PREFIX = "t_";

/** Where one test deployment lives on the shared PostgreSQL and Redis. */
export interface ClusterTarget {
  databaseUrl: string;
  redisUrl: string;
  /** HANGAR_DATABASE_SCHEMA */
  schema: string;
  /** HANGAR_REDIS_PREFIX */
  redisPrefix: string;
}

/**
 * The deployment of a data dir: `t_` + a short hash of its absolute path, so a server restarted on the
 * same data dir (restart and recovery tests) finds the same database, and distinct dirs never share one.
 */
export function clusterTargetFor(dataDir: string): ClusterTarget {
  const hash = createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 16);
  const schema = `${TEST_SCHEMA_PREFIX}${hash}`;
  return { databaseUrl: DATABASE_URL, redisUrl: REDIS_URL, schema, redisPrefix: `${schema}:` };
}

/** The env a server needs to run on `target`. */
export function clusterEnv(target: ClusterTarget): Record<string, string> {
  return {
    DATABASE_URL: target.databaseUrl,
    REDIS_URL: target.redisUrl,
    HANGAR_DATABASE_SCHEMA: target.schema,
    HANGAR_REDIS_PREFIX: target.redisPrefix,
  };
}

/** Quotes an SQL identifier. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * A Redis client that fails at once instead of retrying (tests want the error, not a hang); its last
 * connection error is in `lastError` (ioredis rejects with a bare "Connection is closed").
 */
export function testRedis(url = REDIS_URL): Redis & { lastError?: Error } {
  const redis: Redis & { lastError?: Error } = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 5_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  });
  redis.on("error", (e: Error) => (redis.lastError = e));
  return redis;
}

/** A PostgreSQL client (connect it yourself) that gives up connecting after 5 s. */
export function testPg(url = DATABASE_URL): pg.Client {
  return new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
}

/** Deletes every Redis key under `prefix` (SCAN MATCH + DEL); returns how many. */
export async function deleteRedisPrefix(redis: Redis, prefix: string): Promise<number> {
  const pattern = `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
    cursor = next;
    if (keys.length) deleted += await redis.del(...keys);
  } while (cursor !== "0");
  return deleted;
}

/** Drops a deployment's schema and Redis keys (the servers on it must be stopped already). */
export async function dropCluster(target: ClusterTarget): Promise<void> {
  const db = testPg(target.databaseUrl);
  const redis = testRedis(target.redisUrl);
  try {
    await db.connect();
    await redis.connect();
    await db.query(`DROP SCHEMA IF EXISTS ${ident(target.schema)} CASCADE`);
    await deleteRedisPrefix(redis, target.redisPrefix);
  } finally {
    await db.end().catch(() => {});
    redis.disconnect();
  }
}
