// A2A at /a2a/{assistant_id} through the official A2A JS SDK's client (v1.0 JSON-RPC), and raw v0.3 JSON-RPC:
// the agent card, a message run as a task (contextId = thread), a task waiting for input answered, get, list
// (paged), cancel, a stream, and resubscribing to a running task's stream (beyond the official server); the
// API's custom auth deciding whose tasks a caller sees; `http.disable_a2a`.
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Role, TaskState, type Message, type Part } from "@a2a-js/sdk";
import { ClientFactory } from "@a2a-js/sdk/client";
import { describe, expect, it } from "vitest";
import { ROOT, tempDir, useHangar } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const text = (value: string): Part => ({ content: { $case: "text", value } }) as Part;
const data = (value: unknown): Part => ({ content: { $case: "data", value } }) as Part;
const message = (parts: Part[], more: Partial<Message> = {}) =>
  ({ messageId: randomUUID(), role: Role.ROLE_USER, parts, ...more }) as Message;

/** An A2A client of an assistant, made from its agent card. */
async function agent(url: string, assistantId: string, headers: Record<string, string> = {}) {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, { ...init, headers: { ...(init?.headers as Record<string, string>), ...headers } });
  const factory = new ClientFactory({
    transports: [new (await import("@a2a-js/sdk/client")).JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new (await import("@a2a-js/sdk/client")).DefaultAgentCardResolver({ fetchImpl }),
  } as never);
  return factory.createFromUrl(`${url}/.well-known/agent-card.json?assistant_id=${assistantId}`, "");
}

const textsOf = (parts: Part[] | undefined) =>
  (parts ?? []).flatMap((p) => (p.content?.$case === "text" ? [p.content.value] : []));

describe("A2A: an assistant as an agent", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/a2a-project/langgraph.json") });
  const idOf = async (graph: string) =>
    (await hangar.client.assistants.search({ graphId: graph }))[0].assistant_id;

  it("serves the agent card; an unknown assistant is 404, a missing assistant_id 422", async () => {
    const chat = await idOf("chat");
    const res = await fetch(`${hangar.server.url}/.well-known/agent-card.json?assistant_id=${chat}`);
    expect(res.status).toBe(200);
    const card = await res.json();
    expect(card).toMatchObject({
      name: "chat",
      capabilities: { streaming: true, pushNotifications: false },
      skills: [{ id: chat, name: "chat" }],
    });
    expect(card.supportedInterfaces.map((i: any) => [i.protocolBinding, i.protocolVersion])).toEqual([
      ["JSONRPC", "1.0"],
      ["JSONRPC", "0.3"],
    ]);
    expect(card.supportedInterfaces[0].url).toBe(`${hangar.server.url}/a2a/${chat}`);
    const unknown = randomUUID();
    expect(
      (await fetch(`${hangar.server.url}/.well-known/agent-card.json?assistant_id=${unknown}`)).status,
    ).toBe(404);
    expect((await fetch(`${hangar.server.url}/.well-known/agent-card.json`)).status).toBe(422);
    const rpc = await fetch(`${hangar.server.url}/a2a/${unknown}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: randomUUID() } }),
    });
    expect(rpc.status).toBe(404);
  });

  it("a message runs the assistant on the context's thread; get and list (paged) show its tasks", async () => {
    const client = await agent(hangar.server.url, await idOf("chat"));
    const first: any = await client.sendMessage({ message: message([text("hello")]) } as never);
    expect(first.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    // The context is a thread of the API, the task a run on it.
    const thread = await hangar.client.threads.get(first.contextId);
    expect((await hangar.client.runs.get(thread.thread_id, first.id)).status).toBe("success");
    // The artifact's text is the assistant's last reply.
    const reply = (
      await hangar.client.threads.getState<{ messages: any[] }>(first.contextId)
    ).values.messages.at(-1);
    expect(textsOf(first.artifacts[0].parts)).toEqual([reply.content]);
    const second: any = await client.sendMessage({
      message: message([text("again")], { contextId: first.contextId }),
    } as never);
    expect(second.contextId).toBe(first.contextId);
    const state = await hangar.client.threads.getState<{ messages: any[] }>(first.contextId);
    expect(state.values.messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual([
      "hello",
      "again",
    ]);

    const got: any = await client.getTask({ id: first.id } as never);
    expect(got).toMatchObject({ id: first.id, contextId: first.contextId });
    expect(got.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    await expect(client.getTask({ id: randomUUID() } as never)).rejects.toThrow(/not found/);

    const page1: any = await client.listTasks({ contextId: first.contextId, pageSize: 1 } as never);
    expect(page1.totalSize).toBe(2);
    expect(page1.tasks.map((t: any) => t.id)).toEqual([second.id]);
    const page2: any = await client.listTasks({
      contextId: first.contextId,
      pageSize: 1,
      pageToken: page1.nextPageToken,
    } as never);
    expect(page2.tasks.map((t: any) => t.id)).toEqual([first.id]);
    expect(page2.nextPageToken).toBe("");
  });

  it("a task waiting for input is input-required; a reply naming it resumes it", async () => {
    const client = await agent(hangar.server.url, await idOf("approval"));
    const asked: any = await client.sendMessage({
      message: message([data({ request: "a new roof" })]),
    } as never);
    expect(asked.status.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const question = asked.status.message.parts[0].content.value;
    expect(question).toMatchObject({ question: "Approve this draft?", draft: "Proposal: a new roof" });
    const answered: any = await client.sendMessage({
      message: message([text("yes")], { taskId: asked.id, contextId: asked.contextId }),
    } as never);
    expect(answered.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect((await hangar.client.threads.getState<any>(asked.contextId)).values.decision).toBe("yes");
    // A task that does not wait for input cannot be answered.
    await expect(
      client.sendMessage({ message: message([text("again")], { taskId: answered.id }) } as never),
    ).rejects.toThrow(/does not wait for input/);
  });

  it("streams a message's task; resubscribes to a running task; cancels one", async () => {
    const client = await agent(hangar.server.url, await idOf("steps"));
    const events: any[] = [];
    for await (const ev of client.sendMessageStream({
      message: message([data({ job: { label: "s", steps: 3, delay_ms: 5 } })]),
    } as never)) {
      events.push(ev);
    }
    const kinds = events.map((e) => e.payload?.$case ?? (e.kind as string));
    expect(kinds[0]).toBe("task");
    const last = events.at(-1).payload.value;
    expect(last.status.state, JSON.stringify(events)).toBe(TaskState.TASK_STATE_COMPLETED);

    // A task held mid-way (until a file exists): resubscribing gets its stream, which ends once it is let go.
    const gate = join(tempDir("hangar-a2a-gate-"), "go");
    const held: any = await client.sendMessage({
      message: message([data({ job: { label: "h", steps: 3, hold_at: 1, gate_file: gate } })]),
      configuration: { returnImmediately: true },
    } as never);
    await waitFor("the held task to run", async () => {
      const t: any = await client.getTask({ id: held.id } as never);
      return t.status.state === TaskState.TASK_STATE_WORKING;
    });
    const resubscribed: any[] = [];
    const reading = (async () => {
      for await (const ev of client.resubscribeTask({ id: held.id } as never)) resubscribed.push(ev);
    })();
    await waitFor("the resubscribed stream to start", () => resubscribed.length > 0);
    writeFileSync(gate, "");
    await reading;
    expect(resubscribed[0].payload.$case).toBe("task");
    expect(resubscribed.at(-1).payload.value.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resubscribed.some((e) => e.payload.$case === "artifactUpdate")).toBe(true);

    const gate2 = join(tempDir("hangar-a2a-gate-"), "never");
    const running: any = await client.sendMessage({
      message: message([data({ job: { label: "c", steps: 3, hold_at: 0, gate_file: gate2 } })]),
      configuration: { returnImmediately: true },
    } as never);
    const cancelled: any = await client.cancelTask({ id: running.id } as never);
    expect(cancelled.status.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ id: running.id } as never)).rejects.toThrow(/has ended/);
  });

  it("accepts v0.3 method names (message/send, tasks/get) with v0.3 shapes", async () => {
    const chat = await idOf("chat");
    const call = async (method: string, params: unknown) =>
      (await (
        await fetch(`${hangar.server.url}/a2a/${chat}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
        })
      ).json()) as any;
    const sent = await call("message/send", {
      message: { kind: "message", messageId: "m-1", role: "user", parts: [{ kind: "text", text: "legacy" }] },
    });
    expect(sent.result).toMatchObject({ kind: "task", status: { state: "completed" } });
    const got = await call("tasks/get", { id: sent.result.id });
    expect(got.result).toMatchObject({ id: sent.result.id, contextId: sent.result.contextId });
    const push = await call("tasks/pushNotificationConfig/set", {
      taskId: sent.result.id,
      pushNotificationConfig: { url: "https://example.com/hook" },
    });
    expect(push.error.code).toBeLessThan(0);
  });
});

