// End-to-end: RemoteGraph from @langchain/langgraph/remote (invoke, stream, getState) against `hangar dev`.
import { RemoteGraph } from "@langchain/langgraph/remote";
import { describe, expect, it } from "vitest";
import { graph as researchGraph } from "../../examples/src/research.ts";
import { useHangar } from "../helpers/server.ts";

interface Msg {
  type: string;
  content: string;
}

const hangar = useHangar();

describe("RemoteGraph", () => {
  it("invokes and streams on a thread, and reads the state back", async () => {
    const graph = new RemoteGraph({ graphId: "chat", url: hangar.server.url });
    const { thread_id } = await hangar.client.threads.create();
    const config = { configurable: { thread_id } };

    const out = (await graph.invoke({ messages: [{ role: "human", content: "hello" }] }, config)) as {
      messages: Msg[];
    };
    expect(out.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(out.messages[0].content).toBe("hello");
    expect(out.messages[1].content.length).toBeGreaterThan(0);

    const chunks: unknown[] = [];
    for await (const chunk of await graph.stream(
      { messages: [{ role: "human", content: "again" }] },
      { ...config, streamMode: "updates" },
    )) {
      chunks.push(chunk);
    }
    expect(chunks).toHaveLength(1);
    const update = chunks[0] as { agent: { messages: Msg[] } };
    expect(update.agent.messages).toHaveLength(1);
    expect(update.agent.messages[0].type).toBe("ai");
    expect(update.agent.messages[0].content.length).toBeGreaterThan(0);

    const snapshot = await graph.getState(config);
    const values = snapshot.values as { messages: Msg[] };
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai", "human", "ai"]);
    expect(values.messages[2].content).toBe("again");
    expect(values.messages[3].content).toBe(update.agent.messages[0].content);
    expect(snapshot.next).toEqual([]);
    expect(snapshot.config.configurable?.thread_id).toBe(thread_id);
    expect(snapshot.config.configurable?.checkpoint_id).toBeTruthy();

    // The thread seen through the SDK holds the same conversation.
    const state = await hangar.client.threads.getState<{ messages: Msg[] }>(thread_id);
    expect(state.values.messages.map((m) => m.content)).toEqual(values.messages.map((m) => m.content));
  });

  it("streams several modes as [mode, chunk] pairs", async () => {
    const graph = new RemoteGraph({ graphId: "research", url: hangar.server.url });
    const { thread_id } = await hangar.client.threads.create();
    const pairs: Array<[string, any]> = [];
    for await (const chunk of await graph.stream(
      { topic: "frogs" },
      { configurable: { thread_id }, streamMode: ["updates", "values"] },
    )) {
      pairs.push(chunk as [string, any]);
    }
    const modes = new Set(pairs.map(([mode]) => mode));
    expect(modes).toEqual(new Set(["updates", "values"]));
    const updates = pairs.filter(([mode]) => mode === "updates").map(([, data]) => Object.keys(data));
    expect(updates).toEqual([["plan"], ["research"], ["write"]]);
    const lastValues = pairs.filter(([mode]) => mode === "values").pop()![1];
    expect(lastValues).toEqual(await researchGraph.invoke({ topic: "frogs" }));
  });

  it("invokes without a thread (stateless)", async () => {
    const graph = new RemoteGraph({ graphId: "research", url: hangar.server.url });
    const out = await graph.invoke({ topic: "newts" });
    expect(out).toEqual(await researchGraph.invoke({ topic: "newts" }));
  });
});
