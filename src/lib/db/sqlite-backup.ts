// Online, consistent copies of SQLite databases (the Agent Server's and the control plane's), and the probe that
// tells whether another process has a database open. Used by `hangar backup` and `hangar restore`.
import { closeSync, fsyncSync, openSync, readSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";

/** How far a copy is, in database pages. */
export interface CopyProgress {
  copied: number;
  total: number;
}

export interface CopyResult {
  pages: number;
  bytes: number;
}

/** Pages copied per step of the backup API (the event loop turns between steps). */
const PAGES_PER_STEP = 256;

/** True when `file` starts with SQLite's header (a database file, not its -wal or -shm). */
export function isSqliteFile(file: string): boolean {
  let fd: number | undefined;
  try {
    if (!statSync(file).isFile()) return false;
    fd = openSync(file, "r");
    const head = Buffer.alloc(16);
    return readSync(fd, head, 0, 16, 0) === 16 && head.toString("latin1") === "SQLite format 3\0";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Copies the database `source` to `dest` while other processes may write to it: SQLite's backup API run inside
 * one read transaction, so every page comes from the same snapshot (what was committed when the copy began;
 * a writer's open transaction is not seen) and writers never make the copy start over. The copy is written to
 * `dest.partial`, checked (quick_check), fsynced and renamed into place: `dest` is never half a database.
 */
export async function copyDatabase(
  source: string,
  dest: string,
  onProgress?: (p: CopyProgress) => void,
): Promise<CopyResult> {
  const partial = `${dest}.partial`;
  rmSync(partial, { force: true });
  const src = new Database(source, { fileMustExist: true, timeout: 5000 });
  let pages = 0;
  try {
    // The snapshot is taken by the first read of the transaction; the backup's steps read from it.
    src.exec("BEGIN");
    src.prepare("SELECT count(*) FROM sqlite_master").get();
    await src.backup(partial, {
      progress: ({ totalPages, remainingPages }) => {
        pages = totalPages;
        onProgress?.({ copied: totalPages - remainingPages, total: totalPages });
        return PAGES_PER_STEP;
      },
    });
    src.exec("COMMIT");
    // The backup API reports before each step, not after the last one.
    onProgress?.({ copied: pages, total: pages });
  } catch (e) {
    rmSync(partial, { force: true });
    throw e;
  } finally {
    src.close();
  }
  const check = new Database(partial, { fileMustExist: true });
  try {
    // A copy stands alone: in rollback-journal mode, reading it (the summary, a look with sqlite3) leaves no -wal and
    // -shm files beside it. The server that opens it turns WAL on again.
    check.pragma("journal_mode = DELETE");
    const result = check.pragma("quick_check", { simple: true });
    if (result !== "ok")
      throw new Error(`the copy of ${source} fails SQLite's quick_check: ${String(result)}`);
  } catch (e) {
    check.close();
    rmSync(partial, { force: true });
    throw e;
  }
  check.close();
  rmSync(`${partial}-wal`, { force: true });
  rmSync(`${partial}-shm`, { force: true });
  syncFile(partial);
  renameSync(partial, dest);
  syncFile(dirname(dest));
  return { pages, bytes: statSync(dest).size };
}

/** fsyncs a file or a directory (its entries). */
export function syncFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Whether another process has the database `file` open. A WAL database's connections keep a shared lock on its
 * file for as long as they are open (SQLite's own POSIX locks, released by the system when a process ends, even
 * killed); this asks for an exclusive one without waiting. Opening it may replay a crashed process's WAL into the
 * database (what any next open does). Same-process connections are not seen (POSIX locks are per process).
 */
export function databaseInUse(file: string): boolean {
  const db = new Database(file, { fileMustExist: true, timeout: 0 });
  try {
    db.pragma("locking_mode = EXCLUSIVE");
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    return false;
  } catch (e) {
    if ((e as { code?: string }).code?.startsWith("SQLITE_BUSY")) return true;
    throw e;
  } finally {
    db.close();
  }
}
