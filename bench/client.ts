/**
 * Minimal HTTP client of the benchmark: undici's `request` API over one keep-alive Agent for JSON calls, and
 * an SSE reader (POST or GET, optionally on another Agent, with an abort signal) that timestamps every
 * complete event and the end of the stream. The very same code path
 * is used against Hangar and against the peer, so client overhead is identical for both. (`fetch` costs the
 * client several times more CPU per request; on a 2-core machine it capped both servers at ~2,000 req/s.)
 */
import { Agent, request, type Dispatcher } from "undici";

const agent = new Agent({ connections: 64, keepAliveTimeout: 60_000, pipelining: 1 });

/** Per-request safety timeout, so that no scenario can hang the run. */
const REQUEST_TIMEOUT_MS = 30_000;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** POSTs a JSON body and returns the parsed JSON answer; throws on non-2xx. */
export async function postJson<T = any>(url: string, body: unknown): Promise<T> {
  return (await postJsonSized<T>(url, body)).body;
}

/** Like `postJson`, also returning the response body size in bytes. */
export async function postJsonSized<T = any>(
  url: string,
  body: unknown,
): Promise<{ body: T; bytes: number }> {
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    dispatcher: agent,
    headersTimeout: REQUEST_TIMEOUT_MS,
    bodyTimeout: REQUEST_TIMEOUT_MS,
  });
  const buf = Buffer.from(await res.body.arrayBuffer());
  const text = buf.toString("utf-8");
  if (res.statusCode >= 300) {
    throw new HttpError(res.statusCode, `POST ${url} -> ${res.statusCode}: ${text.slice(0, 300)}`);
  }
  return { body: (text ? JSON.parse(text) : null) as T, bytes: buf.byteLength };
}

export async function getJson<T = any>(
  url: string,
  opts: { dispatcher?: Dispatcher; timeoutMs?: number; signal?: AbortSignal } = {},
): Promise<T> {
  const res = await request(url, {
    dispatcher: opts.dispatcher ?? agent,
    headersTimeout: opts.timeoutMs ?? REQUEST_TIMEOUT_MS,
    bodyTimeout: opts.timeoutMs ?? REQUEST_TIMEOUT_MS,
    signal: opts.signal,
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) {
    throw new HttpError(res.statusCode, `GET ${url} -> ${res.statusCode}: ${text.slice(0, 300)}`);
  }
  return (text ? JSON.parse(text) : null) as T;
}

export interface SseEvent {
  event: string;
  data: string;
}

export interface StreamTiming {
  /** ms from just before the request until the first complete SSE event was received. */
  firstEventMs: number;
  /** ms from just before the request until the last SSE event was received. */
  lastEventMs: number;
  /** ms from just before the request until the body was fully read (the server closed the stream). */
  totalMs: number;
  events: SseEvent[];
  /** ms from just before the request until each event of `events` was received. */
  eventMs: number[];
  /** Body size in bytes. */
  bytes: number;
}

export interface SseOptions {
  /** Default: the shared Agent (64 connections). */
  dispatcher?: Dispatcher;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Headers and between-chunks timeout, ms (default 30 s). */
  timeoutMs?: number;
  /** Stop reading (and drop the connection) right after the first event for which this is true. */
  stopWhen?: (ev: SseEvent) => boolean;
}

/** POSTs a JSON body to an SSE endpoint and reads the whole stream, timing the first event and the end. */
export function postSse(url: string, body: unknown, opts: SseOptions = {}): Promise<StreamTiming> {
  return sse("POST", url, body, opts);
}

/** GETs an SSE endpoint (e.g. a run join stream) and reads the whole stream. */
export function getSse(url: string, opts: SseOptions = {}): Promise<StreamTiming> {
  return sse("GET", url, undefined, opts);
}

async function sse(
  method: "GET" | "POST",
  url: string,
  body: unknown,
  opts: SseOptions,
): Promise<StreamTiming> {
  const t0 = performance.now();
  const timeout = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const res = await request(url, {
    method,
    headers: {
      accept: "text/event-stream",
      ...(method === "POST" ? { "content-type": "application/json" } : {}),
      ...opts.headers,
    },
    body: method === "POST" ? JSON.stringify(body) : undefined,
    dispatcher: opts.dispatcher ?? agent,
    headersTimeout: timeout,
    bodyTimeout: timeout,
    signal: opts.signal,
  });
  if (res.statusCode >= 300) {
    const text = await res.body.text();
    throw new HttpError(res.statusCode, `${method} ${url} -> ${res.statusCode}: ${text.slice(0, 300)}`);
  }
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  const eventMs: number[] = [];
  let buf = "";
  let bytes = 0;
  let stopped = false;
  const push = (ev: SseEvent) => {
    eventMs.push(performance.now() - t0);
    events.push(ev);
    if (opts.stopWhen?.(ev)) stopped = true;
  };
  for await (const value of res.body as AsyncIterable<Buffer>) {
    bytes += value.byteLength;
    buf += decoder.decode(value, { stream: true });
    // Normalise CRLF / CR line ends; a trailing "\r" may be half of a "\r\n" split across chunks.
    const held = buf.endsWith("\r") ? "\r" : "";
    buf = buf.slice(0, buf.length - held.length).replace(/\r\n?/g, "\n") + held;
    let idx: number;
    while ((idx = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      const ev = parseBlock(block);
      if (ev) push(ev); // else: comment / keep-alive ping only
      if (stopped) break;
    }
    if (stopped) break; // leaving the loop destroys the body (and its connection)
  }
  if (!stopped) {
    buf += decoder.decode();
    const last = parseBlock(buf.replace(/\r\n?/g, "\n").trim());
    if (last) push(last);
  }
  const totalMs = performance.now() - t0;
  if (events.length === 0) throw new Error(`${method} ${url}: stream ended without any event`);
  return {
    firstEventMs: eventMs[0],
    lastEventMs: eventMs[eventMs.length - 1],
    totalMs,
    events,
    eventMs,
    bytes,
  };
}

function parseBlock(block: string): SseEvent | undefined {
  let event = "";
  const data: string[] = [];
  let any = false;
  for (const line of block.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") {
      event = value;
      any = true;
    } else if (field === "data") {
      data.push(value);
      any = true;
    }
  }
  return any ? { event: event || "message", data: data.join("\n") } : undefined;
}
