// Protocol v2: `POST /threads/{id}/commands` (run.start, input.respond, state.get) and
// `POST /threads/{id}/stream/events` (SSE filtered by channel, replayed after `since`), and the same path as a
// WebSocket (commands in-band, subscription.subscribe / unsubscribe / reconnect), through raw HTTP, raw
// WebSocket (the `ws` package: Node 20 has no global WebSocket) and the official SDK's ThreadStream on both
// transports.
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { join } from "node:path";
import { writeFileSync } from "node:fs";
import { ROOT, tempDir, useHangar } from "../helpers/server.ts";
import { PROTOCOL_CHANNELS } from "../helpers/protocol-channels.ts";
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
    expect(again.body).toMatchObject({ type: "error", id: 3, error: "invalid_argument" });
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
    // A values event's messages as the official server normalizes them: type, content (an AI message's as content
    // blocks), id, and only what else is set (never LangChain's empty defaults, whichever form the state held them in).
    const values = everything.data().filter((e) => e.method === "values");
    expect(values.at(-1).params.data.messages).toEqual([
      { type: "human", content: "hi", id: expect.any(String) },
      {
        type: "ai",
        content: [{ type: "text", text: expect.any(String) }],
        id: expect.any(String),
        response_metadata: expect.objectContaining({ finish_reason: "stop" }),
      },
    ]);
    for (const e of values)
      for (const m of e.params.data.messages)
        for (const key of ["additional_kwargs", "tool_calls", "invalid_tool_calls", "content_blocks"])
          expect(m).not.toHaveProperty(key);
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

  it("namespaces and depth select subgraphs; the tools and custom:<name> channels; agent.getTree", async () => {
    const threadId = randomUUID();
    const root = await eventStream(threadId, { channels: ["lifecycle"], namespaces: [[]], depth: 0 });
    const inner = await eventStream(threadId, {
      channels: ["lifecycle", "updates"],
      namespaces: [["inner"]],
      depth: 0,
    });
    const tools = await eventStream(threadId, { channels: ["tools"] });
    const progress = await eventStream(threadId, { channels: ["custom:progress"] });
    const custom = await eventStream(threadId, { channels: ["custom"] });
    await command(threadId, 1, "run.start", { assistant_id: "nested", input: { topic: "owls" } });
    await root.until("the run to complete", (d) => lifecycle(d).includes("completed"));
    // Only the root's own lifecycle: no subgraph's.
    expect(root.data().every((e) => e.params.namespace.length === 0)).toBe(true);
    // The subgraph `inner` and nothing below it: its start, the update of its node, its end.
    await inner.until("inner's end", (d) => d.some((e) => e.params.data.event === "completed"));
    for (const e of inner.data()) {
      expect(e.params.namespace).toHaveLength(1);
      expect(e.params.namespace[0]).toMatch(/^inner:/);
    }
    expect(inner.data().map((e) => e.params.data.event ?? e.params.node)).toEqual([
      "started",
      "research",
      "completed",
    ]);
    // The tool call, inside the subgraph's subgraph.
    await tools.until("the tool to finish", (d) => d.some((e) => e.params.data.event === "tool-finished"));
    expect(tools.data().map((e) => e.params.data.event)).toEqual(["tool-started", "tool-finished"]);
    expect(tools.data()[0].params.data).toMatchObject({ tool_call_id: "call-1", tool_name: "lookup" });
    expect(tools.data()[1].params.data.output).toMatchObject({ content: "facts about owls" });
    expect(tools.data()[0].params.namespace.map((s: string) => s.split(":")[0])).toEqual([
      "inner",
      "research",
    ]);
    // custom:<name> is one named channel; `custom` has them all.
    await custom.until("both custom events", (d) => d.length === 2);
    expect(custom.data().map((e) => e.params.data.name)).toEqual(["status", "progress"]);
    await progress.until("the progress event", (d) => d.length >= 1);
    expect(progress.data().map((e) => e.params.data)).toEqual([
      { name: "progress", payload: { step: "research" } },
    ]);

    const tree = await command(threadId, 2, "agent.getTree");
    expect(tree.body).toMatchObject({
      type: "success",
      result: {
        tree: {
          namespace: [],
          status: "completed",
          // `plan` shows as a namespace too: its chat model call ran with the node's config.
          children: expect.arrayContaining([
            expect.objectContaining({
              graph_name: "inner",
              status: "completed",
              children: [expect.objectContaining({ graph_name: "research", status: "completed" })],
            }),
          ]),
        },
      },
    });
    expect((await command(threadId, 3, "agent.getTree", { run_id: randomUUID() })).body).toMatchObject({
      error: "no_such_run",
    });
    expect((await command(threadId, 4, "agent.getTree", { run_id: "x" })).body).toMatchObject({
      error: "invalid_argument",
    });
    for (const s of [root, inner, tools, progress, custom]) s.close();
  });

  it("state.listCheckpoints pages the history; state.fork runs again from an older checkpoint", async () => {
    const threadId = randomUUID();
    const ends = await eventStream(threadId, { channels: ["lifecycle"], namespaces: [[]], depth: 0 });
    await command(threadId, 1, "run.start", { assistant_id: "nested", input: { topic: "bats" } });
    await ends.until("the run to complete", (d) => lifecycle(d).includes("completed"));
    const first = await command(threadId, 2, "state.listCheckpoints", { limit: 2 });
    const newest = first.body.result.checkpoints;
    expect(newest.map((c: any) => [c.step, c.node_name])).toEqual([
      [2, "inner"],
      [1, "plan"],
    ]);
    expect(newest[0]).toMatchObject({ id: expect.any(String), timestamp: expect.any(String) });
    const rest = await command(threadId, 3, "state.listCheckpoints", { before: newest[1].id });
    expect(rest.body.result.checkpoints.map((c: any) => c.step)).toEqual([0, -1]);
    const state = await command(threadId, 4, "state.get", { keys: ["topic"] });
    expect(state.body.result).toEqual({
      values: { topic: "bats" },
      checkpoint: { id: newest[0].id, ns: "" },
    });

    // Forking from the checkpoint after `plan` runs `inner` again from there: a new branch whose parent is it.
    const before = await hangar.client.threads.getState<any>(threadId);
    const forked = await command(threadId, 5, "state.fork", { checkpoint_id: newest[1].id });
    expect(forked.body).toMatchObject({ type: "success", result: { thread_id: threadId } });
    await hangar.client.runs.join(threadId, forked.body.result.run_id);
    const after = await hangar.client.threads.getState<any>(threadId);
    // The same values as the first run's end: `inner` ran once more from the fork, not on top of that end.
    expect(after.values).toEqual(before.values);
    expect(after.values.notes.at(-1)).toBe("facts about bats");
    // The new head's ancestors lead to the forked checkpoint, not through the first run's last one.
    const history = await hangar.client.threads.getHistory<any>(threadId, { limit: 20 });
    const parent = new Map(
      history.map((h) => [h.checkpoint.checkpoint_id, h.parent_checkpoint?.checkpoint_id]),
    );
    const line: string[] = [];
    for (let id = after.checkpoint.checkpoint_id; id; id = parent.get(id)) line.push(id);
    expect(line).toContain(newest[1].id);
    expect(line).not.toContain(newest[0].id);
    expect(line[0]).not.toBe(newest[0].id);

    expect((await command(threadId, 6, "state.fork", { checkpoint_id: randomUUID() })).body).toMatchObject({
      error: "no_such_checkpoint",
    });
    expect((await command(threadId, 7, "state.fork", {})).body).toMatchObject({ error: "invalid_argument" });
    for (const limit of [0, 1001, "2"]) {
      expect((await command(threadId, 8, "state.listCheckpoints", { limit })).body).toMatchObject({
        error: "invalid_argument",
      });
    }
    expect((await command(threadId, 9, "state.get", { keys: "topic" })).body).toMatchObject({
      error: "invalid_argument",
    });
    ends.close();
  });

  it("run.start under reject on a busy thread is refused; input.inject queues a message behind the run", async () => {
    const threadId = randomUUID();
    const release = join(tempDir("protocol-hold"), "release");
    const started = await command(threadId, 1, "run.start", {
      assistant_id: "hold",
      input: { messages: [{ role: "user", content: "first" }], release },
    });
    expect(started.body.type).toBe("success");
    const refused = await command(threadId, 2, "run.start", {
      assistant_id: "hold",
      input: { messages: [{ role: "user", content: "second" }] },
      multitaskStrategy: "reject",
    });
    expect(refused.body).toMatchObject({ type: "error", id: 2, error: "invalid_argument" });
    expect(refused.body.message).toMatch(/busy|in progress|inflight/i);
    const injected = await command(threadId, 3, "input.inject", {
      namespace: [],
      message: { role: "user", content: "also this" },
    });
    expect(injected.body).toMatchObject({ type: "success", result: { run_id: expect.any(String) } });
    expect(
      (await command(threadId, 4, "input.inject", { namespace: [], message: { role: "tool", content: "x" } }))
        .body,
    ).toMatchObject({ error: "invalid_argument" });
    expect((await hangar.client.runs.get(threadId, injected.body.result.run_id)).status).toBe("pending");
    writeFileSync(release, "");
    await hangar.client.runs.join(threadId, injected.body.result.run_id);
    const state = await hangar.client.threads.getState<any>(threadId);
    expect(state.values.messages.map((m: any) => m.content)).toEqual([
      "first",
      "seen 1",
      "also this",
      "seen 3",
    ]);
    // On a thread nothing ran on, input.inject has no assistant to go on with.
    expect(
      (
        await command(randomUUID(), 5, "input.inject", {
          namespace: [],
          message: { role: "user", content: "hello" },
        })
      ).body,
    ).toMatchObject({ error: "no_such_run" });
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
    expect(sub).toMatchObject({
      type: "success",
      id: 1,
      result: { subscription_id: expect.any(String), replayed_events: 0 },
      meta: { thread_id: threadId, applied_through_seq: 0 },
    });
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

  it("a client that stops reading gets every event, in order, once it reads again (back-pressure)", async () => {
    const threadId = randomUUID();
    const c = await socket(threadId);
    await c.send(1, "subscription.subscribe", { channels: ["custom"] });
    const started = await c.send(2, "run.start", {
      assistant_id: "flood",
      input: { events: 200, bytes: 8_192 },
    });
    // ~1.6 MB while the client reads nothing: far past the socket's HANGAR_STREAM_BUFFER_BYTES (64 KiB), within
    // what the thread's log keeps for replay (2 MB embedded).
    c.ws.pause();
    await hangar.client.runs.join(threadId, started.result.run_id);
    c.ws.resume();
    await waitFor("all 200 events", () => c.events.length >= 200);
    expect(c.events.map((e) => e.params.data.payload.seq)).toEqual([...Array(200).keys()]);
    const seqs = c.events.map((e) => e.seq);
    expect(new Set(seqs).size).toBe(200);
    c.ws.close();
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

describe("protocol v2's WebSocket and http.cors", () => {
  const narrow = useHangar({ config: join(ROOT, "test/fixtures/protocol-cors/langgraph.json") });

  /** The HTTP status of an upgrade attempt (101 when the socket opened). */
  const upgrade = (origin?: string) =>
    new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(
        `${narrow.server.url.replace(/^http/, "ws")}/threads/${randomUUID()}/stream/events`,
        origin ? { origin } : {},
      );
      ws.once("open", () => {
        ws.close();
        resolve(101);
      });
      ws.once("unexpected-response", (_req, res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      ws.once("error", reject);
    });

  it("refuses an upgrade from a browser origin the CORS settings do not allow (403)", async () => {
    expect(await upgrade("http://evil.example")).toBe(403);
    expect(await upgrade("http://good.example")).toBe(101);
    // Not a browser (no Origin): as for any other request.
    expect(await upgrade()).toBe(101);
  });
});

describe("http.disable_protocol", () => {
  const off = useHangar({ config: join(ROOT, "test/fixtures/protocol-disabled/langgraph.json") });

  it("takes protocol v2's paths away (404); the v1 runs API stays", async () => {
    const threadId = randomUUID();
    for (const path of ["commands", "stream/events"]) {
      const res = await fetch(`${off.server.url}/threads/${threadId}/${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(path === "commands" ? { id: 1, method: "state.get" } : { channels: ["values"] }),
      });
      expect(res.status, path).toBe(404);
    }
    const thread = await off.client.threads.create();
    const run = await off.client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect((run as any).messages).toHaveLength(2);
  });
});

describe("the official SDK's ThreadStream on every channel", () => {
  const CHANNELS = PROTOCOL_CHANNELS;
  const rootEnd = (e: any) =>
    e.method === "lifecycle" && !e.params.namespace.length && e.params.data.event === "completed";

  /** Transport options; `drop()` cuts the client's current connection as a network fault would. */
  function transport(name: "sse" | "websocket") {
    const sockets: WebSocket[] = [];
    const streams: AbortController[] = [];
    const options =
      name === "websocket"
        ? {
            transport: "websocket",
            webSocketFactory: (url: string) => {
              const ws = new WebSocket(url);
              sockets.push(ws);
              return ws as any;
            },
          }
        : {
            fetch: (url: any, init: RequestInit = {}) => {
              if (!String(url).endsWith("/stream/events")) return fetch(url, init);
              const cut = new AbortController();
              streams.push(cut);
              const signal = init.signal ? AbortSignal.any([init.signal, cut.signal]) : cut.signal;
              return fetch(url, { ...init, signal });
            },
          };
    const drop = () => {
      if (name === "websocket") sockets.at(-1)!.terminate();
      else streams.at(-1)!.abort(new Error("connection cut"));
    };
    return { options, drop };
  }

  for (const name of ["sse", "websocket"] as const) {
    it(`${name}: streams each channel of a run with a subgraph; a second client replays`, async () => {
      const { options } = transport(name);
      const thread = hangar.client.threads.stream({ assistantId: "nested", ...options } as any);
      const seen: any[] = [];
      try {
        const all = await thread.subscribe({ channels: [...CHANNELS] });
        await thread.run.start({ input: { topic: "moths" } });
        for await (const e of all as AsyncIterable<any>) {
          seen.push(e);
          if (rootEnd(e)) break;
        }
      } finally {
        await thread.close();
      }
      expect(new Set(seen.map((e) => e.method))).toEqual(new Set(CHANNELS));
      const seqs = seen.map((e) => e.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seen.some((e) => e.method === "messages" && e.params.data.event === "content-block-delta")).toBe(
        true,
      );
      expect(seen.some((e) => e.method === "tools" && e.params.data.event === "tool-finished")).toBe(true);
      expect(seen.some((e) => e.params.namespace.length === 2)).toBe(true);

      // A second client on the same thread. Over WebSocket the SDK passes `since` on: exactly the later events.
      // Over SSE it always asks for the whole log and drops what it has seen (by event_id): all of them, once.
      const middle = seen[Math.floor(seen.length / 2)].seq;
      const expected = name === "websocket" ? seen.filter((e) => e.seq > middle) : seen;
      const again = hangar.client.threads.stream(thread.threadId, {
        assistantId: "nested",
        ...options,
      } as any);
      const replayed: any[] = [];
      try {
        const sub = await again.subscribe({ channels: [...CHANNELS], since: middle } as any);
        for await (const e of sub as AsyncIterable<any>) {
          replayed.push(e);
          if (replayed.length === expected.length) break;
        }
      } finally {
        await again.close();
      }
      expect(replayed.map((e) => e.seq)).toEqual(expected.map((e) => e.seq));
      expect(replayed).toEqual(expected);
    });

    it(`${name}: the connection cut mid-run, the SDK reconnects and gets every event once`, async () => {
      const { options, drop } = transport(name);
      const release = join(tempDir("protocol-cut"), "release");
      const channels = ["lifecycle", "values", "updates", "tasks", "checkpoints"];
      const thread = hangar.client.threads.stream({
        assistantId: "hold",
        reconnectDelayMs: () => 50,
        ...options,
      } as any);
      const seen: any[] = [];
      try {
        const sub = await thread.subscribe({ channels } as any);
        await thread.run.start({ input: { messages: [{ role: "user", content: "hold on" }], release } });
        let cut = false;
        for await (const e of sub as AsyncIterable<any>) {
          seen.push(e);
          // The run now waits in its node: cut the connection, then let the run go on.
          if (!cut && e.method === "tasks") {
            cut = true;
            drop();
            writeFileSync(release, "");
          }
          if (rootEnd(e)) break;
        }
        expect(cut).toBe(true);
      } finally {
        await thread.close();
      }
      // Exactly what the thread's log holds for these channels, in order, once.
      const log = await eventStream(thread.threadId, { channels });
      await log.until("the whole log", (d) => d.some(rootEnd));
      log.close();
      expect(seen.map((e) => e.seq)).toEqual(log.data().map((e) => e.seq));
      expect(seen.at(-1).params.data.event).toBe("completed");
    });
  }
});
