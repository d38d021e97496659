// In-process event logs: a run's events (one publisher, any number of subscribers, resumable by event id)
// and a thread's events (every run on the thread, lifecycle and state updates; bounded; an idle thread's log is
// kept only within a cache of bounded size).
import { RawJson, toJson } from "../lib/serde.js";

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
 * The run and thread event logs, and the signals between the run service and the workers, as the API and the
 * run executors see them. The embedded broker keeps them in this process's memory; the Redis one keeps them in
 * Redis Streams and pub/sub, so every replica reads what any worker wrote and every worker hears every signal.
 */
export interface Broker {
  /** The log a run publishes to (created on first use). */
  open(runId: string): EventSink & EventSource;
  /**
   * A run's log for reading, if it may still hold events (the Redis broker always answers: the log may be in
   * Redis, or come; it ends at once if it is gone).
   */
  get(runId: string): EventSource | undefined;
  /** Ends a run's log with its result: a resumable one stays joinable for the TTL. */
  finish(runId: string, resumable: boolean, result?: unknown): void;
  /** Waits for a run's log to end and returns the result it carries (undefined if it was lost). */
  result(runId: string, signal?: AbortSignal): Promise<unknown>;
  /** The thread's log. */
  thread(threadId: string): EventSink & EventSource;
  /** Forgets a deleted thread's log (open subscribers end). */
  dropThread(threadId: string): void;
  /**
   * Keeps the thread's log in memory until the returned function is called (a run in progress on the thread):
   * a log with no holder and no subscriber may be dropped once idle logs exceed their cache.
   */
  holdThread(threadId: string): () => void;
  /** Publishes a signal (a cancellation, a wake-up) to every process sharing the broker, this one included. */
  signal(channel: string, message: string): Promise<void>;
  /** Handles a signal channel in this process. */
  onSignal(channel: string, handler: (message: string) => void): Promise<void>;
  close(): Promise<void>;
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
  if (data instanceof RawJson) return data.json;
  if (lastSerialized?.value === data) return lastSerialized.json;
  const entry = { value: data, json: toJson(data) };
  if (!lastSerialized) queueMicrotask(() => (lastSerialized = undefined));
  lastSerialized = entry;
  return entry.json;
}

/** What an event costs beside its data, and a log beside its events (estimates, for the cache's accounting). */
const EVENT_OVERHEAD = 100;
const LOG_OVERHEAD = 400;

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
    firstId = 0,
  ) {
    this.base = firstId;
  }

  /** About the memory the kept events take (their data, plus a little per event). */
  get size(): number {
    return this.bytes + this.events.length * EVENT_OVERHEAD;
  }

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

/** A run's event log; once it ends, the result it ended with. */
export class RunChannel extends EventLog {
  result: unknown;
  private end: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(readonly runId: string) {
    super();
  }

  override close(): void {
    super.close();
    this.end?.resolve();
  }

  /** Resolves with the run's result once the log ends (or undefined when the signal aborts first). */
  async ended(signal?: AbortSignal): Promise<unknown> {
    if (!this.closed) {
      if (!this.end) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        this.end = { promise, resolve };
      }
      if (signal?.aborted) return undefined;
      await (signal
        ? Promise.race([
            this.end.promise,
            new Promise((r) => signal.addEventListener("abort", r, { once: true })),
          ])
        : this.end.promise);
    }
    return this.closed ? this.result : undefined;
  }
}

/**
 * A thread's log, as the broker keeps it: in use while a run on the thread holds it or a client reads it; the
 * broker is told when it becomes idle or changes while idle (see StreamBroker).
 */
class ThreadLog extends EventLog {
  /** Holders (runs in progress) and subscribers. */
  users = 0;

  constructor(
    readonly threadId: string,
    private broker: StreamBroker,
    maxEvents: number,
    maxBytes: number,
    firstId: number,
  ) {
    super(maxEvents, maxBytes, firstId);
  }

  override publishRaw(event: string, data: string): number {
    const id = super.publishRaw(event, data);
    if (this.users === 0) this.broker.idled(this);
    return id;
  }

  override async *subscribe(from: StreamFrom = 0, signal?: AbortSignal): AsyncGenerator<StreamEvent> {
    this.broker.use(this);
    try {
      yield* super.subscribe(from, signal);
    } finally {
      this.broker.unuse(this);
    }
  }
}

/**
 * Registry of run logs (kept after the run for resumable streams) and thread logs. A thread's log stays while
 * a run on the thread holds it or a client reads it; idle, it goes into a cache bounded in size (the logs idle
 * longest are dropped first), so memory follows what is active, not every thread ever served. A thread's log
 * made again after one was dropped numbers its events after every id a dropped log used, so a client resuming
 * with an older Last-Event-ID gets all of the new log.
 */
