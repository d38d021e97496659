// The scale-out broker: run and thread event logs in Redis Streams, readable from every replica (replay by
// event id, TTL), and two signals over pub/sub: run cancellation and queue wake-ups.
//
// Event ids are integers (the SSE `id:`), stored as Redis stream ids `0-<n>`. A publisher proposes a
// time-based n (microseconds) and a script makes it strictly greater than the log's last id, so ids keep
// growing across processes, across a run's retries on another worker, and across a Redis restart.
//
// Readers share one connection per process: a loop does a blocking XREAD over every key someone is reading
// and fans events out; a new reader interrupts the blocked XREAD (CLIENT UNBLOCK) so it is served at once.
import { randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { toJson } from "../lib/serde.js";
import type { Logger } from "../lib/logger.js";
import { streamLimits } from "./limits.js";
import {
  serialize,
  type Broker,
  type EventSink,
  type EventSource,
  type StreamEvent,
  type StreamFrom,
} from "./channel.js";

/** Marks the end of a run's log; its data is the run's result. Never sent to clients. */
export const END_EVENT = "__end__";
/** Marks a deleted thread's log: readers end. */
const DROP_EVENT = "__drop__";

/**
 * Appends a batch of events, in order, to one or more logs: KEYS[1] is the publisher's key and ARGV[1] the batch's
 * number, then ARGV holds six fields per event (the index of its key in KEYS, the id proposal, event, data, TTL
 * ms, max length). Each event's sequence number is above the log's last one (one XREVRANGE per log per batch);
 * each log's TTL is its last event's.
 *
 * A batch is applied once: the client sends a command again when its connection closed before the reply came
 * (the reply lost, not the command), so the publisher's key holds the number of its last batch applied and an
 * older or equal number is skipped. Without it a connection dropped at the wrong moment wrote the batch twice.
 */
const PUBLISH_MANY = `
local n = tonumber(ARGV[1])
local done = tonumber(redis.call('GET', KEYS[1]) or '0')
if n <= done then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', 86400000)
local last = {}
local ttl = {}
for i = 2, #ARGV, 6 do
  local k = tonumber(ARGV[i])
  local seq = last[k]
  if seq == nil then
    seq = 0
    local l = redis.call('XREVRANGE', KEYS[k], '+', '-', 'COUNT', 1)
    if #l > 0 then seq = tonumber(string.match(l[1][1], '-(%d+)$')) end
  end
  local want = tonumber(ARGV[i + 1])
  if want <= seq then want = seq + 1 end
  redis.call('XADD', KEYS[k], 'MAXLEN', '~', ARGV[i + 5], '0-' .. string.format('%.0f', want), 'e', ARGV[i + 2], 'd', ARGV[i + 3])
  last[k] = want
  ttl[k] = ARGV[i + 4]
end
for k, t in pairs(ttl) do redis.call('PEXPIRE', KEYS[k], t) end
return (#ARGV - 1) / 6`;

/** Events per script call at most (a run streaming tokens can publish hundreds in one turn). */
const PUBLISH_BATCH = 256;

interface Outgoing {
  key: string;
  hint: string;
  event: string;
  /** A promise while custom encryption handlers seal it. */
  data: string | Promise<string>;
  ttlMs: number;
  maxLen: number;
}

type PublishingRedis = Redis & {
  hangarPublishMany(keyCount: number, ...keysThenArgs: string[]): Promise<number>;
};

export interface RedisBrokerOptions {
  url: string;
  /** Prefix of every key and channel (several deployments may share one Redis). */
  prefix: string;
  /** How long a resumable run's events stay joinable after it ends. */
  resumableTtlMs: number;
  /** Events kept per thread log. */
  threadLogEvents?: number;
  /** Whether a run has ended (from the database): readers of a log whose end marker was lost stop. */
  runEnded: (runId: string) => Promise<boolean>;
  log: Logger;
  /** Encryption at rest: events are stored sealed by it (absent: in the clear). */
  sealer?: EventSealer | null;
}

/** Encryption at rest of events: synchronous (a key ring), or asynchronous (a project's handlers). */
export interface EventSealer {
  seal(data: string): string | Promise<string>;
  /** Data as stored opened; throws when it cannot be (a key no longer configured). */
  open(data: string): string | Promise<string>;
}

/** A reader of one key: its cursor and the events fanned out to it. */
interface Reader {
  key: string;
  /** Last id delivered (exclusive start of what comes next). */
  cursor: number;
  queue: StreamEvent[];
  /** Size of the queued events' data: at the buffer limit, nothing more is read for this reader. */
  queued: number;
  /** Left out of the read loop while its queue was full: it must be read for again once it drained. */
  paused: boolean;
  wake?: () => void;
  ended: boolean;
}

const seqOf = (id: string): number => Number(id.slice(id.indexOf("-") + 1));

function redisClient(url: string, name: string, log: Logger, opts: object = {}): Redis {
  const client = new Redis(url, {
    connectionName: name,
    lazyConnect: true,
    // Commands wait for a reconnect rather than failing after a few retries (events must not be dropped).
    maxRetriesPerRequest: null,
    retryStrategy: (times) => Math.min(times * 100, 2000),
    ...opts,
  });
  let down = false;
  client.on("error", (e: Error) => {
    if (!down) log.warn(`redis (${name}): ${e.message}; reconnecting`);
    down = true;
  });
  client.on("ready", () => {
    if (down) log.info(`redis (${name}): connected again`);
    down = false;
  });
  return client;
}

/** Connects to Redis, failing with one clear line when it cannot be reached. */
export async function connectRedis(client: Redis, url: string): Promise<void> {
  try {
    await client.connect();
  } catch (e) {
    const where = (() => {
      try {
        const u = new URL(url);
        return `${u.hostname}:${u.port || 6379}`;
      } catch {
        return "the configured REDIS_URL";
      }
    })();
    client.disconnect();
    throw new Error(`cannot reach Redis at ${where}: ${(e as Error).message}`);
  }
}

export class RedisBroker implements Broker {
  private pub: PublishingRedis;
  private reader: Redis;
  private sub: Redis;
  private readers = new Set<Reader>();
  private readerId: number | undefined;
  private blocked = false;
  /** Counts XREAD calls, so a retried UNBLOCK knows whether its XREAD already returned. */
  private iteration = 0;
  /** Wakes the read loop while it waits for a first reader. */
  private idle: (() => void) | undefined;
  private closed = false;
  private loop: Promise<void> | undefined;
  private lastHint = 0;
  private handlers = new Map<string, (message: string) => void>();
  /** Average size of an event's data lately: a read asks for about a reader's buffer worth of events. */
  private entryBytes = 1024;
  /** Events waiting for the end of this turn of the event loop to be published (see publishTo). */
  private outbox: Outgoing[] = [];
  /** This broker's key for PUBLISH_MANY (which batch of it was applied last) and the number of its last batch. */
  private publisherKey: string;
  private batches = 0;

  constructor(private opts: RedisBrokerOptions) {
    this.publisherKey = `${opts.prefix}publisher:${randomUUID()}`;
    this.pub = redisClient(opts.url, "hangar-pub", opts.log) as PublishingRedis;
    this.pub.defineCommand("hangarPublishMany", { lua: PUBLISH_MANY });
    this.reader = redisClient(opts.url, "hangar-read", opts.log);
    this.sub = redisClient(opts.url, "hangar-sub", opts.log);
    this.reader.on("ready", () => {
      void this.reader
        .client("ID")
        .then((id) => (this.readerId = Number(id)))
        .catch(() => {});
    });
    this.sub.on("message", (channel: string, message: string) => this.handlers.get(channel)?.(message));
  }

  async connect(): Promise<void> {
    await connectRedis(this.pub, this.opts.url);
    await connectRedis(this.reader, this.opts.url);
    await connectRedis(this.sub, this.opts.url);
    this.readerId = Number(await this.reader.client("ID"));
    this.loop = this.readLoop();
  }

  private key(kind: "run" | "thread", id: string): string {
    return `${this.opts.prefix}${kind}:${id}`;
  }

  /** A time-based id proposal, increasing within this process. */
  private hint(): string {
    this.lastHint = Math.max(Date.now() * 1000, this.lastHint + 1);
    return String(this.lastHint);
  }

  /**
   * Queues an event for its log. The events of one turn of the event loop go out together, in order, in one
   * script call (a run publishes each event to its own log and its thread's, and a streamed model many per turn).
   */
  private publishTo(key: string, event: string, data: string, ttlMs: number, maxLen: number): void {
    // Sealed now, in the publisher's context (custom handlers see whom the data is written for).
    const sealed = this.opts.sealer ? this.opts.sealer.seal(data) : data;
    this.outbox.push({ key, hint: this.hint(), event, data: sealed, ttlMs, maxLen });
    if (this.outbox.length === 1) setImmediate(() => this.flushOutbox());
  }

  /** Batches still being sealed by custom handlers, sent in order. */
  private sending: Promise<void> | undefined;

  /** Sends the queued events (also at close, so none is lost), in order. */
  private flushOutbox(): void {
    const queued = this.outbox;
    this.outbox = [];
    if (!queued.length) return;
    if (!this.sending && queued.every((e) => typeof e.data === "string")) return this.send(queued);
    const run = (this.sending ?? Promise.resolve())
      .then(async () => {
        for (const e of queued) e.data = await e.data;
        this.send(queued);
      })
      .catch((e: Error) =>
        this.opts.log.warn(`redis: could not seal ${queued.length} event(s): ${e.message}`),
      );
    this.sending = run;
    void run.then(() => {
      if (this.sending === run) this.sending = undefined;
    });
  }

  private send(queued: Outgoing[]): void {
    for (let i = 0; i < queued.length; i += PUBLISH_BATCH) {
      const batch = queued.slice(i, i + PUBLISH_BATCH);
      const keys = [this.publisherKey, ...new Set(batch.map((e) => e.key))];
      const args = batch.flatMap((e) => [
        String(keys.indexOf(e.key) + 1),
        e.hint,
        e.event,
        e.data as string,
        String(e.ttlMs),
        String(e.maxLen),
      ]);
      this.pub
        .hangarPublishMany(keys.length, ...keys, String(++this.batches), ...args)
        .catch((e: Error) =>
          this.opts.log.warn(
            `redis: could not publish ${batch.length} event(s) to ${keys.slice(1).join(", ")}: ${e.message}`,
          ),
        );
    }
  }

  private sink(kind: "run" | "thread", id: string): EventSink & EventSource {
    const key = this.key(kind, id);
    const ttlMs = kind === "run" ? 24 * 3600_000 : 7 * 24 * 3600_000;
    const maxLen = kind === "run" ? 1_000_000 : (this.opts.threadLogEvents ?? 2_000);
    return {
      publish: (event, data) => this.publishTo(key, event, serialize(data), ttlMs, maxLen),
      subscribe: (from, signal) => this.read(key, from, signal, kind === "run" ? id : undefined),
      head: () => this.head(key),
    };
  }

  open(runId: string): EventSink & EventSource {
    return this.sink("run", runId);
  }

  get(runId: string): EventSource {
    return this.sink("run", runId);
  }

  /** Ends a run's log with its result; a resumable log stays for the TTL, others for a minute. */
  finish(runId: string, resumable: boolean, result?: unknown): void {
    const ttl = resumable ? this.opts.resumableTtlMs : 60_000;
    this.publishTo(this.key("run", runId), END_EVENT, toJson(result ?? null), ttl, 1_000_000);
  }

  thread(threadId: string): EventSink & EventSource {
    return this.sink("thread", threadId);
  }

  /** Thread logs live in Redis (bounded there by count and TTL): nothing to hold in this process. */
  holdThread(): () => void {
    return () => {};
  }

  dropThread(threadId: string): void {
    this.publishTo(this.key("thread", threadId), DROP_EVENT, "null", 5_000, 2_000);
  }

  /** An event's data as stored opened; one sealed with a key no longer configured reads as null (and is logged). */
  private openEvent(sealer: EventSealer, data: string): string | Promise<string> {
    const failed = (e: unknown) => {
      this.opts.log.warn(`redis: an event of a stream cannot be decrypted: ${(e as Error).message}`);
      return "null";
    };
    try {
      const opened = sealer.open(data);
      return typeof opened === "string" ? opened : opened.catch(failed);
    } catch (e) {
      return failed(e);
    }
  }

  /** Reads a run's log to its end marker and returns the result it carries (undefined if it was lost). */
  async result(runId: string, signal?: AbortSignal): Promise<unknown> {
    let out: unknown;
    for await (const ev of this.read(this.key("run", runId), 0, signal, runId, true)) {
      if (ev.event === END_EVENT) out = JSON.parse(ev.data);
    }
    return out;
  }

  // --- pub/sub signals ---

  /** Publishes a signal to every process. */
  async signal(channel: string, message: string): Promise<void> {
    await this.pub.publish(`${this.opts.prefix}${channel}`, message);
  }

  /** Handles a signal channel in this process. */
  async onSignal(channel: string, handler: (message: string) => void): Promise<void> {
    const name = `${this.opts.prefix}${channel}`;
    this.handlers.set(name, handler);
    await this.sub.subscribe(name);
  }

  // --- reading ---

  /** The id of a log's newest entry, -1 if it has none. */
  private async head(key: string): Promise<number> {
    const last = (await this.pub.xrevrange(key, "+", "-", "COUNT", 1)) as [string, string[]][];
    return last.length ? seqOf(last[0][0]) : -1;
  }

  private async *read(
    key: string,
    from: StreamFrom,
    signal: AbortSignal | undefined,
    runId: string | undefined,
    withEnd = false,
  ): AsyncGenerator<StreamEvent> {
    let cursor: number;
    if (from === "next") cursor = Math.max(await this.head(key), 0);
    else cursor = Math.max(from - 1, 0);
    const reader: Reader = { key, cursor, queue: [], queued: 0, paused: false, ended: false };
    this.readers.add(reader);
    this.interrupt();
    const onAbort = () => reader.wake?.();
    signal?.addEventListener("abort", onAbort, { once: true });
    let idleChecks = 0;
    try {
      while (!signal?.aborted) {
        while (reader.queue.length) {
          const ev = reader.queue.shift()!;
          reader.queued -= ev.data.length;
          idleChecks = 0;
          if (ev.event === END_EVENT) {
            if (withEnd) yield ev;
            return;
          }
          if (ev.event === DROP_EVENT) return;
          yield ev;
        }
        // Its client caught up: read for it again (the read loop left it out while its queue was full).
        if (reader.paused) {
          reader.paused = false;
          this.interrupt();
        }
        const woke = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 2_000);
          reader.wake = () => {
            clearTimeout(timer);
            resolve(true);
          };
        });
        reader.wake = undefined;
        // Quiet for a while: if the run has ended (its end marker lost with a Redis restart), stop.
        if (!woke && runId && !reader.queue.length) {
          if (await this.opts.runEnded(runId).catch(() => false)) {
            if (++idleChecks >= 2) return;
          }
        }
      }
    } finally {
      signal?.removeEventListener("abort", onAbort);
      this.readers.delete(reader);
    }
  }

  /** How many events one XREAD asks for per key: about `limit` bytes of them, between 1 and 1000. */
  private batch(limit: number): number {
    return Math.max(1, Math.min(1000, Math.floor(limit / Math.max(1, this.entryBytes))));
  }

  /** Makes the blocked XREAD return so the next one includes new readers. */
  private interrupt(): void {
    this.idle?.();
    if (!this.blocked || this.readerId === undefined) return;
    // The XREAD may not have reached Redis yet (UNBLOCK answers 0): try again until it has, or returned.
    const iteration = this.iteration;
    const attempt = (n: number) =>
      void this.pub
        .client("UNBLOCK", this.readerId!)
        .then((unblocked) => {
          if (Number(unblocked) === 0 && this.blocked && this.iteration === iteration && n < 100) {
            setTimeout(() => attempt(n + 1), 2);
          }
        })
        .catch(() => {});
    attempt(0);
  }

  private async readLoop(): Promise<void> {
    while (!this.closed) {
      // Readers whose queue is full (their client does not keep up) are left out until they drain; a read
      // serves only the readers it was made for (one added meanwhile may need older events).
      const limit = streamLimits().bufferBytes;
      const serving: Reader[] = [];
      for (const r of this.readers) {
        r.paused = r.queued >= limit;
        if (!r.paused) serving.push(r);
      }
      if (!serving.length) {
        await new Promise<void>((r) => (this.idle = r));
        this.idle = undefined;
        continue;
      }
      // Per key, read from the oldest cursor of its readers.
      const cursors = new Map<string, number>();
      for (const r of serving) {
        const c = cursors.get(r.key);
        if (c === undefined || r.cursor < c) cursors.set(r.key, r.cursor);
      }
      const keys = [...cursors.keys()];
      const ids = keys.map((k) => `0-${cursors.get(k)}`);
      let reply: [string, [string, string[]][]][] | null;
      try {
        this.iteration++;
        this.blocked = true;
        reply = (await this.reader.xread(
          "COUNT",
          this.batch(limit),
          "BLOCK",
          5000,
          "STREAMS",
          ...keys,
          ...ids,
        )) as [string, [string, string[]][]][] | null;
      } catch (e) {
        if (this.closed) return;
        if (!/UNBLOCKED/.test((e as Error).message)) await new Promise((r) => setTimeout(r, 200));
        continue;
      } finally {
        this.blocked = false;
      }
      if (!reply) continue;
      const sealer = this.opts.sealer;
      for (const [, entries] of reply) {
        for (const [, fields] of entries) {
          this.entryBytes = 0.9 * this.entryBytes + 0.1 * fields[3].length;
          // Opened once for every reader of the entry.
          if (sealer) {
            const opened = this.openEvent(sealer, fields[3]);
            fields[3] = typeof opened === "string" ? opened : await opened;
          }
        }
      }
      for (const [key, entries] of reply) {
        for (const r of serving) {
          if (r.key !== key || !this.readers.has(r)) continue;
          for (const [id, fields] of entries) {
            // Up to the limit: the rest is read again from Redis once the reader has room.
            if (r.queued >= limit) break;
            const seq = seqOf(id);
            if (seq <= r.cursor) continue;
            r.cursor = seq;
            r.queue.push({ id: seq, event: fields[1], data: fields[3] });
            r.queued += fields[3].length;
          }
          if (r.queue.length) r.wake?.();
        }
      }
    }
  }

  async close(): Promise<void> {
    this.flushOutbox();
    await this.sending;
    this.closed = true;
    this.interrupt();
    for (const r of this.readers) r.wake?.();
    this.reader.disconnect();
    await this.loop?.catch(() => {});
    this.sub.disconnect();
    await this.pub.quit().catch(() => this.pub.disconnect());
  }
}
