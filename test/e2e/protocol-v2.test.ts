// Protocol v2: `POST /threads/{id}/commands` (run.start, input.respond, state.get) and
// `POST /threads/{id}/stream/events` (SSE filtered by channel, replayed after `since`), and the same path as a
// WebSocket (commands in-band, subscription.subscribe / unsubscribe / reconnect), through raw HTTP, raw
// WebSocket (the `ws` package: Node 20 has no global WebSocket) and the official SDK's ThreadStream on both
// transports.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { join } from "node:path";
import { ROOT, useHangar } from "../helpers/server.ts";
import { parseSse, type RawSseEvent } from "../helpers/sse.ts";
import { waitFor } from "../helpers/wait.ts";

// The examples' chat and approval graphs, and a graph that writes custom events.
const hangar = useHangar({ config: join(ROOT, "test/fixtures/protocol-project/langgraph.json") });
const open: AbortController[] = [];
afterAll(() => open.forEach((ac) => ac.abort()));

/** A live protocol event stream: what has arrived so far, and a wait for a condition on it. */
async function eventStream(threadId: string, filter: Record<string, unknown>) {
  const ac = new AbortController();
  open.push(ac);
  const res = await fetch(`${hangar.server.url}/threads/${threadId}/stream/events`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(filter),
    signal: ac.signal,
  });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/event-stream");
  let text = "";
  const events: RawSseEvent[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        text += decoder.decode(chunk, { stream: true });
        const end = text.lastIndexOf("\n\n");
        if (end === -1) continue;
        events.push(...parseSse(text.slice(0, end + 2)));
        text = text.slice(end + 2);
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    data: () => events.map((e) => e.data as any),
    until: (what: string, pred: (data: any[]) => boolean) =>
      waitFor(what, () => pred(events.map((e) => e.data))),
    close: () => ac.abort(),
  };
}

