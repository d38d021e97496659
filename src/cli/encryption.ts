// `hangar encryption reencrypt`: seals everything an Agent Server stores with the current LANGGRAPH_AES_KEY —
// values under a key of HANGAR_AES_PREVIOUS_KEYS, and values stored before encryption was on — then records that
// only the current key is in use, so the older keys can be dropped. Safe while servers run: each value is replaced
// only if unchanged since it was read (a concurrent write sealed it already).
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ConfigError, HangarError } from "../lib/errors.js";
import { loadProjectConfig } from "../lib/settings/project.js";
import { loadSettings, SettingsError } from "../lib/settings.js";
import { cipherOf, encryptionSpecOf } from "../storage/encryption/index.js";
import { resealAll, type RawColumns, type ResealProgress } from "../storage/encryption/reseal.js";

export interface ReencryptOptions {
  config: string;
  dataDir?: string;
}

/** Exit code: 0 done, 1 failed, 2 a setting is wrong or missing. */
export async function runReencrypt(opts: ReencryptOptions): Promise<number> {
  let env;
  try {
    const projectEnv = existsSync(opts.config) ? loadProjectConfig(opts.config).env : {};
    env = loadSettings({ ...projectEnv, ...process.env });
    void env.server;
    void env.cluster;
  } catch (e) {
    if (!(e instanceof SettingsError || e instanceof ConfigError)) throw e;
    console.error(`hangar encryption: ${e.message}`);
    return 2;
  }
  let cipher;
  try {
    cipher = cipherOf(encryptionSpecOf(env.server));
  } catch (e) {
    console.error(`hangar encryption: ${(e as Error).message}`);
    return 2;
  }
  if (!cipher?.ring) {
    console.error("hangar encryption: LANGGRAPH_AES_KEY is not set: there is no key to encrypt with");
    return 2;
  }
  const current = cipher.ring.current.id;
  const progress = (p: ResealProgress) =>
    process.stderr.write(`  ${p.table}: ${p.rows} row(s) read, ${p.changed} value(s) encrypted again\n`);
  try {
    const { databaseUrl, databaseSchema } = env.cluster;
    let where: string;
    let results: ResealProgress[];
    if (databaseUrl) {
      const { openPostgresStorage } = await import("../storage/postgres/index.js");
      const { postgresRawColumns } = await import("../storage/postgres/raw-columns.js");
      const { ident } = await import("../storage/postgres/migrate.js");
      const storage = await openPostgresStorage({
        url: databaseUrl,
        schema: databaseSchema,
        cipher,
        poolSize: 2,
      });
      where = `PostgreSQL schema ${databaseSchema}`;
      try {
        results = await resealAll(postgresRawColumns(storage.pool, storage.schema), cipher, progress);
        const { redisUrl, redisPrefix } = env.cluster;
        if (redisUrl) {
          const { resealRedisLogs } = await import("../streams/redis-reseal.js");
          const r = await resealRedisLogs(redisUrl, redisPrefix, cipher.ring);
          process.stderr.write(
            `  redis: ${r.streams} event log(s) read, ${r.events} event(s) encrypted again\n`,
          );
        }
        await storage.pool.query(`DELETE FROM ${ident(storage.schema)}.encryption_keys WHERE key_id <> $1`, [
          current,
        ]);
      } finally {
        await storage.close();
      }
    } else {
      const { openSqliteStorage } = await import("../storage/sqlite/index.js");
      const { sqliteRawColumns } = await import("../storage/sqlite/raw-columns.js");
      const dataDir = opts.dataDir ? resolve(opts.dataDir) : join(dirname(resolve(opts.config)), ".hangar");
      const storage = openSqliteStorage(dataDir, { cipher });
      where = dataDir;
      try {
        const { db, begin } = storage.graphThreadAccess;
        results = await resealAll(skipMissing(sqliteRawColumns(db, begin)), cipher, progress);
        await storage.sync();
        db.prepare("DELETE FROM encryption_keys WHERE key_id <> ?").run(current);
        // What the values replaced held is gone from the file and its write-ahead log too.
        db.exec("VACUUM");
        db.pragma("wal_checkpoint(TRUNCATE)");
      } finally {
        await storage.close();
      }
    }
    const changed = results.reduce((a, r) => a + r.changed, 0);
    console.log(
      `hangar encryption: ${where}: every value is encrypted with the key of id ${current} ` +
        `(${changed} value(s) encrypted again); older keys may now be removed from HANGAR_AES_PREVIOUS_KEYS`,
    );
    return 0;
  } catch (e) {
    if (e instanceof HangarError) {
      console.error(`hangar encryption: ${e.message}`);
      return 1;
    }
    throw e;
  }
}

/** The SQLite tables as they exist (LangGraph's checkpoint tables appear with the first checkpoint). */
function skipMissing(raw: RawColumns): RawColumns {
  return {
    ...raw,
    scan: (table, after, limit, match) =>
      raw.scan(table, after, limit, match).catch((e: Error) => {
        if (/no such table/.test(e.message)) return [];
        throw e;
      }),
  };
}
