// `hangar backup` and `hangar restore` of an embedded Agent Server's data directory: its one database,
// hangar.sqlite, copied online and consistently (lib/db/sqlite-backup.ts); the schema cache is left out (rebuilt).
// With --control-plane, the control plane's data directory instead (./backup-control-plane.ts).
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { copyDatabase, databaseInUse, isSqliteFile, syncFile } from "../lib/db/sqlite-backup.js";
import { notHangarDatabase, summarizeDatabase } from "../storage/sqlite/backup-info.js";
import { DB_FILE } from "../storage/sqlite/db.js";
import { BackupError, progressOf, reported, summaryLines } from "./backup-output.js";

export interface BackupOptions {
  config: string;
  dataDir?: string;
  out: string;
  force?: boolean;
  controlPlane?: boolean;
}

export interface RestoreOptions {
  config: string;
  dataDir?: string;
  from: string;
  force?: boolean;
  controlPlane?: boolean;
}

/** The data directory of `hangar dev`/`serve`: --data-dir, else `.hangar` beside langgraph.json. */
function agentDataDir(opts: { config: string; dataDir?: string }): string {
  return opts.dataDir ? resolve(opts.dataDir) : join(dirname(resolve(opts.config)), ".hangar");
}

/** Refuses a file that is not an Agent Server's embedded database, saying why. */
export function checkHangarDatabase(file: string, what: string): void {
  if (!existsSync(file)) throw new BackupError(`${what}: ${file} does not exist`);
  if (!isSqliteFile(file)) throw new BackupError(`${what}: ${file} is not an SQLite database`);
  const why = notHangarDatabase(file);
  if (why) throw new BackupError(`${what}: ${file} is not a Hangar database (${why})`);
}

/** Refuses a database another process has open (a running server), naming it. */
export function refuseInUse(file: string, what: string): void {
  if (isSqliteFile(file) && databaseInUse(file)) {
    throw new BackupError(
      `${what} is in use: a running process (a Hangar server?) has ${file} open; stop it first`,
    );
  }
}

/**
 * Where a backup goes: into an existing directory (or a path ending in /) as `name`, else the file named. An
 * existing file is refused unless `force`.
 */
export function backupTarget(out: string, name: string, force?: boolean): string {
  const dir = out.endsWith("/") || (existsSync(out) && statSync(out).isDirectory());
  const dest = resolve(dir ? join(out, name) : out);
  if (existsSync(dest) && !force) throw new BackupError(`${dest} exists; pass --force to overwrite it`);
  mkdirSync(dirname(dest), { recursive: true });
  return dest;
}

export function runBackup(opts: BackupOptions): Promise<number> {
  return reported("backup", async () => {
    if (opts.controlPlane) {
      const { backupControlPlane } = await import("./backup-control-plane.js");
      return backupControlPlane(opts);
    }
    const dataDir = agentDataDir(opts);
    if (!existsSync(dataDir)) throw new BackupError(`the data directory ${dataDir} does not exist`);
    const source = join(dataDir, DB_FILE);
    if (!existsSync(source)) {
      throw new BackupError(`${dataDir} is not a Hangar data directory (it has no ${DB_FILE})`);
    }
    checkHangarDatabase(source, "the data directory");
    const dest = backupTarget(opts.out, DB_FILE, opts.force);
    if (dest === source) throw new BackupError("--out names the live database itself");
    const started = new Date().toISOString();
    const { bytes } = await copyDatabase(source, dest, progressOf("copying hangar.sqlite"));
    console.log(`backup of ${dataDir} (as of ${started}) written to ${dest}`);
    for (const line of summaryLines(summarizeDatabase(dest), bytes)) console.log(line);
  });
}

/** The database file of a backup: the file given, or `hangar.sqlite` in the directory given. */
function backupFile(from: string): string {
  const path = resolve(from);
  if (!existsSync(path)) throw new BackupError(`the backup ${path} does not exist`);
  return statSync(path).isDirectory() ? join(path, DB_FILE) : path;
}

/**
 * Puts the database `backup` in place as `dataDir`'s `name`: refused while a process has the current one open,
 * or, without `force`, when the directory holds anything. The copy is written beside it, then the old WAL and
 * shared-memory files are removed (a stale WAL must never meet the new file) and the copy renamed into place.
 */
export async function restoreDatabase(
  backup: string,
  dataDir: string,
  name: string,
  force: boolean | undefined,
  what: string,
): Promise<number> {
  const target = join(dataDir, name);
  refuseInUse(target, `the data directory ${dataDir}`);
  if (existsSync(dataDir) && readdirSync(dataDir).length && !force) {
    throw new BackupError(`the data directory ${dataDir} is not empty; pass --force to replace its data`);
  }
  mkdirSync(dataDir, { recursive: true });
  const restoring = `${target}.restoring`;
  const { bytes } = await copyDatabase(backup, restoring, progressOf(what));
  refuseInUse(target, `the data directory ${dataDir}`);
  for (const suffix of ["-wal", "-shm", "-journal"]) rmSync(`${target}${suffix}`, { force: true });
  renameSync(restoring, target);
  syncFile(dataDir);
  return bytes;
}

export function runRestore(opts: RestoreOptions): Promise<number> {
  return reported("restore", async () => {
    if (opts.controlPlane) {
      const { restoreControlPlane } = await import("./backup-control-plane.js");
      return restoreControlPlane(opts);
    }
    const from = backupFile(opts.from);
    checkHangarDatabase(from, "the backup");
    const dataDir = agentDataDir(opts);
    const bytes = await restoreDatabase(from, dataDir, DB_FILE, opts.force, "restoring hangar.sqlite");
    const summary = summarizeDatabase(join(dataDir, DB_FILE));
    console.log(`restored ${from} into ${dataDir}`);
    for (const line of summaryLines(summary, bytes)) console.log(line);
    if (summary.runsInFlight) {
      console.log(
        `  the ${summary.runsInFlight} pending or running runs are taken up again when a server starts on it (as after a crash)`,
      );
    }
  });
}
