// Group commit for the embedded database. Writes join one open transaction; `sync()` commits it and then
// fsyncs the WAL file off the event loop (libuv thread pool), so one fsync covers every write committed
// before it started, and a change is acknowledged to a client only once it is on stable storage.
import { fsync, openSync, closeSync, constants } from "node:fs";
import type Database from "better-sqlite3";

type Waiter = { resolve: () => void; reject: (e: unknown) => void };

export class GroupCommit {
  private timer: NodeJS.Timeout | undefined;
  private commitScheduled = false;
  /** Waiting for the open transaction to commit (then for an fsync). */
  private commitWaiters: Waiter[] = [];
  /** Committed, waiting for an fsync that starts after their commit. */
  private fsyncWaiters: Waiter[] = [];
  private fsyncing = false;
  /** Commits not yet covered by an fsync. */
  private dirty = false;
  private walFd: number | undefined;

  /**
   * @param walPath the WAL file to fsync, or undefined to skip fsync (durable against a process crash only)
   * @param maxDelayMs commit at the latest this long after the first write, even if nobody waits
   */
  constructor(
    private db: Database.Database,
    private walPath: string | undefined,
    private maxDelayMs = 25,
  ) {}

  /** Opens the shared transaction if none is open. Call before every write. */
  begin(): void {
    if (this.db.inTransaction) return;
    this.db.exec("BEGIN");
    this.timer = setTimeout(() => this.commit(), this.maxDelayMs);
    this.timer.unref();
  }

  /** Resolves once everything written so far is committed and, with a WAL path, fsynced. */
  sync(): Promise<void> {
    if (!this.db.inTransaction && (!this.dirty || !this.walPath)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      if (this.db.inTransaction) {
        this.commitWaiters.push({ resolve, reject });
        if (!this.commitScheduled) {
          this.commitScheduled = true;
          // Let the writes of this turn of the event loop join before the commit.
          setImmediate(() => this.commit());
        }
      } else {
        this.fsyncWaiters.push({ resolve, reject });
        this.flush();
      }
    });
  }

  /** Commits the open transaction (synchronously) and starts an fsync for those waiting. */
  commit(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.commitScheduled = false;
    const waiters = this.commitWaiters;
    this.commitWaiters = [];
    try {
      if (this.db.open && this.db.inTransaction) {
        this.db.exec("COMMIT");
        this.dirty = true;
      }
    } catch (e) {
      if (this.db.open && this.db.inTransaction) this.db.exec("ROLLBACK");
      for (const w of waiters) w.reject(e);
      return;
    }
    if (!this.walPath) {
      for (const w of waiters) w.resolve();
      return;
    }
    this.fsyncWaiters.push(...waiters);
    if (this.fsyncWaiters.length) this.flush();
  }

  private flush(): void {
    if (this.fsyncing || !this.fsyncWaiters.length) return;
    const batch = this.fsyncWaiters;
    this.fsyncWaiters = [];
    this.dirty = false;
    this.fsyncing = true;
    this.walFd ??= openSync(this.walPath!, constants.O_RDONLY | constants.O_CREAT);
    fsync(this.walFd, (err) => {
      this.fsyncing = false;
      for (const w of batch)
        if (err) w.reject(err);
        else w.resolve();
      this.flush();
    });
  }

  /** Commits what is open and releases the WAL descriptor (the database closes after this). */
  close(): void {
    this.commit();
    if (this.walFd !== undefined) closeSync(this.walFd);
    this.walFd = undefined;
  }
}