async function command(threadId: string, id: number, method: string, params?: unknown) {
  const res = await fetch(`${hangar.server.url}/threads/${threadId}/commands`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const lifecycle = (data: any[]) =>
  data
    .filter((e) => e.method === "lifecycle" && e.params.namespace.length === 0)
    .map((e) => e.params.data.event);

describe("protocol v2 over HTTP", () => {
  it("run.start streams the run; an interrupt is input.requested; input.respond resumes it; since replays", async () => {
    const threadId = randomUUID();
    const stream = await eventStream(threadId, { channels: ["lifecycle", "values", "input"] });
    const started = await command(threadId, 1, "run.start", {
      assistant_id: "approval",
      input: { request: "roof" },
    });
    expect(started.body).toMatchObject({ type: "success", id: 1, result: { run_id: expect.any(String) } });
    expect(started.body.meta.thread_id).toBe(threadId);
    await stream.until("the run to stop on its interrupt", (d) => lifecycle(d).includes("interrupted"));
    const asked = stream.data().find((e) => e.method === "input.requested");
    expect(asked.params.data.payload).toEqual({ question: "Approve this draft?", draft: "Proposal: roof" });
    // Values never carry the interrupt; every event has a seq (= event_id), increasing.
    for (const e of stream.data()) {
      if (e.method === "values") expect(e.params.data).not.toHaveProperty("__interrupt__");
      expect(e.event_id).toBe(String(e.seq));
    }
    const seqs = stream.data().map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(stream.events.map((e) => e.event)).toEqual(stream.data().map((e) => e.method));

    const answered = await command(threadId, 2, "input.respond", {
      interrupt_id: asked.params.data.interrupt_id,
      response: "yes",
    });
    expect(answered.body).toMatchObject({ type: "success", id: 2 });
    await stream.until("the resumed run to complete", (d) => lifecycle(d).at(-1) === "completed");
    const last = stream
      .data()
      .filter((e) => e.method === "values")
      .at(-1);
    expect(last.params.data).toEqual({ request: "roof", draft: "Proposal: roof", decision: "yes" });
    // Nothing waits any more.
    const again = await command(threadId, 3, "input.respond", {
      interrupt_id: asked.params.data.interrupt_id,
      response: "no",
    });
    expect(again.body).toMatchObject({ type: "error", id: 3, error: "no_such_run" });
    const state = await command(threadId, 4, "state.get");
    expect(state.body.result.values).toEqual(last.params.data);

    // Reconnecting after the input request replays exactly what came after it: no loss, no duplicate.
    const after = await eventStream(threadId, {
      channels: ["lifecycle", "values", "input"],
      since: asked.seq,
    });
    const total = stream.data().length;
    await after.until(
      "the replay",
      (d) => d.length === stream.data().filter((e) => e.seq > asked.seq).length,
    );
    expect(after.data().map((e) => e.seq)).toEqual(
      stream
        .data()
        .filter((e) => e.seq > asked.seq)
        .map((e) => e.seq),
    );
    expect(stream.data()).toHaveLength(total);
    stream.close();
    after.close();
  });

  it("filters by channel; the v1 thread stream does not show protocol events", async () => {
    const threadId = randomUUID();
    const messages = await eventStream(threadId, { channels: ["messages"] });
    const everything = await eventStream(threadId, {
      channels: ["lifecycle", "values", "messages", "updates", "tasks", "checkpoints"],
    });
    await command(threadId, 1, "run.start", {
      assistant_id: "chat",
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    await everything.until("the run to complete", (d) => lifecycle(d).includes("completed"));
    await messages.until("the message to finish", (d) =>
      d.some((e) => e.params.data.event === "message-finish"),
    );
    expect(new Set(messages.data().map((e) => e.method))).toEqual(new Set(["messages"]));
    const kinds = messages.data().map((e) => e.params.data.event);
    expect(kinds[0]).toBe("message-start");
    expect(kinds).toContain("content-block-delta");
    expect(new Set(everything.data().map((e) => e.method))).toEqual(
      new Set(["lifecycle", "values", "messages", "updates", "tasks", "checkpoints"]),
    );
    // The v1 thread stream replays the thread's events without these.
    const ac = new AbortController();
    const v1 = await fetch(`${hangar.server.url}/threads/${threadId}/stream`, {
      headers: { "last-event-id": "-1" },
      signal: ac.signal,
    });
    const reader = v1.body!.getReader();
    const { value } = await reader.read();
    ac.abort();
    expect(new TextDecoder().decode(value)).not.toContain("event: protocol");
  });

  it("the custom channel carries what a node writes, in order", async () => {
    const threadId = randomUUID();
    const custom = await eventStream(threadId, { channels: ["custom"] });
    const ends = await eventStream(threadId, { channels: ["lifecycle"] });
    await command(threadId, 1, "run.start", { assistant_id: "flood", input: { events: 5, bytes: 8 } });
    await ends.until("the run to complete", (d) => lifecycle(d).includes("completed"));
    await custom.until("five custom events", (d) => d.length === 5);
    expect(new Set(custom.data().map((e) => e.method))).toEqual(new Set(["custom"]));
    // The protocol's CustomData: what the node wrote is its `payload`.
    expect(custom.data().map((e) => e.params.data.payload.seq)).toEqual([0, 1, 2, 3, 4]);
    custom.close();
    ends.close();
  });

  it("answers bad commands and filters with protocol errors or 422", async () => {
    const threadId = randomUUID();
    expect((await command(threadId, 1, "run.start", {})).body).toMatchObject({
      type: "error",
      error: "invalid_argument",
    });
    expect((await command(threadId, 2, "no.such")).body).toMatchObject({
      type: "error",
      error: "unknown_command",
    });
    expect((await command(threadId, 3, "input.respond", {})).body).toMatchObject({
      error: "invalid_argument",
    });
    const unknownAssistant = await command(threadId, 4, "run.start", {
      assistant_id: randomUUID(),
      input: {},
    });
    expect(unknownAssistant.body).toMatchObject({ type: "error", id: 4 });
    for (const body of [
      {},
      { channels: [] },
      { channels: ["values"], since: -1 },
      { channels: ["values"], extra: 1 },
    ]) {
      const res = await fetch(`${hangar.server.url}/threads/${threadId}/stream/events`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    const bad = await fetch(`${hangar.server.url}/threads/${threadId}/commands`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ method: "run.start" }),
    });
    expect(bad.status).toBe(422);
  });

  it("the official SDK's ThreadStream (HTTP transport) starts a run, sees the interrupt and answers it", async () => {
    const thread = hangar.client.threads.stream({ assistantId: "approval" });
    try {
      const started = await thread.run.start({ input: { request: "fence" } });
      expect(started).toMatchObject({ run_id: expect.any(String) });
      const values = await thread.values;
      expect(values).toMatchObject({ request: "fence", draft: "Proposal: fence" });
      expect(thread.interrupted).toBe(true);
      expect(thread.interrupts[0]).toMatchObject({ payload: { question: "Approve this draft?" } });
      await thread.input.respond({
        interrupt_id: (thread.interrupts[0] as any).interruptId,
        response: "no",
        namespace: [],
      });
      await waitFor("the answer to reach the thread", async () => {
        const state = await hangar.client.threads.getState<any>(thread.threadId);
        return state.values.decision === "no";
      });
    } finally {
      await (thread as any).close?.();
    }
  });
});

describe("protocol v2 over WebSocket", () => {
  /** A raw protocol socket: commands answered by id, events collected. */
  async function socket(threadId: string) {
    const ws = new WebSocket(`${hangar.server.url.replace(/^http/, "ws")}/threads/${threadId}/stream/events`);
    const events: any[] = [];
    const answers = new Map<number, any>();
    ws.on("message", (raw) => {
      const msg = JSON.parse(String(raw));
      if (msg.type === "event") events.push(msg);
      else answers.set(msg.id, msg);
    });
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const send = async (id: number, method: string, params?: unknown) => {
      ws.send(JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }));
      return waitFor(`the answer to command ${id}`, () => answers.get(id));
    };
    return { ws, events, send };
  }

  it("subscribes, starts a run in-band, gets each matching event once; reconnect replays after a seq", async () => {
    const threadId = randomUUID();
    const a = await socket(threadId);
    const sub = await a.send(1, "subscription.subscribe", { channels: ["lifecycle", "input"] });
    expect(sub).toMatchObject({ type: "success", id: 1, result: { subscription_id: expect.any(String) } });
    await a.send(2, "subscription.subscribe", { channels: ["lifecycle", "values"] });
    const started = await a.send(3, "run.start", { assistant_id: "approval", input: { request: "gate" } });
    expect(started).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
    await waitFor("the interrupt", () => lifecycle(a.events).includes("interrupted"));
    const seqs = a.events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(seqs.length); // two subscriptions, each event once
    expect(new Set(a.events.map((e) => e.method))).toEqual(
      new Set(["lifecycle", "values", "input.requested"]),
    );
    const asked = a.events.find((e) => e.method === "input.requested");
    const answered = await a.send(4, "input.respond", {
      interrupt_id: asked.params.data.interrupt_id,
      response: "ok",
    });
    expect(answered).toMatchObject({ type: "success", id: 4 });
    await waitFor("the resumed run to complete", () => lifecycle(a.events).at(-1) === "completed");
    a.ws.close();

    // Another connection replays from a seq: exactly the later events, once.
    const b = await socket(threadId);
    await b.send(1, "subscription.subscribe", {
      channels: ["lifecycle", "values", "input"],
      since: asked.seq,
    });
    const later = a.events.filter((e) => e.seq > asked.seq).map((e) => e.seq);
    await waitFor("the replay", () => b.events.length >= later.length);
    expect(b.events.map((e) => e.seq)).toEqual(later);
    expect((await b.send(2, "subscription.unsubscribe", { subscription_id: "nope" })).error).toBe(
      "no_such_subscription",
    );
    expect((await b.send(3, "subscription.subscribe", { channels: [] })).error).toBe("invalid_argument");
    expect((await b.send(4, "no.such")).error).toBe("unknown_command");
    b.ws.close();
  });

  it("the official SDK's ThreadStream over WebSocket starts a run, sees the interrupt and answers it", async () => {
    const thread = hangar.client.threads.stream({
      assistantId: "approval",
      transport: "websocket",
      webSocketFactory: (url: string) => new WebSocket(url) as any,
    } as any);
    try {
      await thread.run.start({ input: { request: "shed" } });
      const values = await thread.values;
      expect(values).toMatchObject({ request: "shed", draft: "Proposal: shed" });
      expect(thread.interrupted).toBe(true);
      await thread.input.respond({
        interrupt_id: (thread.interrupts[0] as any).interruptId,
        response: "fine",
        namespace: [],
      });
      await waitFor("the answer to reach the thread", async () => {
        const state = await hangar.client.threads.getState<any>(thread.threadId);
        return state.values.decision === "fine";
      });
    } finally {
      await (thread as any).close?.();
    }
  });
});
