// globalSetup of the "postgres" vitest project: PostgreSQL (DATABASE_URL) and Redis (REDIS_URL) must be
// reachable, or the run fails here with one clear message (CI must fail, not skip). Then drops the test
// deployments (`t_*` schemas and their Redis prefixes) that earlier runs left behind.
import {
  DATABASE_URL,
  REDIS_URL,
  TEST_SCHEMA_PREFIX,
  deleteRedisPrefix,
  ident,
  testPg,
  testRedis,
} from "./backend.ts";

/**
 * A test schema is stale when its first migration is older than this. No run lasts that long, so a run
 * started meanwhile (another terminal, another CI job on this machine) keeps its schemas.
 */
const STALE_AFTER_MS = 30 * 60_000;

const redact = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");

export default async function setup(): Promise<void> {
  const db = testPg();
  const redis = testRedis();
  try {
    try {
      await db.connect();
      await db.query("SELECT 1");
    } catch (e) {
      throw new Error(
        `The "postgres" test project needs PostgreSQL at ${redact(DATABASE_URL)} (set DATABASE_URL): ` +
          `${(e as Error).message || String(e)}`,
      );
    }
    try {
      await redis.connect();
      await redis.ping();
    } catch (e) {
      throw new Error(
        `The "postgres" test project needs Redis at ${redact(REDIS_URL)} (set REDIS_URL): ` +
          `${redis.lastError?.message ?? ((e as Error).message || String(e))}`,
      );
    }
    await dropStale(db, redis);
  } finally {
    await db.end().catch(() => {});
    redis.disconnect();
  }
}

async function dropStale(db: ReturnType<typeof testPg>, redis: ReturnType<typeof testRedis>) {
  const { rows } = await db.query<{ schema: string }>(
    `SELECT n.nspname AS schema FROM pg_namespace n
      WHERE n.nspname LIKE $1
        AND EXISTS (SELECT 1 FROM pg_class c WHERE c.relnamespace = n.oid AND c.relname = 'schema_migrations')`,
    [`${TEST_SCHEMA_PREFIX.replace(/_/g, "\\_")}%`],
  );
  const cutoff = new Date(Date.now() - STALE_AFTER_MS);
  // A schema a forgotten server still holds is skipped, not waited for.
  await db.query("SET lock_timeout = '2s'");
  let dropped = 0;
  for (const { schema } of rows) {
    try {
      const { rows: age } = await db.query<{ first: Date | null }>(
        `SELECT min(applied_at) AS first FROM ${ident(schema)}.schema_migrations`,
      );
      if (!age[0].first || age[0].first >= cutoff) continue;
      await db.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
      await deleteRedisPrefix(redis, `${schema}:`);
      dropped++;
    } catch {
      // Dropped meanwhile, or locked by a run still using it: leave it to the next run.
    }
  }
  if (dropped) console.log(`postgres project: dropped ${dropped} stale test schema(s)`);
}
