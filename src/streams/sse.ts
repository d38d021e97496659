// Server-Sent Events framing over a raw Node response: event/data/id lines and comment heartbeats, written
// with backpressure (a client that does not read gets a bounded buffer, then its stream is dropped).
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { StreamEvent } from "./channel.js";
import { streamLimits, type StreamLimits } from "./limits.js";

const HEARTBEAT_MS = 10_000;

/** Response headers as Fastify's `reply.getHeaders()` gives them. */
export type HeaderMap = Record<string, string | number | string[] | undefined>;

/** What every event stream sends, whatever else the response carries. */
const SSE_HEADERS: OutgoingHttpHeaders = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  connection: "keep-alive",
  "x-accel-buffering": "no",
};

/**
 * The head of an event stream: `headers` (those hooks and plugins set on the reply before it was hijacked,
 * e.g. CORS, then the route's own such as Content-Location), names lower-cased so none is sent twice, and
 * the SSE headers over them. A body length never applies to a stream.
 */
export function sseHead(headers: HeaderMap): OutgoingHttpHeaders {
  const head: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) head[name.toLowerCase()] = value;
  }
  delete head["content-length"];
  return { ...head, ...SSE_HEADERS } as OutgoingHttpHeaders;
}

/**
 * Writes events to one client. `send` resolves at once while the client keeps up; once `bufferBytes` wait
 * in the response (and the socket refused a write), it resolves only when the client has taken them
 * ('drain'), so the caller pulls no more events meanwhile. While data waits (there, or after `end`), a
 * client that takes nothing of it for `stallMs` is dropped: the connection is destroyed, `dropped` is set,
 * and `send` resolves (a no-op from then on).
 */
export class SseWriter {
  private heartbeat: NodeJS.Timeout;
  private limits: StreamLimits;
  /** A write was refused: 'drain' comes when the socket's buffer is empty. */
  private needDrain = false;
  /** The pending wait for 'drain' (one at a time: the caller awaits `send`). */
  private waiting: Promise<void> | undefined;
  /** Checks that a client with data waiting for it takes some (see `watch`). */
  private watchdog: NodeJS.Timeout | undefined;
  /** No more writes: the stream ended, or the connection closed. */
  closed = false;
  /** The stream was dropped because its client stopped reading. */
  dropped = false;

  /** `headers`: the reply's headers (`reply.getHeaders()`) and the route's own; see `sseHead`. */
  constructor(
    private res: ServerResponse,
    headers: HeaderMap = {},
    opts: Partial<StreamLimits> = {},
  ) {
    this.limits = { ...streamLimits(), ...opts };
    res.writeHead(200, sseHead(headers));
    res.flushHeaders();
    // A heartbeat is for an idle stream: one whose client is behind needs none (and gets none).
    this.heartbeat = setInterval(() => !this.needDrain && this.raw(": heartbeat\n\n"), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on("drain", () => (this.needDrain = false));
    res.on("close", () => {
      this.stop();
      this.unwatch();
    });
  }

  /** The response is corked until the end of this turn of the event loop (see `raw`). */
  private corked = false;

  /**
   * Writes text. What is written in one turn of the event loop goes out in one system call when the turn ends
   * (at its check phase): a graph streaming tokens delivers dozens of events at once, which would otherwise cost a
   * `writev` each (a third of the API thread's time in a streamed run of the example chat graph). Once a socket's
   * buffer of text waits (its high-water mark), it goes out at once, as every write did before: a turn that
   * replays a long log holds no more than that, and backpressure (`send`) judges what the socket did not take.
   */
  private raw(...parts: string[]): void {
    if (this.closed) return;
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
      setImmediate(() => this.flush());
    }
    let ok = true;
    for (const part of parts) ok = this.res.write(part) && ok;
    if (!ok) this.needDrain = true;
    if (this.res.writableLength >= this.res.writableHighWaterMark) this.flush();
  }

  /** Sends what this turn wrote. */
  private flush(): void {
    if (!this.corked) return;
    this.corked = false;
    this.res.uncork();
  }

  /** Writes an event; resolves when the caller may send the next one (see the class). */
  send(ev: StreamEvent): Promise<void> | void {
    // The data goes out as it is in the log (no copy of it per client).
    this.raw(`event: ${ev.event}\ndata: `, ev.data, `\nid: ${ev.id}\n\n`);
    if (this.closed || !this.needDrain || this.res.writableLength < this.limits.bufferBytes) return;
    return (this.waiting ??= this.waitForDrain().finally(() => (this.waiting = undefined)));
  }

  private waitForDrain(): Promise<void> {
    this.watch();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.res.off("drain", done);
        this.res.off("close", done);
        this.unwatch();
        resolve();
      };
      this.res.on("drain", done);
      this.res.on("close", done);
    });
  }

  /**
   * Drops the stream if what waits in the response does not shrink for `stallMs` (the client takes nothing);
   * a client that reads, however slowly, is never dropped. Ends when nothing waits any more.
   */
  private watch(): void {
    if (this.watchdog) return;
    let pending = this.res.writableLength;
    let since = Date.now();
    this.watchdog = setInterval(
      () => {
        const now = this.res.writableLength;
        if (now === 0) return this.unwatch();
        if (now < pending) {
          pending = now;
          since = Date.now();
        } else if (Date.now() - since >= this.limits.stallMs) this.drop();
      },
      Math.max(10, Math.floor(this.limits.stallMs / 4)),
    );
    this.watchdog.unref();
  }

  private unwatch(): void {
    clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  /** Gives up on a client that stopped reading: what it has not taken is discarded, the connection closed. */
  private drop(): void {
    this.unwatch();
    if (this.res.destroyed) return;
    this.dropped = true;
    this.res.destroy();
  }

  private stop(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
  }

  /** Ends the stream; what still waits for the client gets the same stall check as during the stream. */
  end(): void {
    if (this.closed) return;
    this.stop();
    // end() sends what this turn wrote (it uncorks the connection fully): nothing is left to flush later, when the
    // connection may already serve the client's next request.
    this.corked = false;
    this.res.end();
    if (this.res.writableLength > 0) this.watch();
  }
}
