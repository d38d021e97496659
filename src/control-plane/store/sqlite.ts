// The control plane's store on SQLite: `<data-dir>/control-plane.db` (WAL), numbered migrations under a ledger,
// deployments' secrets sealed with the store's key; the statements are queries.ts's, on better-sqlite3.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { KeyedLock } from "../../lib/keyed-lock.js";
import { migrateSqlite } from "../../lib/db/sqlite.js";
import type { Logger } from "../../lib/logger.js";
import { loadSecretBox, wrongKeyError, type SecretBox } from "../domain/secrets-crypto.js";
import type { CpStore } from "../domain/types.js";
import { cpStoreOn } from "./queries.js";
import type { Row, SqlDb, SqlExec } from "./sql.js";

/** The store's file in the control plane's data directory. */
export const CP_DB_FILE = "control-plane.db";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations", "sqlite");

/** Applies the control plane's pending SQLite migrations (the Agent Server's runner, on its own directory). */
export const migrate = (db: Database.Database): void =>
  migrateSqlite(db, MIGRATIONS_DIR, "control plane database");

export interface CpSqliteOptions {
  /** The key of deployments' secrets; default loadSecretBox (HANGAR_CP_SECRET_KEY, else `<dataDir>/secret.key`). */
  secretBox?: SecretBox;
  /** HANGAR_CP_SECRET_KEY's value, when no secretBox is given; default this process's setting. */
  secretKey?: string;
  /** Told when a key file is generated. */
  log?: Logger;
}

/**
 * Opens (creating and migrating if needed) the control plane's SQLite store in `dataDir`. Deployments' secrets
 * are stored encrypted (secrets-crypto.ts); a store sealed with another key is refused (SecretKeyError).
 */
export function openCpSqliteStore(dataDir: string, opts: CpSqliteOptions = {}): CpStore {
  mkdirSync(dataDir, { recursive: true });
  const box = opts.secretBox ?? loadSecretBox({ secretKey: opts.secretKey, dataDir, log: opts.log });
  const db = new Database(join(dataDir, CP_DB_FILE));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("busy_timeout = 5000");
    // Deleted or rewritten content is overwritten, not left in free space (secrets of older versions).
    db.pragma("secure_delete = ON");
    migrate(db);
    sealStoredSecrets(db, box);
  } catch (e) {
    db.close();
    throw e;
  }
  return cpStoreOn(sqliteDb(db), {
    box,
    dataDir,
    async close() {
      if (db.open) db.close();
    },
  });
}

/**
 * Binds the store to the secrets key: records its id on first use, refuses another key (SecretKeyError), then
 * encrypts the secrets of rows written before encryption (a JSON array in the `secrets` column).
 */
function sealStoredSecrets(db: Database.Database, box: SecretBox): void {
  const sealed = db.transaction(() => {
    db.prepare(
      "INSERT INTO store_settings (key, value) VALUES ('secrets_key_id', ?) ON CONFLICT DO NOTHING",
    ).run(box.keyId);
    const { value } = db
      .prepare("SELECT value FROM store_settings WHERE key = 'secrets_key_id'")
      .get() as Row;
    if (value !== box.keyId) throw wrongKeyError(value, box);
    const plain = db
      .prepare("SELECT id, secrets FROM deployments WHERE json_type(secrets) <> 'text'")
      .all() as Row[];
    const update = db.prepare("UPDATE deployments SET secrets = ? WHERE id = ?");
    for (const r of plain) {
      const secrets = box.open(JSON.parse(r.secrets), r.id);
      update.run(JSON.stringify(box.seal(secrets, r.id)), r.id);
    }
    return plain.length;
  })();
  // The plaintext must not survive in the file: freed cells are zeroed (secure_delete, set on open) and the
  // pages written through the WAL are copied back and the WAL emptied.
  if (sealed) db.pragma("wal_checkpoint(TRUNCATE)");
}

const UNIQUE_CODES = ["SQLITE_CONSTRAINT_UNIQUE", "SQLITE_CONSTRAINT_PRIMARYKEY"];

/**
 * `SqlDb` on one better-sqlite3 connection. Statements run synchronously; a transaction spans the awaits of its
 * function, so while one is open every other statement waits for its end (the connection has one transaction
 * for everybody), and transactions run one after the other.
 */
function sqliteDb(db: Database.Database): SqlDb {
  const exec: SqlExec = {
    one: async (sql, args = []) => db.prepare(sql).get(...args) as Row | undefined,
    all: async (sql, args = []) => db.prepare(sql).all(...args) as Row[],
    run: async (sql, args = []) => db.prepare(sql).run(...args).changes,
  };
  const lock = new KeyedLock<"tx">();
  /** Outside a transaction: at once when none is open, else after the open ones. */
  const outside =
    <A extends unknown[], R>(fn: (...a: A) => Promise<R>) =>
    (...a: A): Promise<R> =>
      lock.busy("tx") ? lock.run("tx", () => fn(...a)) : fn(...a);
  return {
    one: outside(exec.one),
    all: outside(exec.all),
    run: outside(exec.run),
    tx: (fn) =>
      lock.run("tx", async () => {
        db.exec("BEGIN IMMEDIATE");
        try {
          const out = await fn(exec);
          db.exec("COMMIT");
          return out;
        } catch (e) {
          if (db.inTransaction) db.exec("ROLLBACK");
          throw e;
        }
      }),
    table: (name) => name,
    toJson: (v) => JSON.stringify(v),
    fromJson: (v) => JSON.parse(v as string),
    text: (v) => v,
    contains: (column) => `instr(lower(${column}), lower(?)) > 0`,
    forUpdate: "",
    isUniqueViolation: (e) => UNIQUE_CODES.includes((e as { code?: string }).code ?? ""),
    insertLogs: outside(async (lines) => {
      const stmt = db.prepare(
        "INSERT INTO logs (deployment_id, revision_id, kind, level, message, timestamp) VALUES (?, ?, ?, ?, ?, ?)",
      );
      db.transaction(() => {
        for (const l of lines)
          stmt.run(l.deployment_id, l.revision_id, l.kind, l.level, l.message, l.timestamp);
      })();
    }),
  };
}
