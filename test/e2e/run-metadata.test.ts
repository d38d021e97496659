// End-to-end: a run's metadata as the official server makes it. The run record keeps the assistant's metadata,
// then the thread's (with the run's graph and assistant), then the run's own, a later layer winning a key; the
// graph's config.metadata is that plus run_attempt, langgraph_version, langgraph_api_version, langgraph_plan,
// langgraph_host and langgraph_api_url, so checkpoints, message metadata and history filters carry it; the
// request's x-* headers and user-agent reach `configurable` (and checkpoint metadata), credentials never.
import { describe, expect, it } from "vitest";
import { unique } from "../helpers/http.ts";
import { EXAMPLE_CONFIG, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: EXAMPLE_CONFIG, env: { LANGGRAPH_API_URL: "https://agents.example" } });
const INPUT = { messages: [{ role: "user", content: "hi" }] };

async function layered() {
  const client = hangar.client;
  const tag = unique("md");
  const assistant = await client.assistants.create({
    graphId: "chat",
    metadata: { level: "assistant", from_assistant: tag, shared: "assistant" },
  });
  const thread = await client.threads.create({ metadata: { level: "thread", from_thread: tag } });
  return { client, tag, assistant, thread };
}

describe("run metadata", () => {
  it("merges the assistant's, the thread's and the run's metadata in the run record (the run's wins)", async () => {
    const { client, tag, assistant, thread } = await layered();
    await client.runs.wait(thread.thread_id, assistant.assistant_id, {
      input: INPUT,
      metadata: { level: "run", from_run: tag },
    });
    const [run] = await client.runs.list(thread.thread_id);
    expect(run.metadata).toEqual({
      level: "run",
      shared: "assistant",
      from_assistant: tag,
      from_thread: tag,
      from_run: tag,
      graph_id: "chat",
      assistant_id: assistant.assistant_id,
    });
    expect((await client.runs.get(thread.thread_id, run.run_id)).metadata).toEqual(run.metadata);
  });

  it("records it in every checkpoint, with the server's keys; history filters by a thread's key find them", async () => {
    const { client, tag, assistant, thread } = await layered();
    await client.runs.wait(thread.thread_id, assistant.assistant_id, {
      input: INPUT,
      metadata: { from_run: tag },
    });
    const byThreadKey = await client.threads.getHistory(thread.thread_id, { metadata: { from_thread: tag } });
    const all = await client.threads.getHistory(thread.thread_id);
    expect(byThreadKey.length).toBeGreaterThan(0);
    expect(byThreadKey.length).toBe(all.length);
    const md = byThreadKey[0].metadata as Record<string, unknown>;
    expect(md).toMatchObject({
      level: "thread",
      from_assistant: tag,
      from_thread: tag,
      from_run: tag,
      run_attempt: 1,
      langgraph_plan: "developer",
      langgraph_host: "self-hosted",
      langgraph_api_url: "https://agents.example",
      graph_id: "chat",
      assistant_id: assistant.assistant_id,
    });
    expect(md.langgraph_version).toMatch(/^1\.\d+\.\d+/);
    expect(typeof md.langgraph_api_version).toBe("string");
    expect(typeof md["user-agent"]).toBe("string");
    expect(await client.threads.getHistory(thread.thread_id, { metadata: { from_thread: "other" } })).toEqual(
      [],
    );
  });

  it("passes x-* headers and user-agent to the graph's configurable, but not credentials", async () => {
    const { thread } = await layered();
    const res = await fetch(`${hangar.server.url}/threads/${thread.thread_id}/runs/wait`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "metadata-test/1.0",
        "x-request-source": "tests",
        "x-api-key": "secret-key",
      },
      body: JSON.stringify({ assistant_id: "chat", input: INPUT }),
    });
    expect(res.status).toBe(200);
    const [state] = await hangar.client.threads.getHistory(thread.thread_id, { limit: 1 });
    const md = state.metadata as Record<string, unknown>;
    expect(md["user-agent"]).toBe("metadata-test/1.0");
    expect(md["x-request-source"]).toBe("tests");
    expect(md).not.toHaveProperty("x-api-key");
  });

  it("gives message metadata (messages-tuple) the merged keys and the attempt", async () => {
    const { client, tag, assistant, thread } = await layered();
    let meta: Record<string, unknown> | undefined;
    for await (const ev of client.runs.stream(thread.thread_id, assistant.assistant_id, {
      input: INPUT,
      streamMode: "messages-tuple",
    })) {
      if (ev.event === "messages" && !meta) meta = (ev.data as [unknown, Record<string, unknown>])[1];
    }
    expect(meta).toMatchObject({
      from_thread: tag,
      from_assistant: tag,
      run_attempt: 1,
      langgraph_host: "self-hosted",
    });
  });

  it("on a thread created by the run (if_not_exists create), the thread takes the run's metadata", async () => {
    const tag = unique("ine");
    const threadId = crypto.randomUUID();
    await hangar.client.runs.wait(threadId, "chat", {
      input: INPUT,
      ifNotExists: "create",
      metadata: { from_run: tag },
    });
    const thread = await hangar.client.threads.get(threadId);
    expect(thread.metadata).toMatchObject({ from_run: tag, graph_id: "chat" });
  });
});
