// Unit tests of src/streams/sse.ts: the head of an event stream (sseHead) and SseWriter's framing, heartbeats,
// ending, and backpressure, over a real node:http server on 127.0.0.1 with clients that read, pause or leave.
import { once } from "node:events";
import { createServer, get, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { serialize, type StreamEvent } from "../../src/streams/channel.js";
import { SseWriter, sseHead } from "../../src/streams/sse.js";

let server: Server;
let port: number;
/** Responses the server has been asked for, in order; `nextResponse` takes them. */
let pending: ServerResponse[] = [];
let notify: (() => void) | undefined;

beforeEach(async () => {
  pending = [];
  server = createServer((_req, res) => {
    pending.push(res);
    notify?.();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});

afterEach(async () => {
  vi.useRealTimers();
  server.closeAllConnections();
  server.close();
  await once(server, "close");
});

/** The server side of the next request. */
async function nextResponse(): Promise<ServerResponse> {
  while (!pending.length) await new Promise<void>((resolve) => (notify = resolve));
  return pending.shift()!;
}

/** A client that reads everything: its response head, and the body text received so far. */
async function reader(): Promise<{ res: IncomingMessage; text: () => string; ended: Promise<void> }> {
  const req = get({ host: "127.0.0.1", port, path: "/" });
  const [res] = (await once(req, "response")) as [IncomingMessage];
  let text = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => (text += chunk));
  const ended = new Promise<void>((resolve) => res.on("close", resolve));
  return { res, text: () => text, ended };
}

/** A client that reads nothing until its response is resumed (paused, its socket stops reading too). */
async function pausedClient(): Promise<{ res: IncomingMessage; text: () => string; ended: Promise<void> }> {
  const req = get({ host: "127.0.0.1", port, path: "/" });
  req.on("error", () => {});
  const [res] = (await once(req, "response")) as [IncomingMessage];
  // Paused before a 'data' listener is added: the listener does not start the flow.
  res.pause();
  res.on("error", () => {});
  res.setEncoding("utf8");
  let text = "";
  res.on("data", (chunk: string) => (text += chunk));
  const ended = new Promise<void>((resolve) => res.on("close", resolve));
  return { res, text: () => text, ended };
}

/** Lets pending I/O callbacks run once. */
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

const ev = (id: number, event: string, data: unknown): StreamEvent => ({ id, event, data: serialize(data) });

/** Sends big events until `send` asks the caller to wait (the client reads nothing); gives that wait. */
function fillUntilWait(sse: SseWriter, data: string): { wait: Promise<void>; sent: number } {
  for (let id = 0; id < 2_000; id++) {
    const wait = sse.send({ id, event: "big", data });
    if (wait) return { wait, sent: id + 1 };
  }
  throw new Error("send never asked to wait, though the client reads nothing");
}

describe("sseHead", () => {
  it("sends the SSE headers over the reply's, names lower-cased, without a body length", () => {
    expect(
      sseHead({
        "Access-Control-Allow-Origin": "https://app.example",
        "Content-Type": "application/json",
        "Content-Length": 42,
        "Content-Location": "/threads/t/runs/r",
        Vary: ["Origin", "Accept"],
        "X-Unset": undefined,
        "Cache-Control": "max-age=60",
      }),
    ).toEqual({
      "access-control-allow-origin": "https://app.example",
      "content-location": "/threads/t/runs/r",
      vary: ["Origin", "Accept"],
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
  });

  it("is only the SSE headers for no headers", () => {
    expect(sseHead({})).toEqual({
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
  });
});

describe("SseWriter framing", () => {
  it("sends the head at once, before any event", async () => {
    const client = reader();
    const res = await nextResponse();
    const sse = new SseWriter(res, { "content-location": "/runs/1", "content-length": "5" });
    const { res: head } = await client;
    expect(head.statusCode).toBe(200);
    expect(head.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    expect(head.headers["cache-control"]).toBe("no-store");
    expect(head.headers["x-accel-buffering"]).toBe("no");
    expect(head.headers["content-location"]).toBe("/runs/1");
    expect(head.headers["content-length"]).toBeUndefined();
    expect(head.headers["transfer-encoding"]).toBe("chunked");
    sse.end();
  });

  it("writes each event as event, data and id lines and a blank line, and ends the body on end()", async () => {
    const client = reader();
    const sse = new SseWriter(await nextResponse());
    const { text, ended } = await client;
    expect(sse.send(ev(0, "metadata", { run_id: "r1" }))).toBeUndefined();
    expect(sse.send(ev(1, "values", { messages: ["a"] }))).toBeUndefined();
    expect(sse.send({ id: 7, event: "updates|sub:1", data: "null" })).toBeUndefined();
    sse.end();
    await ended;
    expect(text()).toBe(
      'event: metadata\ndata: {"run_id":"r1"}\nid: 0\n\n' +
        'event: values\ndata: {"messages":["a"]}\nid: 1\n\n' +
        "event: updates|sub:1\ndata: null\nid: 7\n\n",
    );
    expect(sse.closed).toBe(true);
    expect(sse.dropped).toBe(false);
  });

  it("keeps multi-line text on one data line (the data is JSON, its newlines escaped)", async () => {
    const client = reader();
    const sse = new SseWriter(await nextResponse());
    const { text, ended } = await client;
    sse.send(ev(0, "custom", { text: "line 1\nline 2\r\n\nend" }));
    sse.end();
    await ended;
    expect(text()).toBe('event: custom\ndata: {"text":"line 1\\nline 2\\r\\n\\nend"}\nid: 0\n\n');
    expect(
      text()
        .split("\n")
        .filter((l) => l.startsWith("data: ")),
    ).toHaveLength(1);
  });

  it("sends the events of one turn of the event loop in one write to the socket, when the turn ends", async () => {
    const client = reader();
    const res = await nextResponse();
    const sse = new SseWriter(res);
    const { text, ended } = await client;
    // The socket's own writes (a Writable's _write / _writev: one system call each).
    const socket = res.socket as unknown as Record<"_write" | "_writev", (...args: unknown[]) => unknown>;
    let writes = 0;
    for (const name of ["_write", "_writev"] as const) {
      const original = socket[name].bind(socket);
      socket[name] = (...args: unknown[]) => {
        writes++;
        return original(...args);
      };
    }
    let expected = "";
    for (let id = 0; id < 30; id++) {
      sse.send(ev(id, "messages", [{ content: `token ${id}` }, { langgraph_node: "agent" }]));
      expected += `event: messages\ndata: [{"content":"token ${id}"},{"langgraph_node":"agent"}]\nid: ${id}\n\n`;
    }
    expect(writes).toBe(0);
    await turn();
    expect(writes).toBe(1);
    sse.end();
    await ended;
    expect(text()).toBe(expected);
  });

  it("writes nothing after end(); a second end() does nothing", async () => {
    const client = reader();
    const sse = new SseWriter(await nextResponse());
    const { text, ended } = await client;
    sse.send(ev(0, "values", 1));
    sse.end();
    expect(sse.send(ev(1, "values", 2))).toBeUndefined();
    sse.end();
    await ended;
    expect(text()).toBe("event: values\ndata: 1\nid: 0\n\n");
  });

  it("stops writing when the client goes away", async () => {
    const client = reader();
    const res = await nextResponse();
    const sse = new SseWriter(res);
    const { res: incoming } = await client;
    incoming.destroy();
    await once(res, "close");
    expect(sse.closed).toBe(true);
    expect(sse.dropped).toBe(false);
    expect(sse.send(ev(0, "values", 1))).toBeUndefined();
    expect(res.writableLength).toBe(0);
  });
});

describe("SseWriter heartbeats", () => {
  it("writes a comment every 10 s while the stream is open, and none after it ends", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval"] });
    const client = reader();
    const sse = new SseWriter(await nextResponse());
    const { text, ended } = await client;
    vi.advanceTimersByTime(9_999);
    sse.send(ev(0, "values", 1));
    vi.advanceTimersByTime(1);
    vi.advanceTimersByTime(10_000);
    sse.end();
    vi.advanceTimersByTime(30_000);
    await ended;
    expect(text()).toBe("event: values\ndata: 1\nid: 0\n\n: heartbeat\n\n: heartbeat\n\n");
  });
});

describe("SseWriter backpressure", () => {
  const big = "x".repeat(256 * 1024);

  it("asks the caller to wait once the client stops reading, and resumes when it reads again", async () => {
    const paused = pausedClient();
    const sse = new SseWriter(await nextResponse(), {}, { bufferBytes: 64 * 1024, stallMs: 600_000 });
    const client = await paused;
    const { wait, sent } = fillUntilWait(sse, big);
    let resolved = false;
    void wait.then(() => (resolved = true));
    await turn();
    expect(resolved).toBe(false);
    // While it waits, the same wait is handed out again: the caller never has two.
    expect(sse.send({ id: sent, event: "big", data: big })).toBe(wait);
    expect(client.text()).toBe("");
    client.res.resume();
    await wait;
    expect(sse.dropped).toBe(false);
    sse.send(ev(sent + 1, "end", "done"));
    sse.end();
    await client.ended;
    const body = client.text();
    let expected = "";
    for (let id = 0; id <= sent; id++) expected += `event: big\ndata: ${big}\nid: ${id}\n\n`;
    expected += `event: end\ndata: "done"\nid: ${sent + 1}\n\n`;
    // Every event arrived whole and in order.
    const idsSeen = [...body.matchAll(/\nid: (\d+)\n\n/g)].map((m) => Number(m[1]));
    expect(idsSeen).toEqual(Array.from({ length: sent + 2 }, (_, i) => i));
    expect(body.length).toBe(expected.length);
    expect(body === expected).toBe(true);
  });

  it("drops a client that takes nothing for stallMs: the connection closes and the wait ends", async () => {
    const paused = pausedClient();
    const res = await nextResponse();
    const sse = new SseWriter(res, {}, { bufferBytes: 64 * 1024, stallMs: 200 });
    const client = await paused;
    const { wait } = fillUntilWait(sse, big);
    await wait;
    expect(sse.dropped).toBe(true);
    expect(sse.closed).toBe(true);
    expect(res.destroyed).toBe(true);
    expect(sse.send({ id: 10_000, event: "big", data: big })).toBeUndefined();
    client.res.destroy();
  });

  it("after end(), still drops a client that takes nothing of what waits for it", async () => {
    const paused = pausedClient();
    const res = await nextResponse();
    // A buffer limit no event reaches: send never waits; only end() starts the stall check.
    const sse = new SseWriter(res, {}, { bufferBytes: Number.MAX_SAFE_INTEGER, stallMs: 200 });
    const client = await paused;
    for (let id = 0; res.writableLength === 0 || id < 8; id++) {
      expect(sse.send({ id, event: "big", data: big })).toBeUndefined();
    }
    const closed = once(res, "close");
    sse.end();
    await closed;
    expect(sse.dropped).toBe(true);
    client.res.destroy();
  });

  it("a client that keeps up is never asked to wait", async () => {
    const client = reader();
    const sse = new SseWriter(await nextResponse(), {}, { bufferBytes: 1, stallMs: 600_000 });
    const { ended } = await client;
    for (let id = 0; id < 50; id++) expect(sse.send(ev(id, "values", { id }))).toBeUndefined();
    sse.end();
    await ended;
    expect(sse.dropped).toBe(false);
  });
});