describe("A2A under custom auth", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/auth-project/langgraph.json") });
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  it("a user's tasks and contexts are not found for another user", async () => {
    const [chat] = await (
      await fetch(`${hangar.server.url}/assistants/search`, {
        method: "POST",
        headers: { ...as("token-alice"), "content-type": "application/json" },
        body: "{}",
      })
    ).json();
    const unauth = await fetch(
      `${hangar.server.url}/.well-known/agent-card.json?assistant_id=${chat.assistant_id}`,
    );
    expect(unauth.status).toBe(401);
    const alice = await agent(hangar.server.url, chat.assistant_id, as("token-alice"));
    const task: any = await alice.sendMessage({ message: message([text("mine")]) } as never);
    expect(task.status.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const bob = await agent(hangar.server.url, chat.assistant_id, as("token-bob"));
    await expect(bob.getTask({ id: task.id } as never)).rejects.toThrow(/not found/);
    await expect(
      bob.sendMessage({ message: message([text("theirs")], { contextId: task.contextId }) } as never),
    ).rejects.toThrow();
    expect((await bob.listTasks({ contextId: task.contextId } as never)).tasks).toEqual([]);
    const mine: any = await alice.listTasks({ contextId: task.contextId } as never);
    expect(mine.tasks.map((t: any) => t.id)).toEqual([task.id]);
  });
});

describe("http.disable_a2a", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/a2a-disabled/langgraph.json") });

  it("takes /a2a and the agent card away (404)", async () => {
    const [chat] = await hangar.client.assistants.search();
    expect(
      (await fetch(`${hangar.server.url}/.well-known/agent-card.json?assistant_id=${chat.assistant_id}`))
        .status,
    ).toBe(404);
    const res = await fetch(`${hangar.server.url}/a2a/${chat.assistant_id}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: randomUUID() } }),
    });
    expect(res.status).toBe(404);
  });
});
