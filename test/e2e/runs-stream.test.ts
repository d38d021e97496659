// End-to-end: POST /threads/{id}/runs/stream through the official SDK, in every stream mode, against `hangar dev`.
import type { StreamMode } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { graph as researchGraph } from "../../examples/src/research.ts";
import { baseMode, collect, namespaceOf, postSse, type StreamPart } from "../helpers/sse.ts";

const ALL_MODES: StreamMode[] = [
  "values",
  "updates",
  "messages-tuple",
  "custom",
  "debug",
  "events",
  "tasks",
  "checkpoints",
];
/** Event names of the eight modes on the wire (`messages-tuple` is sent as `messages`). */
const ALL_EVENT_NAMES = [
  "values",
  "updates",
  "messages",
  "custom",
  "debug",
  "events",
  "tasks",
  "checkpoints",
];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const human = (content: string) => ({ messages: [{ type: "human", content }] });

/** What the research example yields when run in-process (no server): the reference for server output. */
async function localResearch(topic: string, streamMode: "updates" | "custom", subgraphs = false) {
  const out: Array<{ ns: string[]; data: any }> = [];
  for await (const chunk of await researchGraph.stream({ topic }, { streamMode, subgraphs })) {
    if (subgraphs) {
      const [ns, data] = chunk as unknown as [string[], any];
      out.push({ ns, data });
    } else out.push({ ns: [], data: chunk });
  }
  return out;
}

const isNonEmptyString = (v: unknown) => typeof v === "string" && v.length > 0;

const hangar = useHangar();

async function newThread(): Promise<string> {
  return (await hangar.client.threads.create()).thread_id;
}

/** Events after the leading `metadata` event. */
function body(events: StreamPart[]): StreamPart[] {
  expect(events[0]?.event).toBe("metadata");
  return events.slice(1);
}

function names(events: StreamPart[]): string[] {
  return events.map((e) => e.event);
}

