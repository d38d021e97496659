// SQLite migrations, for the Agent Server's storage and the control plane's store alike: numbered .sql files of
// a directory applied in order, each in its own transaction, recorded in a ledger table.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { MigrationError } from "../errors.js";

/**
 * Applies pending migrations of `dir` in order, each in its own transaction; refuses a database newer than the
 * build. `what` names the database in that refusal.
 */
export function migrateSqlite(db: Database.Database, dir: string, what: string): void {
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
    throw new MigrationError(
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
