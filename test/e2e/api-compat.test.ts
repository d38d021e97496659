// API behaviours the official server has and its clients and tests rely on, through the official SDK:
// supersteps, state metadata (writes, checkpoint_id), runs marking threads at once, subgraph checkpoints,
// UUID-shaped ids, exact event and state shapes, assistant deletion with threads, official error wording.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { getJson, httpError, postJson } from "../helpers/http.ts";
import { ROOT, useHangar } from "../helpers/server.ts";
import { collect } from "../helpers/sse.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/compat-api-project/langgraph.json") });

const human = (content: string) => ({ messages: [{ type: "human", content }] });
const contents = (values: any): string[] => (values?.messages ?? []).map((m: any) => m.content);

describe("thread state metadata", () => {
  it("carries checkpoint_id and, per checkpoint, the writes of the nodes (input, loop, update)", async () => {
    const c = hangar.client;
    const t = await c.threads.create();
    await c.runs.wait(t.thread_id, "agent", { input: human("foo") });
    const history = await c.threads.getHistory(t.thread_id);
    expect(history.map((s) => s.metadata?.source)).toEqual(["loop", "loop", "loop", "loop", "input"]);
    for (const s of history) {
      expect(s.metadata?.checkpoint_id).toBe(s.checkpoint.checkpoint_id);
      expect(s.metadata).toMatchObject({ thread_id: t.thread_id, graph_id: "agent" });
      expect(s.metadata).toHaveProperty("writes");
    }
    const writes = history.map((s) => s.metadata?.writes as any);
    // Oldest first: the input, __start__ (hidden, no writes), agent, tool, agent.
    expect(writes[4].__start__.messages[0]).toMatchObject({ content: "foo" });
    expect(writes[3] ?? {}).toEqual({});
    expect(Object.keys(writes[2])).toEqual(["agent"]);
    expect(writes[2].agent.messages[0]).toMatchObject({ type: "ai", content: "begin" });
    expect(writes[1].tool.messages[0]).toMatchObject({ content: "tool_call__begin" });
    expect(writes[0].agent.messages[0]).toMatchObject({ content: "end" });

    const state = await c.threads.getState(t.thread_id);
    expect(state.metadata?.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect((state.metadata?.writes as any).agent.messages[0].content).toBe("end");

    await c.threads.updateState(t.thread_id, { values: human("added"), asNode: "agent" });
    const updated = await c.threads.getState(t.thread_id);
    expect(updated.metadata).toMatchObject({
      source: "update",
      writes: { agent: human("added") },
      checkpoint_id: updated.checkpoint.checkpoint_id,
    });
  });

  it("lets a thread be rebuilt from another's history with supersteps (the official batch test)", async () => {
    const c = hangar.client;
    const t = await c.threads.create();
    await collect(c.runs.stream(t.thread_id, "agent", { input: human("foo") }));
    const history = await c.threads.getHistory(t.thread_id);
    const supersteps = history
      .slice()
      .reverse()
      .flatMap((s: any) => {
        if (s.metadata?.source === "input") {
          const values = s.metadata.writes?.__start__ ?? s.metadata.writes;
          return [
            { updates: [{ asNode: "__input__", values }] },
            { updates: [{ asNode: "__start__", values }] },
          ];
        }
        return [
          {
            updates: Object.entries(s.metadata?.writes ?? {}).map(([asNode, values]) => ({ asNode, values })),
          },
        ];
      })
      .filter((s) => s.updates.length > 0);
    const clone = await c.threads.create({ graphId: "agent", supersteps });
    expect(clone.status).toBe("idle");
    const cloned = await c.threads.getHistory(clone.thread_id);
    expect(cloned.map((s) => s.next)).toEqual(history.map((s) => s.next));
    expect(cloned.map((s) => contents(s.values))).toEqual(history.map((s) => contents(s.values)));
    // Supersteps record the values given, under the node they were applied as.
    const latest = await c.threads.getState(clone.thread_id);
    expect((latest.metadata?.writes as any).agent.messages[0].content).toBe("end");
  });
});

describe("supersteps", () => {
  it("create an idle thread even when the state has nodes to run next", async () => {
    const values = human("hi");
    const t = await hangar.client.threads.create({
      graphId: "agent",
      supersteps: [
        { updates: [{ asNode: "__input__", values }] },
        { updates: [{ asNode: "__start__", values }] },
      ],
    });
    expect(t.status).toBe("idle");
    expect(contents(t.values)).toEqual(["hi"]);
    expect((await hangar.client.threads.get(t.thread_id)).status).toBe("idle");
    const state = await hangar.client.threads.getState(t.thread_id);
    expect(state.next).toEqual(["agent"]);
    expect(state.metadata?.writes).toEqual({ __start__: values });
  });
});

describe("creating a run", () => {
  it("marks the thread busy with its graph and assistant at once, also when delayed", async () => {
    const c = hangar.client;
    const t = await c.threads.create();
    const run = await c.runs.create(t.thread_id, "agent", { input: human("foo"), afterSeconds: 30 });
    const thread = await c.threads.get(t.thread_id);
    expect(thread.status).toBe("busy");
    expect(thread.metadata).toMatchObject({ graph_id: "agent", assistant_id: run.assistant_id });
    // A pending run keeps the state from being changed.
    const busy = await httpError(c.threads.updateState(t.thread_id, { values: human("x"), asNode: "agent" }));
    expect(busy.status).toBe(409);
    await c.runs.cancel(t.thread_id, run.run_id, true);
    expect((await c.runs.get(t.thread_id, run.run_id)).status).toBe("interrupted");
    expect((await c.threads.get(t.thread_id)).status).toBe("idle");
    await c.threads.updateState(t.thread_id, {
      values: { messages: [{ type: "ai", content: "One must imagine Sisyphus happy." }] },
      asNode: "agent",
    });
    expect(JSON.stringify(await c.threads.getState(t.thread_id))).toContain("Sisyphus");
  });

  it("keeps the run's config on the thread, so a graph built from the config can be updated", async () => {
    const c = hangar.client;
    const assistant = await c.assistants.create({
      graphId: "dynamic",
      config: { configurable: { nodeName: "assistant" } },
    });
    const t = await c.threads.create({ graphId: "dynamic" });
    const chunks = await collect(
      c.runs.stream(t.thread_id, assistant.assistant_id, {
        input: { messages: ["input"] },
        streamMode: ["updates"],
      }),
    );
    expect(chunks.filter((e) => e.event === "updates").flatMap((e) => Object.keys(e.data))).toEqual([
      "assistant",
    ]);
    const thread = await c.threads.get(t.thread_id);
    expect(thread.config).toMatchObject({ configurable: { nodeName: "assistant" } });
    await c.threads.updateState(t.thread_id, { values: { messages: "update" }, asNode: "assistant" });
    expect((await c.threads.getState(t.thread_id)).values).toEqual({
      messages: ["input", "assistant", "update"],
    });
  });
});

describe("subgraph checkpoints", () => {
  it("tasks name the subgraph's checkpoint as the official server does, and updateState takes it", async () => {
    const c = hangar.client;
    const t = await c.threads.create();
    const chunks = await collect(c.runs.stream(t.thread_id, "weather", { input: human("SF") }));
    expect(chunks.filter((e) => e.event === "error")).toEqual([]);
    const state = await c.threads.getState(t.thread_id);
    expect(state.next).toEqual(["weather_graph"]);
    expect(state.tasks).toEqual([
      {
        id: expect.any(String),
        name: "weather_graph",
        path: ["__pregel_pull", "weather_graph"],
        error: null,
        interrupts: [],
        checkpoint: { checkpoint_ns: expect.stringMatching(/^weather_graph:/), thread_id: t.thread_id },
        state: null,
        result: null,
      },
    ]);

    const recursive = await c.threads.getState(t.thread_id, undefined, { subgraphs: true });
    expect(recursive.tasks).toEqual([
      {
        id: expect.any(String),
        name: "weather_graph",
        path: ["__pregel_pull", "weather_graph"],
        error: null,
        interrupts: [],
        checkpoint: null,
        result: null,
        state: {
          values: { city: "San Francisco", messages: [expect.objectContaining({ content: "SF" })] },
          next: ["weather_node"],
          tasks: [
            {
              id: expect.any(String),
              name: "weather_node",
              path: ["__pregel_pull", "weather_node"],
              error: null,
              interrupts: [],
              checkpoint: null,
              state: null,
              result: null,
            },
          ],
          metadata: expect.any(Object),
          created_at: expect.any(String),
          checkpoint: expect.any(Object),
          parent_checkpoint: expect.any(Object),
        },
      },
    ]);

    const sub = state.tasks[0].checkpoint!;
    await c.threads.updateState(t.thread_id, { values: { city: "LA" }, checkpoint: sub });
    const inner = await c.threads.getState<{ city: string }>(t.thread_id, sub);
    expect(inner.values.city).toBe("LA");
    expect(inner.next).toEqual(["weather_node"]);

    const resumed = await collect(c.runs.stream(t.thread_id, "weather", { input: null }));
    expect(resumed.filter((e) => e.event === "error")).toEqual([]);
    expect(contents([...resumed].reverse().find((e) => e.event === "values")?.data)).toEqual([
      "SF",
      "It's sunny in LA!",
    ]);
    const innerHistory = await c.threads.getHistory(t.thread_id, { checkpoint: sub });
    expect(innerHistory[0].next).toEqual([]);
    expect(innerHistory.at(-1)?.next).toEqual(["__start__"]);
  });

  it("updateState accepts a checkpoint object whose checkpoint_id is null", async () => {
    const c = hangar.client;
    const t = await c.threads.create();
    await c.runs.wait(t.thread_id, "weather", { input: human("SF") });
    const state = await c.threads.getState(t.thread_id);
    const checkpoint = { ...state.tasks[0].checkpoint, checkpoint_id: null, checkpoint_map: null };
    const r = await postJson(hangar.server.url, `/threads/${t.thread_id}/state`, {
      values: { city: "Paris" },
      checkpoint,
    });
    expect(r.status).toBe(200);
    expect(r.body.checkpoint.checkpoint_id).toEqual(expect.any(String));
  });
});

describe("ids", () => {
  const uuid6 = "1f0c9a2e-3b4d-6e5f-ffff-0123456789ab";
  const odd = "00000000-0000-0000-c000-000000000000";

  it("any UUID-shaped id is taken: an unknown one is 404, never 422", async () => {
    const url = hangar.server.url;
    for (const id of [uuid6, odd]) {
      expect((await getJson(url, `/threads/${id}`)).status).toBe(404);
      expect((await getJson(url, `/threads/${id}/state`)).status).toBe(404);
      expect((await getJson(url, `/threads/${id}/runs/${id}`)).status).toBe(404);
      expect((await postJson(url, `/threads/${id}/history`, {})).status).toBe(404);
      expect((await getJson(url, `/assistants/${id}`)).status).toBe(404);
      expect((await postJson(url, "/threads/search", { ids: [id] })).body).toEqual([]);
    }
    const t = await hangar.client.threads.create();
    await hangar.client.runs.wait(t.thread_id, "agent", { input: human("foo") });
    expect((await getJson(url, `/threads/${t.thread_id}/state/${uuid6}`)).status).toBe(404);
    const before = await postJson(url, `/threads/${t.thread_id}/history`, { before: uuid6 });
    expect(before.status).toBe(200);
  });

  it("a thread and an assistant can be created with such an id and read back", async () => {
    const c = hangar.client;
    const t = await c.threads.create({ threadId: uuid6 });
    expect(t.thread_id).toBe(uuid6);
    expect((await c.threads.get(uuid6)).thread_id).toBe(uuid6);
    await c.runs.wait(uuid6, "agent", { input: human("foo") });
    const state = await c.threads.getState(uuid6);
    const old = await c.threads.getState(uuid6, state.parent_checkpoint!.checkpoint_id!);
    expect(old.checkpoint.checkpoint_id).toBe(state.parent_checkpoint!.checkpoint_id);
    const a = await c.assistants.create({ graphId: "agent", assistantId: odd });
    expect((await c.assistants.get(odd)).assistant_id).toBe(a.assistant_id);
    const run = await c.runs.create(uuid6, odd, { input: human("bar") });
    expect(run.assistant_id).toBe(odd);
    await c.runs.join(uuid6, run.run_id);
  });
});

describe("exact shapes", () => {
  it("the first event of a run stream is metadata with run_id and attempt only", async () => {
    const t = await hangar.client.threads.create();
    const chunks = await collect(hangar.client.runs.stream(t.thread_id, "agent", { input: human("foo") }));
    expect(chunks[0].event).toBe("metadata");
    expect(chunks[0].data).toEqual({ run_id: expect.any(String), attempt: 1 });
    const stateless = await collect(hangar.client.runs.stream(null, "agent", { input: human("foo") }));
    expect(stateless[0].event).toBe("metadata");
    expect(stateless[0].data).toEqual({ run_id: expect.any(String), attempt: 1 });
  });
});

describe("assistants", () => {
  it("DELETE with delete_threads=true deletes the assistant's threads, without it keeps them", async () => {
    const c = hangar.client;
    const url = hangar.server.url;
    const mk = async () => {
      const a = await c.assistants.create({ graphId: "agent" });
      const t = await c.threads.create();
      await c.runs.wait(t.thread_id, a.assistant_id, { input: human("foo") });
      const other = await c.threads.create({ metadata: { assistant_id: "someone-else" } });
      return { a, t, other };
    };
    const kept = await mk();
    expect((await postJson(url, `/assistants/${kept.a.assistant_id}`, undefined, "DELETE")).status).toBe(200);
    expect((await c.threads.get(kept.t.thread_id)).thread_id).toBe(kept.t.thread_id);

    const gone = await mk();
    const r = await fetch(new URL(`/assistants/${gone.a.assistant_id}?delete_threads=true`, url), {
      method: "DELETE",
    });
    expect(r.status).toBe(200);
    expect((await httpError(c.threads.get(gone.t.thread_id))).status).toBe(404);
    expect((await c.threads.get(gone.other.thread_id)).thread_id).toBe(gone.other.thread_id);
    expect((await httpError(c.assistants.get(gone.a.assistant_id))).status).toBe(404);
  });

  it("an unknown assistant or graph answers with the official wording", async () => {
    const c = hangar.client;
    const t = await c.threads.create();
    await expect(c.runs.wait(t.thread_id, "non-existent", { input: human("foo") })).rejects.toThrow(
      /No assistant found for/,
    );
    await expect(
      collect(c.runs.stream(t.thread_id, "non-existent", { input: human("foo") })),
    ).rejects.toThrow(/No assistant found for/);
    const viaHttp = await postJson(hangar.server.url, `/threads/${t.thread_id}/runs`, {
      assistant_id: "nope",
    });
    expect(viaHttp.status).toBe(404);
    expect(viaHttp.body.detail).toBe(
      'No assistant found for "nope". Make sure the assistant ID is for a valid assistant or a valid graph ID.',
    );
    const missing = await httpError(c.assistants.get("00000000-0000-4000-8000-000000000000"));
    expect(missing).toEqual({ status: 404, body: { detail: "Assistant not found" } });
    const graph = await httpError(c.assistants.create({ graphId: "no-such-graph" }));
    expect(graph).toEqual({ status: 404, body: { detail: 'Graph "no-such-graph" not found' } });
  });
});
