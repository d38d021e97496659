// What `hangar backup` and `hangar restore` share: their error, progress lines of a database copy, and the
// summary of what a database holds.
import type { CopyProgress } from "../lib/db/sqlite-backup.js";
import type { DatabaseSummary } from "../storage/sqlite/backup-info.js";

/** A refusal or failure told in one line (no stack): exit code 1. */
export class BackupError extends Error {}

/** Runs a command's body: a BackupError (or any error) is one line on stderr and exit 1. */
export async function reported(command: string, body: () => Promise<void>): Promise<number> {
  try {
    await body();
    return 0;
  } catch (e) {
    const message = e instanceof BackupError ? e.message : ((e as Error)?.message ?? String(e));
    console.error(`hangar ${command}: ${message}`);
    return 1;
  }
}

/**
 * Progress of copying `what`, on stderr: one line rewritten in place on a terminal, else a line per tenth of
 * the pages (a small database says nothing until its summary).
 */
export function progressOf(what: string): (p: CopyProgress) => void {
  const tty = process.stderr.isTTY;
  let lastTenth = 0;
  return ({ copied, total }) => {
    if (total < 1024) return;
    const pct = Math.floor((copied / total) * 100);
    const line = `${what}: ${copied.toLocaleString("en")}/${total.toLocaleString("en")} pages (${pct}%)`;
    const tenth = Math.floor(pct / 10);
    if (tty) {
      if (lastTenth <= 10) process.stderr.write(`\r${line}${copied === total ? "\n" : ""}`);
      if (copied === total) lastTenth = 11; // the line is ended: nothing more
      return;
    }
    if (tenth > lastTenth) {
      lastTenth = tenth;
      process.stderr.write(`${line}\n`);
    }
  };
}

const n = (v: number) => v.toLocaleString("en");

/** Bytes as people read them (KiB, MiB, GiB). */
export function sizeOf(bytes: number): string {
  const units = ["bytes", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return u === 0 ? `${bytes} bytes` : `${v.toFixed(1)} ${units[u]}`;
}

/** The summary lines of an embedded database: threads, runs, checkpoints and the rest. */
export function summaryLines(s: DatabaseSummary, bytes: number): string[] {
  const inFlight = s.runsInFlight ? ` (${n(s.runsInFlight)} pending or running)` : "";
  return [
    `  ${n(s.threads)} threads, ${n(s.runs)} runs${inFlight}, ${n(s.checkpoints)} checkpoints`,
    `  ${n(s.assistants)} assistants, ${n(s.storeItems)} store items, ${n(s.crons)} crons`,
    `  ${sizeOf(bytes)}, schema version ${s.schemaVersion}`,
  ];
}
