// End-to-end: the previous (1.12) and the current (1.15) official SDK clients both pass the run/stream/state
// flow against the example project: create a thread, stream a run, state, history, join, wait, list runs.
import { Client as Client115 } from "@langchain/langgraph-sdk";
import { Client as Client112 } from "sdk-1-12";
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";

interface ChatValues {
  messages: Array<{ type: string; content: string }>;
}

/** The calls of the flow, as both clients spell them (their types differ; the wire is the same). */
interface FlowClient {
  threads: {
    create(): Promise<{ thread_id: string }>;
    getState(
      threadId: string,
    ): Promise<{ values: unknown; next: string[]; checkpoint: { checkpoint_id?: string | null } }>;
    getHistory(
      threadId: string,
      options?: { limit?: number },
    ): Promise<Array<{ values: unknown; checkpoint: unknown }>>;
  };
  runs: {
    stream(
      threadId: string,
      assistantId: string,
      payload: object,
    ): AsyncIterable<{ event: string; data: unknown }>;
    create(
      threadId: string,
      assistantId: string,
      payload: object,
    ): Promise<{ run_id: string; status: string }>;
    join(threadId: string, runId: string): Promise<unknown>;
    wait(threadId: string, assistantId: string, payload: object): Promise<unknown>;
    get(threadId: string, runId: string): Promise<{ status: string }>;
    list(threadId: string): Promise<Array<{ run_id: string; status: string }>>;
  };
}

const hangar = useHangar();

const clients: Array<[string, (url: string) => FlowClient]> = [
  [
    "1.12",
    (url) => new Client112({ apiUrl: url, callerOptions: { maxRetries: 0 } }) as unknown as FlowClient,
  ],
  [
    "1.15",
    (url) => new Client115({ apiUrl: url, callerOptions: { maxRetries: 0 } }) as unknown as FlowClient,
  ],
];

const user = (content: string) => ({ messages: [{ role: "user", content }] });

describe.each(clients)("the SDK %s client", (version, make) => {
  it("creates a thread, streams a run, reads state and history, joins and waits", async () => {
    const client = make(hangar.server.url);
    const { thread_id } = await client.threads.create();

    const events: Array<{ event: string; data: unknown }> = [];
    for await (const e of client.runs.stream(thread_id, "chat", {
      input: user(`hello from ${version}`),
      streamMode: ["messages-tuple", "values"],
    })) {
      events.push(e);
    }
    expect(events[0].event).toBe("metadata");
    const { run_id } = events[0].data as { run_id: string };
    expect(typeof run_id).toBe("string");
    const tokens = events.filter((e) => e.event === "messages");
    expect(tokens.length).toBeGreaterThan(1);
    const streamed = events.filter((e) => e.event === "values").pop()!.data as ChatValues;
    expect(streamed.messages).toHaveLength(2);
    const reply = streamed.messages[1].content;
    expect(tokens.map((e) => (e.data as [{ content: string }])[0].content).join("")).toBe(reply);

    const state = await client.threads.getState(thread_id);
    expect(state.values).toEqual(streamed);
    expect(state.next).toEqual([]);
    const history = await client.threads.getHistory(thread_id, { limit: 10 });
    expect(history.length).toBeGreaterThan(1);
    expect(history[0].values).toEqual(streamed);
    expect((await client.runs.get(thread_id, run_id)).status).toBe("success");

    const background = await client.runs.create(thread_id, "chat", { input: user("second") });
    const joined = (await client.runs.join(thread_id, background.run_id)) as ChatValues;
    expect(joined.messages.map((m) => m.content).slice(0, 3)).toEqual([
      `hello from ${version}`,
      reply,
      "second",
    ]);
    expect(joined.messages).toHaveLength(4);

    const waited = (await client.runs.wait(thread_id, "chat", { input: user("third") })) as ChatValues;
    expect(waited.messages).toHaveLength(6);
    expect(waited.messages[4].content).toBe("third");

    const runs = await client.runs.list(thread_id);
    expect(runs).toHaveLength(3);
    expect(runs.every((r) => r.status === "success")).toBe(true);
  });
});
