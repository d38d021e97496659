// The embedded run queue (one process): admission through the SQLite run store (busy check and insert in one
// transaction), then, in memory, one run at a time per thread (in order), at most `maxConcurrent` runs
// executing at once, and delayed runs (after_seconds) held until due. It knows nothing of graphs: `start`
// executes a job and resolves when it is done.
import type { RunAdmission, RunInput, RunStore } from "../storage/types.js";
import type { RunQueue } from "./queue.js";

export interface QueuedJob {
  run: { run_id: string; thread_id: string | null };
}

export class LocalRunQueue<J extends QueuedJob> implements RunQueue {
  /** The job holding each thread (executing, or ready and waiting for a slot). */
  private holding = new Map<string, J>();
  /** Jobs waiting for their thread, in order. */
  private waiting = new Map<string, J[]>();
  /** Jobs whose thread is free, waiting for a slot. */
  private ready: J[] = [];
  /** Jobs waiting for their after_seconds delay, with its timer. */
  private delayed = new Map<J, NodeJS.Timeout>();
  private executing = 0;
  private stopped = false;

  constructor(
    private store: RunStore,
    private maxConcurrent: number,
    private start: (job: J) => Promise<void>,
  ) {}

  /** Admission by the run store, in one synchronous transaction (see SqliteRuns.admit). */
  admit(input: RunInput & { thread_id: string }): Promise<RunAdmission> {
    return this.store.admit(input);
  }

  async current(threadId: string): Promise<string | undefined> {
    return this.holding.get(threadId)?.run.run_id;
  }

  async counts(): Promise<{ pending: number; running: number }> {
    let pending = this.delayed.size + this.ready.length;
    for (const q of this.waiting.values()) pending += q.length;
    return { pending, running: this.executing };
  }

  private waitingFor(threadId: string): J[] {
    let q = this.waiting.get(threadId);
    if (!q) {
      q = [];
      this.waiting.set(threadId, q);
    }
    return q;
  }

  /** Queues a job behind its thread's runs, once `afterSeconds` have passed. */
  add(job: J, afterSeconds = 0): void {
    if (afterSeconds > 0) {
      const timer = setTimeout(() => {
        this.delayed.delete(job);
        this.add(job);
      }, afterSeconds * 1000);
      timer.unref();
      this.delayed.set(job, timer);
      return;
    }
    const threadId = job.run.thread_id;
    if (threadId && (this.holding.has(threadId) || this.waiting.get(threadId)?.length)) {
      this.waitingFor(threadId).push(job);
      if (!this.holding.has(threadId)) this.release(threadId);
      return;
    }
    if (threadId) this.holding.set(threadId, job);
    this.ready.push(job);
    this.pump();
  }

  /** Puts a job first in its thread's line (it runs as soon as the current one ends). */
  addFirst(job: J): void {
    this.waitingFor(job.run.thread_id!).unshift(job);
  }

  /** Called when a thread's job ended: the thread's next job goes to the ready list. */
  release(threadId: string): void {
    const next = this.waiting.get(threadId)?.shift();
    if (!this.waiting.get(threadId)?.length) this.waiting.delete(threadId);
    if (next) {
      this.holding.set(threadId, next);
      this.ready.push(next);
      this.pump();
    } else {
      this.holding.delete(threadId);
    }
  }

  /**
   * Takes a job that has not started out of the queue (also one still waiting for its delay). Returns
   * whether it held its thread (then the caller must `release` the thread once it has settled the job).
   */
  remove(job: J): { heldThread: boolean } {
    clearTimeout(this.delayed.get(job));
    this.delayed.delete(job);
    const threadId = job.run.thread_id;
    const q = threadId ? this.waiting.get(threadId) : undefined;
    const inWaiting = q ? q.indexOf(job) : -1;
    if (inWaiting >= 0) q!.splice(inWaiting, 1);
    const inReady = this.ready.indexOf(job);
    if (inReady >= 0) this.ready.splice(inReady, 1);
    return { heldThread: inReady >= 0 };
  }

  private pump(): void {
    while (!this.stopped && this.executing < this.maxConcurrent && this.ready.length) {
      const job = this.ready.shift()!;
      this.executing++;
      void this.start(job).finally(() => {
        this.executing--;
        this.pump();
      });
    }
  }

  /** The job holding the thread, if any. */
  holder(threadId: string): J | undefined {
    return this.holding.get(threadId);
  }

  /** Starts nothing more (shutdown); delayed jobs stay recorded and are picked up by the next start. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.delayed.values()) clearTimeout(timer);
    this.delayed.clear();
  }
}
