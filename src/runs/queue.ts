// The in-process run queue: one run at a time per thread (in order), and at most `maxConcurrent` runs
// executing at once. It knows nothing of graphs: `start` executes a job and resolves when it is done.

export interface QueuedJob {
  run: { run_id: string; thread_id: string | null };
}

export class RunQueue<J extends QueuedJob> {
  /** The job holding each thread (executing, or ready and waiting for a slot). */
  private holding = new Map<string, J>();
  /** Jobs waiting for their thread, in order. */
  private waiting = new Map<string, J[]>();
  /** Jobs whose thread is free, waiting for a slot. */
  private ready: J[] = [];
  private executing = 0;
  private stopped = false;

  constructor(
    private maxConcurrent: number,
    private start: (job: J) => Promise<void>,
  ) {}

  private waitingFor(threadId: string): J[] {
    let q = this.waiting.get(threadId);
    if (!q) {
      q = [];
      this.waiting.set(threadId, q);
    }
    return q;
  }

  /** Queues a job behind its thread's runs. */
  add(job: J): void {
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
   * Takes a job that has not started out of the queue. Returns whether it held its thread (then the caller
   * must `release` the thread once it has settled the job).
   */
  remove(job: J): { heldThread: boolean } {
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

  get running(): number {
    return this.executing;
  }

  /** Starts nothing more (shutdown). */
  stop(): void {
    this.stopped = true;
  }
}
