// End-to-end: stateless runs (POST /runs/stream, POST /runs/wait) leave no thread behind, against `hangar dev`.
import { describe, expect, it } from "vitest";
import { postJson } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";
import { graph as researchGraph } from "../../examples/src/research.ts";
import { collect, postSse } from "../helpers/sse.ts";

const hangar = useHangar();

async function threadIds(): Promise<string[]> {
  const threads = await hangar.client.threads.search({ limit: 1000 });
  return threads.map((t) => t.thread_id).sort();
}

describe("stateless runs", () => {
  it("POST /runs/stream streams the run and keeps no thread", async () => {
    // One ordinary thread, so the listing is not trivially empty.
    const kept = await hangar.client.threads.create({ metadata: { kind: "kept" } });
    const before = await threadIds();
    expect(before).toContain(kept.thread_id);

    const events = await collect(
      hangar.client.runs.stream(null, "chat", {
        input: { messages: [{ type: "human", content: "no thread" }] },
        streamMode: ["values", "updates", "messages-tuple"],
      }),
    );
    expect(events[0].event).toBe("metadata");
    expect(events[0].data.run_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(events.some((e) => e.event === "error")).toBe(false);
    // The run's config names a temporary thread, as the official server's does (its messages' metadata shows it),
    // which is not stored.
    const named = new Set(
      events
        .filter((e) => e.event === "messages")
        .map((e) => (e.data as [unknown, { thread_id?: string }])[1].thread_id),
    );
    expect(named.size).toBe(1);
    const [temporary] = [...named];
    expect(temporary).toMatch(/^[0-9a-f-]{36}$/);
    expect((await fetch(`${hangar.server.url}/threads/${temporary}`)).status).toBe(404);
    const updates = events.filter((e) => e.event === "updates");
    expect(updates.map((e) => Object.keys(e.data))).toEqual([["agent"]]);
    const messages = events.filter((e) => e.event === "messages");
    expect(messages.length).toBeGreaterThan(0);
    expect(messages[0].data[1].langgraph_node).toBe("agent");
    const values = events.filter((e) => e.event === "values");
    const last = values[values.length - 1].data;
    expect(last.messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai"]);
    expect(last.messages[0].content).toBe("no thread");
    expect(last.messages[1].content).toBe(messages.map((e) => e.data[0].content).join(""));

    expect(await threadIds()).toEqual(before);
  });

  it("POST /runs/wait returns the output and keeps no thread", async () => {
    const before = await threadIds();
    const out = (await hangar.client.runs.wait(null, "research", { input: { topic: "moths" } })) as {
      topic: string;
      findings: string[];
      summary: string;
    };
    expect(out.topic).toBe("moths");
    expect(out).toEqual(await researchGraph.invoke({ topic: "moths" }));
    expect(out.findings).toEqual(
      expect.arrayContaining(["web: facts about moths", "docs: facts about moths"]),
    );
    expect(await threadIds()).toEqual(before);
  });

  it("raw stateless stream: SSE framing, run in Content-Location, custom mode from the subgraph", async () => {
    const before = await threadIds();
    const res = await postSse(hangar.server.url, "/runs/stream", {
      assistant_id: "research",
      input: { topic: "ants" },
      stream_mode: ["custom", "updates"],
    });
    expect(res.status).toBe(200);
    expect(res.events[0].event).toBe("metadata");
    const runId = (res.events[0].data as { run_id: string }).run_id;
    expect(res.headers.get("content-location")).toMatch(new RegExp(`/runs/${runId}$`));
    const custom = res.events.filter((e) => e.event === "custom").map((e) => e.data as { source: string });
    expect(custom.map((c) => c.source).sort()).toEqual(["docs", "web"]);
    const updates = res.events.filter((e) => e.event === "updates").map((e) => Object.keys(e.data as object));
    expect(updates).toEqual([["plan"], ["research"], ["write"]]);
    expect(await threadIds()).toEqual(before);
  });

  it("raw stateless wait answers 200 with the values", async () => {
    const before = await threadIds();
    const res = await postJson(hangar.server.url, "/runs/wait", {
      assistant_id: "research",
      input: { topic: "eels" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(await researchGraph.invoke({ topic: "eels" }));
    expect(await threadIds()).toEqual(before);
  });

  it("rejects an unknown assistant with 404 and creates nothing", async () => {
    const before = await threadIds();
    await expect(hangar.client.runs.wait(null, "no-such-graph", { input: {} })).rejects.toMatchObject({
      status: 404,
    });
    expect(await threadIds()).toEqual(before);
  });
});
