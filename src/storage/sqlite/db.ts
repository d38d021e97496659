// Opens the embedded SQLite database (WAL) and applies its numbered .sql migrations (lib/db/sqlite.ts).
import { closeSync, fsyncSync, mkdirSync, openSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { migrateSqlite } from "../../lib/db/sqlite.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations");

/** The database's file in the data directory (the rest of a data dir, e.g. schemas-cache/, can be rebuilt). */
export const DB_FILE = "hangar.sqlite";

export type Synchronous = "OFF" | "NORMAL" | "FULL" | "EXTRA";

export function openDatabase(dataDir: string, synchronous: Synchronous = "NORMAL"): Database.Database {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, DB_FILE));
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  db.pragma("foreign_keys = ON");
  db.pragma("busy_timeout = 5000");
  migrateSqlite(db, MIGRATIONS_DIR, "database schema");
  // Make the directory entries of the database and its WAL durable once, at open.
  const dirFd = openSync(dataDir, "r");
  fsyncSync(dirFd);
  closeSync(dirFd);
  return db;
}