export class StreamBroker implements Broker {
  private runs = new Map<string, RunChannel>();
  private threads = new Map<string, ThreadLog>();
  /** The idle thread logs, idle longest first, with the size each was counted at; and their sum. */
  private idle = new Map<ThreadLog, number>();
  private idleBytes = 0;
  /** Above every event id of a dropped thread log: where a thread's next log starts. */
  private nextFirstId = 0;
  private handlers = new Map<string, (message: string) => void>();

  /**
   * @param resumableTtlMs how long a resumable run's events stay joinable after it ends
   * @param threadLogEvents, @param threadLogBytes the latest events each thread's log keeps for replay
   * @param idleThreadLogBytes the size of the idle thread logs kept, in all (HANGAR_THREAD_LOGS_CACHE_BYTES)
   */
  constructor(
    private resumableTtlMs = 10 * 60_000,
    private threadLogEvents = 2_000,
    private threadLogBytes = 2 * 1024 * 1024,
    private idleThreadLogBytes = 8 * 1024 * 1024,
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

  /**
   * Closes a run log with its result (kept in memory as it is: the embedded API sends it without a copy); a
   * resumable one stays joinable for the TTL, others go once subscribers drained.
   */
  finish(runId: string, resumable: boolean, result?: unknown): void {
    const ch = this.runs.get(runId);
    if (!ch) return;
    ch.result = result;
    ch.close();
    setTimeout(() => this.runs.delete(runId), resumable ? this.resumableTtlMs : 1000).unref();
  }

  /** A run's result once its log ends; undefined for a log this broker does not have (or no longer has). */
  async result(runId: string, signal?: AbortSignal): Promise<unknown> {
    return this.runs.get(runId)?.ended(signal);
  }

  async signal(channel: string, message: string): Promise<void> {
    const handler = this.handlers.get(channel);
    // As from Redis: the handler runs later, never inside the sender's call.
    if (handler) queueMicrotask(() => handler(message));
  }

  async onSignal(channel: string, handler: (message: string) => void): Promise<void> {
    this.handlers.set(channel, handler);
  }

  /** The thread's log (created on first use: idle until held or read). */
  thread(threadId: string): EventLog {
    let log = this.threads.get(threadId);
    if (!log) {
      log = new ThreadLog(threadId, this, this.threadLogEvents, this.threadLogBytes, this.nextFirstId);
      this.threads.set(threadId, log);
      this.idled(log);
    }
    return log;
  }

  holdThread(threadId: string): () => void {
    const log = this.thread(threadId) as ThreadLog;
    this.use(log);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.unuse(log);
    };
  }

  /** Forgets a deleted thread's log (open subscribers end); a thread made again with its id starts afresh. */
  dropThread(threadId: string): void {
    const log = this.threads.get(threadId);
    if (!log) return;
    this.unidle(log);
    this.threads.delete(threadId);
    log.close();
  }

  /** Idle thread logs kept, and their size (for tests and metrics). */
  idleThreadLogs(): { count: number; bytes: number } {
    return { count: this.idle.size, bytes: this.idleBytes };
  }

  /** @internal A holder or subscriber starts using the log: it is no longer idle. */
  use(log: ThreadLog): void {
    log.users++;
    this.unidle(log);
    this.attach(log);
  }

  /** @internal A holder or subscriber is done with the log. */
  unuse(log: ThreadLog): void {
    if (--log.users === 0) this.idled(log);
  }

  /** @internal The log is idle (or changed while idle): it goes last in the cache, which is then trimmed. */
  idled(log: ThreadLog): void {
    if (!this.attach(log)) return;
    this.unidle(log);
    const size = log.size + LOG_OVERHEAD;
    this.idle.set(log, size);
    this.idleBytes += size;
    for (const oldest of this.idle.keys()) {
      if (this.idleBytes <= this.idleThreadLogBytes) break;
      this.forget(oldest);
    }
  }

  /**
   * Whether `log` is its thread's log. One dropped from the cache while someone still had it (between `thread()`
   * and its first read or write) is the thread's again if no other log was made for the thread meanwhile.
   */
  private attach(log: ThreadLog): boolean {
    const current = this.threads.get(log.threadId);
    if (current === undefined && !log.closed) this.threads.set(log.threadId, log);
    return (current ?? log) === log && !log.closed;
  }

  private unidle(log: ThreadLog): void {
    const size = this.idle.get(log);
    if (size === undefined) return;
    this.idle.delete(log);
    this.idleBytes -= size;
  }

  private forget(log: ThreadLog): void {
    this.unidle(log);
    if (this.threads.get(log.threadId) === log) this.threads.delete(log.threadId);
    this.nextFirstId = Math.max(this.nextFirstId, log.nextId);
  }

  async close(): Promise<void> {}
}
