// Sweeps threads whose TTL has passed: deletes them (strategy delete) or keeps only their latest
// checkpoint (keep_latest). A thread with a run in progress waits for the next sweep.
import type { Logger } from "../lib/logger.js";
import type { Storage } from "../storage/types.js";
import type { Broker } from "../streams/channel.js";

export class ThreadSweeper {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private storage: Storage,
    private broker: Broker,
    private isBusy: (threadId: string) => Promise<boolean>,
    private log: Logger,
  ) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.sweep(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async sweep(): Promise<number> {
    let n = 0;
    try {
      for (const { thread_id, strategy } of await this.storage.threads.expired(
        new Date().toISOString(),
        500,
      )) {
        if (await this.isBusy(thread_id)) continue;
        if (strategy === "keep_latest") await this.storage.threads.keepLatest(thread_id);
        else if (await this.storage.threads.delete(thread_id)) this.broker.dropThread(thread_id);
        n++;
      }
      if (n) this.log.info(`thread sweeper: ${n} expired thread(s) swept`);
    } catch (e) {
      this.log.warn(`thread sweeper: ${(e as Error).message}`);
    }
    return n;
  }
}