describe("run stream framing", () => {
  it("starts with a metadata event carrying run_id and attempt only", async () => {
    const threadId = await newThread();
    let created: { run_id: string; thread_id?: string } | undefined;
    const events = await collect(
      hangar.client.runs.stream(threadId, "chat", {
        input: human("hi"),
        onRunCreated: (meta) => (created = meta),
      }),
    );
    expect(events[0].event).toBe("metadata");
    const meta = events[0].data;
    expect(meta).toEqual({ run_id: expect.stringMatching(UUID), attempt: 1 });
    // The SDK reads run and thread ids from the Content-Location header.
    expect(created).toEqual({ run_id: meta.run_id, thread_id: threadId });
    expect(events.filter((e) => e.event === "metadata")).toHaveLength(1);
  });

  it("uses SSE event/data/id lines, Content-Location, and defaults to stream_mode values", async () => {
    const threadId = await newThread();
    const res = await postSse(hangar.server.url, `/threads/${threadId}/runs/stream`, {
      assistant_id: "chat",
      input: human("hi"),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.text).toMatch(/^event: metadata\r?\ndata: \{/m);
    const events = res.events;
    expect(events[0].event).toBe("metadata");
    const runId = (events[0].data as { run_id: string }).run_id;
    expect(res.headers.get("content-location")).toBe(`/threads/${threadId}/runs/${runId}`);
    // Every event has an id, and ids are distinct.
    const ids = events.map((e) => e.id);
    for (const id of ids) expect(id).toMatch(/\S/);
    expect(new Set(ids).size).toBe(ids.length);
    // Default stream mode: values only.
    const rest = events.slice(1);
    expect(rest.length).toBeGreaterThan(0);
    expect(new Set(names(rest as StreamPart[]))).toEqual(new Set(["values"]));
    const last = rest[rest.length - 1].data as { messages: Array<{ type: string; content: string }> };
    expect(last.messages.map((m) => m.type)).toEqual(["human", "ai"]);
  });
});

describe("stream modes, one at a time", () => {
  it("values: full state after each step", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "chat", { input: human("hello"), streamMode: "values" }),
      ),
    );
    expect(new Set(names(events))).toEqual(new Set(["values"]));
    expect(events[0].data.messages.map((m: any) => m.type)).toEqual(["human"]);
    const last = events[events.length - 1].data;
    expect(last.messages.map((m: any) => m.type)).toEqual(["human", "ai"]);
    expect(last.messages[0].content).toBe("hello");
    expect(isNonEmptyString(last.messages[1].content)).toBe(true);
  });

  it("updates: each item names the node that produced it", async () => {
    const threadId = await newThread();
    const chat = body(
      await collect(
        hangar.client.runs.stream(threadId, "chat", { input: human("hello"), streamMode: "updates" }),
      ),
    );
    expect(new Set(names(chat))).toEqual(new Set(["updates"]));
    expect(chat).toHaveLength(1);
    expect(Object.keys(chat[0].data)).toEqual(["agent"]);
    expect(chat[0].data.agent.messages[0].type).toBe("ai");

    const research = body(
      await collect(
        hangar.client.runs.stream(await newThread(), "research", {
          input: { topic: "cats" },
          streamMode: "updates",
        }),
      ),
    );
    expect(new Set(names(research))).toEqual(new Set(["updates"]));
    expect(research.map((e) => Object.keys(e.data))).toEqual([["plan"], ["research"], ["write"]]);
    const local = await localResearch("cats", "updates");
    expect(research.map((e) => e.data)).toEqual(local.map((c) => c.data));
  });

  it("updates with stream_subgraphs: subgraph updates are namespaced, parallel nodes come separately", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "research", {
          input: { topic: "cats" },
          streamMode: "updates",
          streamSubgraphs: true,
        }),
      ),
    );
    const top = events.filter((e) => e.event === "updates");
    const sub = events.filter((e) => e.event.startsWith("updates|"));
    expect(top.length + sub.length).toBe(events.length);
    expect(top.map((e) => Object.keys(e.data))).toEqual([["plan"], ["research"], ["write"]]);

    // Every subgraph event carries one namespace segment `research:<task id>`, the same for all of them.
    for (const e of sub) {
      const ns = namespaceOf(e.event);
      expect(ns).toHaveLength(1);
      expect(ns[0]).toMatch(/^research:[^|:]+$/);
    }
    expect(new Set(sub.map((e) => e.event)).size).toBe(1);

    // One event per node, each naming only its own node, even for the two parallel searches.
    for (const e of sub) expect(Object.keys(e.data)).toHaveLength(1);
    const byNode = new Map(sub.map((e) => [Object.keys(e.data)[0], e.data[Object.keys(e.data)[0]]]));
    expect([...byNode.keys()].sort()).toEqual(["collect", "search_docs", "search_web"]);
    expect(sub).toHaveLength(3);
    const local = await localResearch("cats", "updates", true);
    expect(top.map((e) => e.data)).toEqual(local.filter((c) => c.ns.length === 0).map((c) => c.data));
    const localByNode = new Map(
      local
        .filter((c) => c.ns.length === 1)
        .map((c) => [Object.keys(c.data)[0], c.data[Object.keys(c.data)[0]]]),
    );
    expect(localByNode.size).toBe(3);
    expect(Object.fromEntries(byNode)).toEqual(Object.fromEntries(localByNode));
    // collect runs after both searches.
    expect(Object.keys(sub[2].data)).toEqual(["collect"]);
  });

  it("messages-tuple: event `messages` with [chunk, metadata] naming the node", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "chat", { input: human("hi"), streamMode: "messages-tuple" }),
      ),
    );
    expect(events.length).toBeGreaterThan(0);
    expect(new Set(names(events))).toEqual(new Set(["messages"]));
    let text = "";
    for (const e of events) {
      expect(Array.isArray(e.data)).toBe(true);
      expect(e.data).toHaveLength(2);
      const [chunk, metadata] = e.data;
      expect(typeof chunk.content).toBe("string");
      expect(metadata.langgraph_node).toBe("agent");
      expect(metadata.service_node).toBe("agent");
      expect(metadata.tags).toContain("chat_model");
      text += chunk.content;
    }
    // The state after the stream holds the AI reply the chunks spelled out.
    const state = await hangar.client.threads.getState<{
      messages: Array<{ type: string; content: string }>;
    }>(threadId);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    const reply = state.values.messages[1].content;
    expect(isNonEmptyString(reply)).toBe(true);
    expect(text).toBe(reply);
  });

  it("custom: data written by config.writer inside the subgraph", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "research", { input: { topic: "owls" }, streamMode: "custom" }),
      ),
    );
    expect(new Set(names(events))).toEqual(new Set(["custom"]));
    const bySource = (a: { source: string }, b: { source: string }) => a.source.localeCompare(b.source);
    const local = (await localResearch("owls", "custom")).map((c) => c.data);
    expect(local).toHaveLength(2);
    expect(events.map((e) => e.data).sort(bySource)).toEqual(local.sort(bySource));
    expect(events[0].data).toMatchObject({ status: "searching", topic: "owls" });
  });

  it("debug: checkpoints and tasks with node names", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(hangar.client.runs.stream(threadId, "chat", { input: human("hi"), streamMode: "debug" })),
    );
    expect(new Set(names(events))).toEqual(new Set(["debug"]));
    const types = new Set(events.map((e) => e.data.type));
    expect(types.has("checkpoint")).toBe(true);
    expect(types.has("task")).toBe(true);
    expect(types.has("task_result")).toBe(true);
    const task = events.find((e) => e.data.type === "task");
    expect(task!.data.payload.name).toBe("agent");
    const lastCheckpoint = events.filter((e) => e.data.type === "checkpoint").pop()!;
    expect(lastCheckpoint.data.payload.values.messages.map((m: any) => m.type)).toEqual(["human", "ai"]);
  });

  it("events: LangChain callback events including the chat model's tokens", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "chat", { input: human("hi"), streamMode: "events" }),
      ),
    );
    expect(new Set(names(events))).toEqual(new Set(["events"]));
    const kinds = new Set(events.map((e) => e.data.event));
    expect(kinds.has("on_chain_start")).toBe(true);
    expect(kinds.has("on_chain_end")).toBe(true);
    expect(kinds.has("on_chat_model_stream")).toBe(true);
    expect(events.some((e) => e.data.event === "on_chain_start" && e.data.name === "agent")).toBe(true);
  });

  it("tasks: a start and a result for every node", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "research", { input: { topic: "cats" }, streamMode: "tasks" }),
      ),
    );
    expect(new Set(names(events))).toEqual(new Set(["tasks"]));
    for (const node of ["plan", "research", "write"]) {
      const mine = events.filter((e) => e.data.name === node);
      expect(mine).toHaveLength(2);
      const [start, end] = mine;
      expect(start.data.id).toBe(end.data.id);
      expect(start.data).toHaveProperty("input");
      expect(start.data).toHaveProperty("triggers");
      expect(end.data).toHaveProperty("result");
    }
    const local = await localResearch("cats", "updates");
    expect(events.find((e) => e.data.name === "write" && "result" in e.data)!.data.result).toEqual(
      local.find((c) => "write" in c.data)!.data.write,
    );
  });

  it("a chat model streams whatever the modes, as on the official server: its message has a chunk's id", async () => {
    // Neither `messages` nor `events` is streamed: the model still runs through a handler that prefers streaming,
    // so the message the node returns is its chunks' aggregate (id `run-…`, `tool_call_chunks`).
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "chat", { input: human("hi"), streamMode: ["updates", "tasks"] }),
      ),
    );
    const update = events.find((e) => e.event === "updates")!.data.agent.messages[0];
    const result = events.find((e) => e.event === "tasks" && "result" in e.data)!.data.result.messages[0];
    for (const message of [update, result]) {
      expect(message.id).toMatch(/^run-/);
      expect(message.tool_call_chunks).toEqual([]);
    }
    expect(result.id).toBe(update.id);
    const state = await hangar.client.threads.getState<{ messages: Array<{ id: string }> }>(threadId);
    expect(state.values.messages[1].id).toBe(update.id);
  });

  it("checkpoints: one per super-step, ending with the final state", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "research", {
          input: { topic: "cats" },
          streamMode: "checkpoints",
        }),
      ),
    );
    expect(new Set(names(events))).toEqual(new Set(["checkpoints"]));
    expect(events.some((e) => JSON.stringify(e.data.next) === JSON.stringify(["plan"]))).toBe(true);
    const steps = events.map((e) => e.data.metadata.step);
    expect([...steps].sort((a, b) => a - b)).toEqual(steps);
    const last = events[events.length - 1].data;
    expect(last.next).toEqual([]);
    expect(last.values).toEqual(await researchGraph.invoke({ topic: "cats" }));
  });
});

