// Slow readers (issue 12, "Memory"): clients that open event streams and never read them must not make the
// server buffer those streams without bound; they are dropped, the runs go on, a resumable one can rejoin.
import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";
import { parseSse } from "../helpers/sse.ts";
import { BOUND_MS, waitFor } from "../helpers/wait.ts";
import { heldBytes, inspectorUrl } from "../helpers/inspector.ts";

const CONFIG = join(ROOT, "test/fixtures/slow-reader-project/langgraph.json");
/** Each flood run streams EVENTS custom events of BYTES bytes: about 8 MB. */
const EVENTS = 1000;
const BYTES = 8192;
const FLOOD = { events: EVENTS, bytes: BYTES };
const MB = 1024 * 1024;

// A stream whose client takes nothing for 60 s is dropped (the default is 30 s): long enough for the runs to end
// and the memory to be measured while all the stalled streams are still open, also on a loaded machine (with 15 s,
// a clean clone's suite at a load of 25 on 2 cores saw one stream dropped before the measurement); the test then
// waits for the drops.
// A process of its own: the test measures the server's memory, through its inspector (the memory it holds after
// a full collection; resident memory also counts garbage not collected yet, which a busy machine leaves more of).
const hangar = useHangar({
  process: true,
  config: CONFIG,
  env: { HANGAR_STREAM_STALL_SECONDS: "60" },
  nodeFlags: ["--inspect=127.0.0.1:0"],
});

/** The server process's resident memory, from /proc (bytes). */
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error("no VmRSS in /proc status");
  return Number(m[1]) * 1024;
}

/** Open SSE connections, as the server counts them (GET /metrics). */
async function streamClients(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^hangar_stream_clients (\d+)/m.exec(text);
  if (!m) throw new Error("no hangar_stream_clients in /metrics");
  return Number(m[1]);
}

/**
 * A client that sends a request for an event stream and never reads the answer: once the head has arrived,
 * the response stays paused (Node stops reading the socket once its small buffer is full). `drain()` later
 * reads whatever the server sent until the connection ends, and returns it.
 */
interface StalledClient {
  /** Resolves with the response's status and headers once they arrived. */
  head: Promise<http.IncomingMessage>;
  drain(): Promise<string>;
  destroy(): void;
}

function stalledClient(url: string, method: "GET" | "POST", path: string, body?: unknown, headers = {}) {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const req = http.request(new URL(path, url), {
    method,
    agent: false,
    headers: {
      accept: "text/event-stream",
      ...(payload
        ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }
        : {}),
      ...headers,
    },
  });
  const head = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once("response", (res) => {
      res.pause();
      resolve(res);
    });
    req.once("error", reject);
  });
  req.end(payload);
  const client: StalledClient = {
    head,
    async drain() {
      const res = await head;
      const chunks: Buffer[] = [];
      return new Promise<string>((resolve) => {
        const done = () => resolve(Buffer.concat(chunks).toString("utf8"));
        res.on("data", (c: Buffer) => chunks.push(c));
        // A stream the server dropped ends without its last chunk: "aborted" / an error, then "close".
        res.on("error", () => {});
        res.once("close", done);
        res.resume();
      });
    },
    destroy: () => req.destroy(),
  };
  return client;
}

/** The `seq` numbers of the custom events among `events`. */
const seqs = (events: { event: string; data: unknown }[]) =>
  events.filter((e) => e.event === "custom").map((e) => (e.data as { seq: number }).seq);

