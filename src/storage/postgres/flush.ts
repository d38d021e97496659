// Group commit on PostgreSQL: checkpoint writes during a run commit asynchronously (synchronous_commit=off:
// no WAL flush each), and whatever must be acknowledged waits for one flush that covers every write made
// before it, shared by everyone waiting. A transaction that has an id and commits with synchronous_commit
// on flushes the WAL up to its commit record, which includes every earlier commit of any session.
import type pg from "pg";

export class WalFlusher {
  /** Asynchronous commits made by this process, and how many of them a finished flush covers. */
  private written = 0;
  private flushed = 0;
  private inflight: Promise<void> | undefined;

  constructor(private pool: pg.Pool) {}

  /** Records that an asynchronous commit happened (call after it committed). */
  wrote(): void {
    this.written++;
  }

  /** How many asynchronous commits were recorded so far (see covered). */
  counted(): number {
    return this.written;
  }

  /**
   * A transaction that wrote (so has an id) and committed synchronously, begun after `upTo` asynchronous commits
   * were recorded, flushed the WAL past them: a sync need not flush again for those (a run's end, recorded that way
   * after its checkpoints, makes them durable).
   */
  covered(upTo: number): void {
    this.flushed = Math.max(this.flushed, upTo);
  }

  /** Resolves once every asynchronous commit recorded so far is on disk. */
  async sync(): Promise<void> {
    const need = this.written;
    while (this.flushed < need) {
      if (!this.inflight) {
        const upTo = this.written;
        this.inflight = this.pool
          .query("SELECT txid_current()")
          .then(() => {
            this.flushed = Math.max(this.flushed, upTo);
          })
          .finally(() => {
            this.inflight = undefined;
          });
      }
      await this.inflight;
    }
  }
}
