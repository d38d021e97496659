// Server-Sent Events framing over a raw Node response: event/data/id lines and comment heartbeats.
import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { StreamEvent } from "./channel.js";

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

export class SseWriter {
  private heartbeat: NodeJS.Timeout;
  closed = false;

  /** `headers`: the reply's headers (`reply.getHeaders()`) and the route's own; see `sseHead`. */
  constructor(
    private res: ServerResponse,
    headers: HeaderMap = {},
  ) {
    res.writeHead(200, sseHead(headers));
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.raw(": heartbeat\n\n"), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on("close", () => this.stop());
  }

  private raw(text: string): void {
    if (!this.closed) this.res.write(text);
  }

  send(ev: StreamEvent): void {
    this.raw(`event: ${ev.event}\ndata: ${ev.data}\nid: ${ev.id}\n\n`);
  }

  private stop(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
  }

  end(): void {
    if (this.closed) return;
    this.stop();
    this.res.end();
  }
}
