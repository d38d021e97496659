// In-process event logs: a run's events (one publisher, any number of subscribers, resumable by event id)
// and a thread's events (every run on the thread, lifecycle and state updates; bounded, never closed).
import { toJson } from "../lib/serde.js";

export interface StreamEvent {
  /** Monotonic id within the log, used as the SSE `id:` and for Last-Event-ID. */
  id: number;
  event: string;
  /** The data, already serialized as JSON text (serialized once, whatever the number of subscribers). */
  data: string;
}

/** Where a subscription starts: an event id (that event and later ones), or "next" (only what comes next). */
export type StreamFrom = number | "next";

/** A log that can be read from any process that has the broker (embedded: this one; Redis: any replica). */
export interface EventSource {
  /** Events from `from` until the log ends or the signal aborts. */
  subscribe(from: StreamFrom, signal?: AbortSignal): AsyncGenerator<StreamEvent>;
  /** The id of the log's newest event (-1 if it holds none): reading up to it reads what is there now. */
  head(): Promise<number>;
}

/** A log a run publishes to (its own, and its thread's). */
export interface EventSink {
  publish(event: string, data: unknown): void;
}

/**
 * The run and thread event logs, as the API and the run executors see them. The embedded broker keeps them in
 * memory; the Redis one keeps them in Redis Streams so every replica reads what any worker wrote.
 */
export interface Broker {
  /** The log a run publishes to (created on first use). */
  open(runId: string): EventSink & EventSource;
  /** A run's log for reading, if it may still hold events. */
  get(runId: string): EventSource | undefined;
  /** Ends a run's log: a resumable one stays joinable for the TTL. */
  finish(runId: string, resumable: boolean): void;
  /** The thread's log. */
  thread(threadId: string): EventSink & EventSource;
  /** Forgets a deleted thread's log (open subscribers end). */
  dropThread(threadId: string): void;
  close(): Promise<void>;
}

/**
 * A broker several processes share (scale-out): a run's log ends with its result, which any process can
 * wait for, and signals (cancellations, wake-ups) reach every process.
 */
export interface ClusterBroker extends Broker {
  /** A run's log for reading, from any process (it ends once the run ended, or at once if it is gone). */
  get(runId: string): EventSource;
  /** Ends a run's log with its result: a resumable one stays joinable for the TTL. */
  finish(runId: string, resumable: boolean, result?: unknown): void;
  /** Reads a run's log to its end and returns the result it carries (undefined if it was lost). */
  result(runId: string, signal?: AbortSignal): Promise<unknown>;
  /** Publishes a signal to every process. */
  signal(channel: string, message: string): Promise<void>;
  /** Handles a signal channel in this process. */
  onSignal(channel: string, handler: (message: string) => void): Promise<void>;
}

/** The last object serialized, kept until the current synchronous turn ends (see `serialize`). */
let lastSerialized: { value: object; json: string } | undefined;

/**
 * An event's data as JSON. A run publishes each event to its own log and its thread's one after the other:
 * the same object in the same turn is serialized once and both logs share the text. (Only within a turn:
 * an object published again later may have changed.)
 */
export function serialize(data: unknown): string {
  if (typeof data !== "object" || data === null) return toJson(data);
  if (lastSerialized?.value === data) return lastSerialized.json;
  const entry = { value: data, json: toJson(data) };
  if (!lastSerialized) queueMicrotask(() => (lastSerialized = undefined));
  lastSerialized = entry;
  return entry.json;
}

export class EventLog implements EventSource, EventSink {
  private events: StreamEvent[] = [];
  /** Id of events[0]; older events were dropped by retention. */
  private base = 0;
  private waiters: (() => void)[] = [];
  closed = false;

  /** Size of the kept events' data (characters). */
  private bytes = 0;

  /**
   * One copy of each event, whatever the number of subscribers: each reads the shared array at its own
   * position. @param maxEvents, @param maxBytes what is kept for replay (older events are dropped)
   */
  constructor(
    private maxEvents = Infinity,
    private maxBytes = Infinity,
  ) {}

  /** Appends an event; returns its id. */
  publish(event: string, data: unknown): number {
    return this.publishRaw(event, serialize(data));
  }

  publishRaw(event: string, data: string): number {
    if (this.closed) return -1;
    const id = this.base + this.events.length;
    this.events.push({ id, event, data });
    this.bytes += data.length;
    // Retention: by count and by size, but the newest event is always kept, however large.
    let drop = 0;
    while (
      drop < this.events.length - 1 &&
      (this.events.length - drop > this.maxEvents || this.bytes > this.maxBytes)
    ) {
      this.bytes -= this.events[drop++].data.length;
    }
    if (drop > 0) {
      this.events.splice(0, drop);
      this.base += drop;
    }
    this.wake();
    return id;
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

  async head(): Promise<number> {
    return this.nextId - 1;
  }

  /** Id the next event will get: subscribing from it yields only what comes next. */
  get nextId(): number {
    return this.base + this.events.length;
  }

  /** Events with id >= `fromId` (from the oldest kept, if dropped), until the log closes or the signal aborts. */
  async *subscribe(from: StreamFrom = 0, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    let id = Math.max(from === "next" ? this.nextId : from, this.base);
    let wake: (() => void) | undefined;
    const onAbort = () => wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      while (!signal?.aborted) {
        if (id < this.base) id = this.base;
        while (id < this.nextId && !signal?.aborted) {
          // A subscriber that fell behind retention (its client was slow) goes on from the oldest event kept.
          if (id < this.base) id = this.base;
          yield this.events[id++ - this.base];
        }
        // Aborted while the reader held an event: the abort's wake-up has passed, so no wait from here on.
        if (this.closed || signal?.aborted) return;
        await new Promise<void>((res) => {
          wake = res;
          this.waiters.push(res);
        });
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** A run's event log. */
export class RunChannel extends EventLog {
  constructor(readonly runId: string) {
    super();
  }
}

/** Registry of run logs (kept after the run for resumable streams) and thread logs. */
export class StreamBroker implements Broker {
  private runs = new Map<string, RunChannel>();
  private threads = new Map<string, EventLog>();

  /**
   * @param resumableTtlMs how long a resumable run's events stay joinable after it ends
   * @param threadLogEvents, @param threadLogBytes the latest events each thread's log keeps for replay
   */
  constructor(
    private resumableTtlMs = 10 * 60_000,
    private threadLogEvents = 2_000,
    private threadLogBytes = 2 * 1024 * 1024,
  ) {}

  open(runId: string): RunChannel {
    let ch = this.runs.get(runId);
    if (!ch) {
      ch = new RunChannel(runId);
      this.runs.set(runId, ch);
    }
    return ch;
  }

  get(runId: string): RunChannel | undefined {
    return this.runs.get(runId);
  }

  /** Closes a run log; a resumable one stays joinable for the TTL, others go once subscribers drained. */
  finish(runId: string, resumable: boolean): void {
    const ch = this.runs.get(runId);
    if (!ch) return;
    ch.close();
    setTimeout(() => this.runs.delete(runId), resumable ? this.resumableTtlMs : 1000).unref();
  }

  /** The thread's log (created on first use). */
  thread(threadId: string): EventLog {
    let log = this.threads.get(threadId);
    if (!log) {
      log = new EventLog(this.threadLogEvents, this.threadLogBytes);
      this.threads.set(threadId, log);
    }
    return log;
  }

  /** Forgets a deleted thread's log (open subscribers end). */
  dropThread(threadId: string): void {
    this.threads.get(threadId)?.close();
    this.threads.delete(threadId);
  }

  async close(): Promise<void> {}
}