describe("all stream modes as one list", () => {
  it("names each event by its mode (chat graph)", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "chat", { input: human("hi"), streamMode: ALL_MODES }),
      ),
    );
    const seen = new Set(names(events));
    for (const name of seen) expect(ALL_EVENT_NAMES).toContain(name);
    for (const name of ["values", "updates", "messages", "debug", "events", "tasks", "checkpoints"]) {
      expect(seen.has(name), `event ${name} present`).toBe(true);
    }
    const msg = events.find((e) => e.event === "messages")!;
    expect(msg.data[1].service_node).toBe("agent");
    expect(events.find((e) => e.event === "updates")!.data).toHaveProperty("agent");
  });

  it("names subgraph events mode|namespace with stream_subgraphs (research graph)", async () => {
    const threadId = await newThread();
    const events = body(
      await collect(
        hangar.client.runs.stream(threadId, "research", {
          input: { topic: "cats" },
          streamMode: ALL_MODES,
          streamSubgraphs: true,
        }),
      ),
    );
    for (const e of events) {
      expect(ALL_EVENT_NAMES).toContain(baseMode(e.event));
      for (const ns of namespaceOf(e.event)) expect(ns).toMatch(/^research:[^|:]+$/);
    }
    const seen = new Set(names(events));
    const bases = new Set(names(events).map(baseMode));
    for (const mode of ["values", "updates", "custom", "debug", "events", "tasks", "checkpoints"]) {
      expect(bases.has(mode), `mode ${mode} present`).toBe(true);
    }
    expect([...seen].some((n) => /^updates\|research:/.test(n))).toBe(true);
    expect([...seen].some((n) => /^custom\|research:/.test(n))).toBe(true);
    expect(seen.has("updates")).toBe(true);
    expect(seen.has("values")).toBe(true);
  });
});

