// What `hangar backup` and `hangar restore` ask of an embedded database file: is it Hangar's, and what does it
// hold (counts for their summaries). Read-only; works on a live database and on a copy.
import Database from "better-sqlite3";

export interface DatabaseSummary {
  assistants: number;
  threads: number;
  runs: number;
  /** Runs pending or running: taken up again when a server starts on this data (as after a crash). */
  runsInFlight: number;
  checkpoints: number;
  storeItems: number;
  crons: number;
  /** The highest migration applied. */
  schemaVersion: number;
}

const REQUIRED_TABLES = ["schema_migrations", "assistants", "threads", "runs"];

/** Why `file` (an SQLite database) is not an Agent Server's embedded database, or undefined when it is. */
export function notHangarDatabase(file: string): string | undefined {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const names = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const missing = REQUIRED_TABLES.filter((t) => !names.has(t));
    if (missing.length) return `it has no ${missing.join(", ")} table${missing.length > 1 ? "s" : ""}`;
    return undefined;
  } finally {
    db.close();
  }
}

/** Counts of what the embedded database `file` holds (one read transaction: a consistent picture). */
export function summarizeDatabase(file: string): DatabaseSummary {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map(
        (r) => r.name,
      ),
    );
    const count = (table: string, where = "") =>
      tables.has(table)
        ? (db.prepare(`SELECT count(*) AS n FROM ${table} ${where}`).get() as { n: number }).n
        : 0;
    return db.transaction(() => ({
      assistants: count("assistants"),
      threads: count("threads"),
      runs: count("runs"),
      runsInFlight: count("runs", "WHERE status IN ('pending', 'running')"),
      checkpoints: count("checkpoints"),
      storeItems: count("store_items"),
      crons: count("crons"),
      schemaVersion: (
        db.prepare("SELECT coalesce(max(version), 0) AS v FROM schema_migrations").get() as { v: number }
      ).v,
    }))();
  } finally {
    db.close();
  }
}
