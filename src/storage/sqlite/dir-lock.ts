// One server per data directory. A second `hangar dev` or `serve` on a directory another server uses would take that
// server's running runs for a crashed process's and run them again beside it, and fire its crons a second time: it
// refuses to start instead. The lock is SQLite's (an exclusive lock on `<data dir>/hangar.lock`, the operating
// system's advisory lock under it), held while the server runs and released when its process ends, however it ends.
import { join } from "node:path";
import Database from "better-sqlite3";
import { StartupError } from "../../lib/errors.js";

/** The lock's file in the data directory (empty of data; nothing else reads it). */
export const LOCK_FILE = "hangar.lock";

export interface DirLock {
  release(): void;
}

/** Takes the data directory (created already) for this server; a StartupError when another process holds it. */
export function lockDataDir(dataDir: string): DirLock {
  const db = new Database(join(dataDir, LOCK_FILE));
  try {
    db.pragma("busy_timeout = 0");
    // It holds no data: no journal file beside it.
    db.pragma("journal_mode = OFF");
    // Kept after the transaction ends, until the connection closes.
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE; COMMIT");
  } catch (e) {
    db.close();
    if ((e as { code?: string }).code === "SQLITE_BUSY") {
      throw new StartupError(
        `the data directory ${dataDir} is in use by another Hangar server; stop it, or give this one another ` +
          "directory (--data-dir)",
      );
    }
    throw e;
  }
  return { release: () => db.close() };
}
