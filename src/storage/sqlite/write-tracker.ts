// Tracks the checkpoint writes of threads, so readers can cache what they derive from a thread's checkpoints and
// know exactly when it goes stale (one process owns the database), in memory that does not grow with threads.
/**
 * A fixed table of sequence numbers: a thread maps to a slot (a hash of its id), and every write of the thread
 * stamps its slot with the next number. A thread's token changes whenever its checkpoints may have changed; it
 * may also change when another thread of the same slot is written (a cache miss, never a stale hit). Nothing is
 * kept per thread.
 */
export class WriteTracker {
  private seq = 0;
  private slots: Float64Array;

  /** @param slotCount slots of the table (8 bytes each) */
  constructor(slotCount = 65_536) {
    this.slots = new Float64Array(slotCount);
  }

  /** FNV-1a of the id, onto the table. */
  private slot(threadId: string): number {
    let h = 0x811c9dc5;
    for (let i = 0; i < threadId.length; i++) h = Math.imul(h ^ threadId.charCodeAt(i), 0x01000193);
    return (h >>> 0) % this.slots.length;
  }

  /** Called on every write of a thread's checkpoints, pending writes, copy or delete. */
  touch(threadId: unknown): void {
    if (typeof threadId !== "string") return;
    this.slots[this.slot(threadId)] = ++this.seq;
  }

  /** Changes whenever the thread's checkpoints may have changed. */
  token(threadId: string): string {
    return String(this.slots[this.slot(threadId)]);
  }
}
