// In-process per-run event channel: the executor publishes, any number of HTTP streams subscribe.
import { toJson } from "../runs/serde.js";

export interface StreamEvent {
  /** Monotonic id within the run, used as the SSE `id:`. */
  id: number;
  event: string;
  /** The data, already serialized as JSON text (serialized once, whatever the number of subscribers). */
  data: string;
}

export class RunChannel {
  private events: StreamEvent[] = [];
  private waiters: (() => void)[] = [];
  private nextId = 0;
  closed = false;

  constructor(readonly runId: string) {}

  publish(event: string, data: unknown): void {
    if (this.closed) return;
    this.events.push({ id: this.nextId++, event, data: toJson(data) });
    this.wake();
  }

  close(): void {
    this.closed = true;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }

  /** Events from index `from` on, until the channel closes or the signal aborts. */
  async *subscribe(from = 0, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    let i = from;
    let wake: (() => void) | undefined;
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      while (!signal?.aborted) {
        while (i < this.events.length) yield this.events[i++];
        if (this.closed) return;
        await new Promise<void>((res) => {
          wake = res;
          this.waiters.push(res);
        });
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Index a new subscriber starts from to see only what comes next. */
  get length(): number {
    return this.events.length;
  }
}

/** Registry of live channels by run id. */
export class StreamBroker {
  private channels = new Map<string, RunChannel>();

  open(runId: string): RunChannel {
    let ch = this.channels.get(runId);
    if (!ch) {
      ch = new RunChannel(runId);
      this.channels.set(runId, ch);
    }
    return ch;
  }

  get(runId: string): RunChannel | undefined {
    return this.channels.get(runId);
  }

  /** Closes a channel and forgets it once its subscribers had the chance to drain. */
  finish(runId: string): void {
    const ch = this.channels.get(runId);
    if (!ch) return;
    ch.close();
    setTimeout(() => this.channels.delete(runId), 1000).unref();
  }
}