describe("run records and options", () => {
  it("lists the streamed run on the thread and returns it with status success", async () => {
    const threadId = await newThread();
    const events = await collect(hangar.client.runs.stream(threadId, "chat", { input: human("hi") }));
    const runId = events[0].data.run_id as string;
    const runs = await hangar.client.runs.list(threadId);
    expect(runs.map((r) => r.run_id)).toContain(runId);
    const run = await hangar.client.runs.get(threadId, runId);
    expect(run.run_id).toBe(runId);
    expect(run.thread_id).toBe(threadId);
    expect(run.status).toBe("success");
    expect(run.assistant_id).toMatch(UUID);
    expect((await hangar.client.threads.get(threadId)).status).toBe("idle");
  });

  it("if_not_exists create makes the missing thread; the default (reject) answers 404", async () => {
    const missing = crypto.randomUUID();
    await expect(
      collect(hangar.client.runs.stream(missing, "chat", { input: human("hi") })),
    ).rejects.toMatchObject({
      status: 404,
    });
    await expect(hangar.client.threads.get(missing)).rejects.toMatchObject({ status: 404 });

    const events = await collect(
      hangar.client.runs.stream(missing, "chat", { input: human("hi"), ifNotExists: "create" }),
    );
    expect(events[0].event).toBe("metadata");
    expect(events.some((e) => e.event === "error")).toBe(false);
    const thread = await hangar.client.threads.get<{ messages: Array<{ type: string }> }>(missing);
    expect(thread.thread_id).toBe(missing);
    expect(thread.status).toBe("idle");
    expect(thread.metadata?.graph_id).toBe("chat");
    const state = await hangar.client.threads.getState<{ messages: Array<{ type: string }> }>(missing);
    expect(state.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
  });

  it("checkpoint_id runs from an older checkpoint (fork)", async () => {
    const threadId = await newThread();
    await hangar.client.runs.wait(threadId, "chat", { input: human("first") });
    await hangar.client.runs.wait(threadId, "chat", { input: human("second") });
    const history = await hangar.client.threads.getHistory<{ messages: Array<{ content: string }> }>(
      threadId,
      {
        limit: 50,
      },
    );
    const afterFirst = history.find((s) => s.values.messages?.length === 2 && s.next.length === 0);
    expect(afterFirst).toBeDefined();
    const checkpointId = afterFirst!.checkpoint.checkpoint_id!;

    const out = (await hangar.client.runs.wait(threadId, "chat", {
      input: human("forked"),
      checkpointId,
    })) as {
      messages: Array<{ type: string; content: string }>;
    };
    expect(out.messages.map((m) => m.content).slice(0, 3)).toEqual([
      "first",
      afterFirst!.values.messages[1].content,
      "forked",
    ]);
    expect(out.messages).toHaveLength(4);

    const state = await hangar.client.threads.getState<{ messages: Array<{ content: string }> }>(threadId);
    expect(state.values.messages.map((m) => m.content)).not.toContain("second");
    expect(state.values.messages[2].content).toBe("forked");
    expect(state.parent_checkpoint).toBeTruthy();

    // The same through `checkpoint: {checkpoint_id}`.
    const again = (await hangar.client.runs.wait(threadId, "chat", {
      input: human("forked again"),
      checkpoint: { checkpoint_id: checkpointId, checkpoint_ns: "", checkpoint_map: null },
    })) as { messages: Array<{ content: string }> };
    expect(again.messages.map((m) => m.content)).toHaveLength(4);
    expect(again.messages[2].content).toBe("forked again");
  });

  it("a run from a checkpoint records its checkpoint_map in its checkpoints' metadata, as the official server", async () => {
    const threadId = await newThread();
    await hangar.client.runs.wait(threadId, "chat", { input: human("first") });
    const history = await hangar.client.threads.getHistory(threadId);
    const before = history.find((h) => h.next.includes("agent"))!;
    expect(before.checkpoint.checkpoint_map).toBeNull();
    await hangar.client.runs.wait(threadId, "chat", { input: null, checkpoint: before.checkpoint as never });
    const state = await hangar.client.threads.getState(threadId);
    expect(state.metadata).toHaveProperty("checkpoint_map", null);
  });

  it("interrupt_before stops before the node; a run with input null continues", async () => {
    const threadId = await newThread();
    const events = await collect(
      hangar.client.runs.stream(threadId, "chat", {
        input: human("wait"),
        interruptBefore: ["agent"],
        streamMode: ["values", "updates"],
      }),
    );
    expect(events.some((e) => e.event === "error")).toBe(false);
    const stopped = await hangar.client.threads.getState<{ messages: Array<{ type: string }> }>(threadId);
    expect(stopped.next).toEqual(["agent"]);
    expect(stopped.values.messages.map((m) => m.type)).toEqual(["human"]);
    expect((await hangar.client.threads.get(threadId)).status).toBe("interrupted");

    const resumed = body(
      await collect(hangar.client.runs.stream(threadId, "chat", { input: null, streamMode: "updates" })),
    );
    expect(resumed.map((e) => Object.keys(e.data))).toEqual([["agent"]]);
    const done = await hangar.client.threads.getState<{ messages: Array<{ type: string; content: string }> }>(
      threadId,
    );
    expect(done.next).toEqual([]);
    expect(done.values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(isNonEmptyString(done.values.messages[1].content)).toBe(true);
    expect((await hangar.client.threads.get(threadId)).status).toBe("idle");
  });

  it("a failing run sends an error event and leaves the thread in status error", async () => {
    const threadId = await newThread();
    const events = await collect(
      hangar.client.runs.stream(threadId, "chat", {
        input: { messages: [{ type: "nonsense-role", content: "x" }] },
        streamMode: ["values", "updates"],
      }),
    );
    expect(events[0].event).toBe("metadata");
    const errors = events.filter((e) => e.event === "error");
    expect(errors).toHaveLength(1);
    expect(events[events.length - 1].event).toBe("error");
    expect(typeof errors[0].data.message).toBe("string");
    expect(errors[0].data.message.length).toBeGreaterThan(0);
    expect(typeof errors[0].data.error).toBe("string");
    expect((await hangar.client.threads.get(threadId)).status).toBe("error");
    const runId = events[0].data.run_id as string;
    expect((await hangar.client.runs.get(threadId, runId)).status).toBe("error");
  });
});
