// Opens the embedded SQLite database (WAL) and applies the numbered .sql migrations under a ledger.
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

export type Synchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

export function openDatabase(dataDir: string, synchronous: Synchronous = "NORMAL"): Database.Database {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, "hangar.sqlite"));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  migrate(db);
  // Make the directory entries of the database and its WAL durable once, at open.
  const dirFd = openSync(dataDir, "r");
  fsyncSync(dirFd);
  closeSync(dirFd);
  return db;
}

/**
 * Applies pending migrations of `dir` in order, each in its own transaction; refuses a database newer than the
 * build. `what` names the database in that refusal.
 */
export function migrate(db: Database.Database, dir = MIGRATIONS_DIR, what = "database schema"): void {
  db.exec(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)",
  );
  const files = readdirSync(dir)
    .filter((f) => /^\d+_.+\.sql$/.test(f))
    .sort();
  const known = new Set(files.map((f) => parseInt(f, 10)));
  const applied = db.prepare("SELECT version FROM schema_migrations").all() as { version: number }[];
  const newer = applied.filter((r) => !known.has(r.version));
  if (newer.length) {
    throw new Error(
      `${what} has migrations this build does not know (${newer.map((r) => r.version).join(", ")}); upgrade Hangar`,
    );
  }
  const done = new Set(applied.map((r) => r.version));
  for (const file of files) {
    const version = parseInt(file, 10);
    if (done.has(version)) continue;
    const sql = readFileSync(join(dir, file), "utf8");
    db.transaction(() => {
      db.exec(sql);
      db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        version,
        file,
        new Date().toISOString(),
      );
    })();
  }
}
