// Group commit for the embedded database: writes join one open transaction; `sync()` commits it with a
// single fsync shared by every write made since. Callers acknowledge a change only after `sync()`.
import type Database from "better-sqlite3";

export class GroupCommit {
  private timer: NodeJS.Timeout | undefined;
  private scheduled = false;
  private waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  /** @param maxDelayMs commit at the latest this long after the first write, even if nobody waits. */
  constructor(
    private db: Database.Database,
    private maxDelayMs = 25,
  ) {}

  /** Opens the shared transaction if none is open. Call before every write. */
  begin(): void {
    if (this.db.inTransaction) return;
    this.db.exec("BEGIN");
    this.timer = setTimeout(() => this.commit(), this.maxDelayMs);
    this.timer.unref();
  }

  /** Resolves once everything written so far is committed (durable per the `synchronous` setting). */
  sync(): Promise<void> {
    if (!this.db.inTransaction) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // Let the writes of this turn of the event loop join before the fsync.
        setImmediate(() => this.commit());
      }
    });
  }

  commit(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.scheduled = false;
    const waiters = this.waiters;
    this.waiters = [];
    if (!this.db.open) {
      for (const w of waiters) w.reject(new Error("database closed"));
      return;
    }
    try {
      if (this.db.inTransaction) this.db.exec("COMMIT");
      for (const w of waiters) w.resolve();
    } catch (e) {
      if (this.db.inTransaction) this.db.exec("ROLLBACK");
      for (const w of waiters) w.reject(e);
    }
  }
}