describe("slow readers", () => {
  const clients: StalledClient[] = [];
  afterAll(() => clients.forEach((c) => c.destroy()));

  // Attack: 20 clients open 8 MB streams (runs of their own, and joins replaying a finished resumable run)
  // and never read them, so that the server holds every stream in memory (it did: ~20 MB per client).
  it("20 clients that never read an 8 MB stream: bounded memory, a normal client unaffected, dropped streams rejoin", async () => {
    const { server, client } = hangar;
    const pid = server.proc!.pid!;
    const inspector = inspectorUrl(server.output());

    // Warm up (graph loaded, one flood run through a reading client), then the baseline.
    const warm = await client.threads.create();
    let warmed = 0;
    for await (const part of client.runs.stream(warm.thread_id, "flood", {
      input: FLOOD,
      streamMode: ["custom"],
    })) {
      if (part.event === "custom") warmed++;
    }
    expect(warmed).toBe(EVENTS);

    // A finished resumable 8 MB run: joins with Last-Event-ID -1 replay all of it.
    const shared = await client.threads.create();
    const sharedRun = await client.runs.create(shared.thread_id, "flood", {
      input: FLOOD,
      streamMode: ["custom"],
      streamResumable: true,
    });
    await client.runs.join(shared.thread_id, sharedRun.run_id);
    await waitFor("the warm-up streams to close", async () => (await streamClients(server.url)) === 0);
    const before = { held: await heldBytes(inspector), rss: rss(pid) };

    // 16 joins replaying the shared run, and 4 streams of runs of their own (two stateless, one on a
    // thread, one resumable on a thread that rejoins below); none of them reads.
    const join = `/threads/${shared.thread_id}/runs/${sharedRun.run_id}/stream`;
    for (let i = 0; i < 16; i++) {
      clients.push(stalledClient(server.url, "GET", join, undefined, { "last-event-id": "-1" }));
    }
    const body = { assistant_id: "flood", input: FLOOD, stream_mode: ["custom"] };
    clients.push(stalledClient(server.url, "POST", "/runs/stream", body));
    clients.push(stalledClient(server.url, "POST", "/runs/stream", body));
    const own = await client.threads.create();
    clients.push(stalledClient(server.url, "POST", `/threads/${own.thread_id}/runs/stream`, body));
    const resumableThread = await client.threads.create();
    const resumable = stalledClient(server.url, "POST", `/threads/${resumableThread.thread_id}/runs/stream`, {
      ...body,
      stream_resumable: true,
    });
    clients.push(resumable);
    const heads = await Promise.all(clients.map((c) => c.head));
    expect(heads.map((h) => h.statusCode)).toEqual(heads.map(() => 200));

    // Meanwhile a normal client streams another 8 MB run: it gets every event, and /ok answers.
    const normal = await client.threads.create();
    const got: number[] = [];
    for await (const part of client.runs.stream(normal.thread_id, "flood", {
      input: FLOOD,
      streamMode: ["custom"],
    })) {
      if (part.event === "custom") got.push((part.data as { seq: number }).seq);
    }
    expect(got).toEqual([...Array(EVENTS).keys()]);
    expect((await fetch(`${server.url}/ok`)).status).toBe(200);

    // Every run went to its end though nobody read its stream.
    const [resumableRun] = await client.runs.list(resumableThread.thread_id);
    await client.runs.join(resumableThread.thread_id, resumableRun.run_id);
    expect((await client.runs.get(resumableThread.thread_id, resumableRun.run_id)).status).toBe("success");
    const [ownRun] = await client.runs.list(own.thread_id);
    await client.runs.join(own.thread_id, ownRun.run_id);
    expect((await client.threads.getState(own.thread_id)).values).toMatchObject({ sent: EVENTS });

    // With the 20 streams open and unread (about 160 MB of events owed to them; the server held ~20 MB per
    // client when it buffered them), the server holds less than 80 MB more than before, after a full
    // collection (on one machine ~34 MB: the resumable run's log kept for joins, thread logs, and the logs of
    // the finished runs the stalled streams still read; on the scale-out backend ~3 MB). Its resident memory after
    // that collection, which also counts what the allocator keeps and the heaps of any worker threads (which an
    // inspector does not see), grew by less than 100 MB, as the README promises (~31 MB on one machine, ~11 MB on
    // the scale-out backend).
    expect(await streamClients(server.url)).toBe(20);
    const after = { held: await heldBytes(inspector), rss: rss(pid) };
    expect(await streamClients(server.url)).toBe(20);
    console.log(
      `slow readers: +${((after.held - before.held) / MB).toFixed(1)} MB held, ` +
        `+${((after.rss - before.rss) / MB).toFixed(1)} MB resident (after a forced collection)`,
    );
    expect((after.held - before.held) / MB).toBeLessThan(80);
    expect((after.rss - before.rss) / MB).toBeLessThan(100);

    // The stalled streams are then dropped: no SSE connection is left open.
    await waitFor(
      "the stalled streams to be dropped",
      async () => (await streamClients(server.url)) === 0,
      BOUND_MS,
      100,
    );

    // The dropped resumable client reads what reached it, and rejoins from its last whole event.
    const text = await resumable.drain();
    const received = parseSse(text.slice(0, text.lastIndexOf("\n\n") + 2));
    expect(received[0].event).toBe("metadata");
    const firstPart = seqs(received);
    expect(firstPart.length).toBeLessThan(EVENTS);
    const rest: number[] = [];
    for await (const part of client.runs.joinStream(resumableThread.thread_id, resumableRun.run_id, {
      lastEventId: received[received.length - 1].id!,
    })) {
      if (part.event === "custom") rest.push((part.data as { seq: number }).seq);
    }
    expect([...firstPart, ...rest]).toEqual([...Array(EVENTS).keys()]);
  });
});
