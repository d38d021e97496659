// PostgreSQL backend only: migrations under an advisory lock with a ledger, on the machine's real PostgreSQL
// (DATABASE_URL, default postgres://postgres@127.0.0.1:5432/postgres), in a fresh schema per test file.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { ident, migratePostgres } from "../../src/storage/postgres/migrate.ts";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const schema = `hangar_test_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
const pools: pg.Pool[] = [];
const pool = () => {
  const p = new pg.Pool({ connectionString: URL, max: 2 });
  pools.push(p);
  return p;
};

afterAll(async () => {
  await pools[0]?.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  await Promise.all(pools.map((p) => p.end()));
});

describe("PostgreSQL migrations", () => {
  it("five processes starting at once apply each migration exactly once", async () => {
    const results = await Promise.all(Array.from({ length: 5 }, () => migratePostgres(pool(), schema)));
    const applied = results.flat();
    expect(applied.length).toBeGreaterThan(0);
    expect(new Set(applied).size).toBe(applied.length);
    expect(results.filter((r) => r.length > 0)).toHaveLength(1);
    const { rows } = await pools[0].query(
      `SELECT version FROM ${ident(schema)}.schema_migrations ORDER BY version`,
    );
    expect(rows.map((r) => r.version)).toEqual([...applied].sort((a, b) => a - b));
    const tables = await pools[0].query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name",
      [schema],
    );
    expect(tables.rows.map((r) => r.table_name)).toEqual(
      expect.arrayContaining(["assistants", "threads", "runs", "crons", "store_items", "schema_migrations"]),
    );
    // Running again is a no-op.
    expect(await migratePostgres(pool(), schema)).toEqual([]);
  });

  it("refuses a schema with migrations newer than this build, changing nothing", async () => {
    await pools[0].query(
      `INSERT INTO ${ident(schema)}.schema_migrations (version, name) VALUES (999, 'future.sql')`,
    );
    await expect(migratePostgres(pool(), schema)).rejects.toThrow(/999.*upgrade Hangar/);
    const { rows } = await pools[0].query(
      `SELECT count(*)::int AS n FROM ${ident(schema)}.schema_migrations`,
    );
    expect(rows[0].n).toBeGreaterThan(1);
  });
});
