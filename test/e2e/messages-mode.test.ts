// End-to-end: the `messages` stream mode (messages/metadata, messages/partial, messages/complete).
import { describe, expect, it } from "vitest";
import { collect } from "../helpers/sse.ts";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar();

describe("stream mode messages", () => {
  it("sends metadata once, partial messages that grow to the reply, and the complete messages", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    const events = await collect(
      client.runs.stream(thread.thread_id, "chat", {
        input: { messages: [{ role: "user", content: "partial please" }] },
        streamMode: "messages",
      }),
    );
    expect(events[0].event).toBe("metadata");
    const state = await client.threads.getState<{ messages: { id: string; content: string }[] }>(
      thread.thread_id,
    );
    const reply = state.values.messages[state.values.messages.length - 1];

    const meta = events.filter((e) => e.event === "messages/metadata");
    expect(meta).toHaveLength(1);
    const [[metaId, metaBody]] = Object.entries(meta[0].data as Record<string, { metadata: any }>);
    expect(metaBody.metadata.langgraph_node).toBe("agent");

    const partial = events.filter((e) => e.event === "messages/partial").map((e) => (e.data as any[])[0]);
    expect(partial.length).toBeGreaterThan(1);
    expect(partial.every((m) => m.id === metaId)).toBe(true);
    // Each partial holds the message so far: every one is a prefix of the next, the last is the reply.
    for (let i = 1; i < partial.length; i++)
      expect(partial[i].content.startsWith(partial[i - 1].content)).toBe(true);
    expect(partial[partial.length - 1].content).toBe(reply.content);

    const complete = events.filter((e) => e.event === "messages/complete").flatMap((e) => e.data as any[]);
    expect(complete.map((m) => m.content)).toEqual(["partial please", reply.content]);
    // The metadata event comes before the first partial.
    expect(events.findIndex((e) => e.event === "messages/metadata")).toBeLessThan(
      events.findIndex((e) => e.event === "messages/partial"),
    );
  });
});
