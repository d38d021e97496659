// Tracks, per thread, the sequence number of the last checkpoint write, so readers can cache what they
// derive from a thread's checkpoints and know exactly when it goes stale (one process owns the database).
export class WriteTracker {
  private seq = 0;
  private last = new Map<string, number>();

  /** Called on every write of a thread's checkpoints, pending writes, copy or delete. */
  touch(threadId: unknown): void {
    if (typeof threadId !== "string") return;
    if (this.last.size >= this.maxThreads) {
      // Forgetting threads is only safe together with every cache keyed by their tokens.
      this.last.clear();
      this.epoch++;
    }
    this.last.set(threadId, ++this.seq);
  }

  /** Changes whenever the thread's checkpoints may have changed (and when the tracker forgot threads). */
  token(threadId: string): string {
    return `${this.epoch}:${this.last.get(threadId) ?? 0}`;
  }

  private epoch = 0;

  constructor(private maxThreads = 100_000) {}
}
