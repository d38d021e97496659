// MCP at /mcp through the official MCP TypeScript SDK's client (Streamable HTTP): one tool per assistant with its
// graph's input schema, a call runs the assistant (without a thread, on a thread given in the arguments, or on
// the thread of a session opened with `?session=true`), errors as MCP errors or error results, the API's auth
// (API keys, custom auth handlers) deciding what a caller sees, and `http.disable_mcp`.
import { join } from "node:path";
import { Client as McpClient } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";
import { BOUND_MS } from "../helpers/wait.ts";

/**
 * The SDK's client with the suite's bound as its request timeout: its default (60 s) is shorter than a heavily
 * loaded machine may take for a first tools/list (each graph's input schema is extracted then).
 */
class Client extends McpClient {
  override request(...[req, schema, options]: Parameters<McpClient["request"]>) {
    return super.request(req, schema, { timeout: BOUND_MS, ...options });
  }
}

const open: McpClient[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close().catch(() => {});
});

/** An MCP client connected (initialized) to `url`, with extra request headers. */
async function connect(url: string, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "hangar-test", version: "1.0.0" });
  await client.connect(transport);
  open.push(client);
  return { client, transport };
}

const say = (content: string) => ({ messages: [{ role: "user", content }] });

/** The text of a tool result's first content block, parsed as JSON. */
const outputOf = (result: any) => JSON.parse(result.content[0].text);

/** A raw JSON-RPC POST to /mcp. */
function rpc(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

describe("MCP: tools are assistants", () => {
  const hangar = useHangar();

  it("lists one tool per assistant, with its graph's input schema and its description", async () => {
    const helper = await hangar.client.assistants.create({
      graphId: "research",
      name: "research helper",
      description: "Writes an outline and a summary of a topic",
    });
    const { client } = await connect(`${hangar.server.url}/mcp`);
    const { tools } = await client.listTools();
    const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
    // The system assistants (named after their graphs) and the created one (its name made a valid tool name).
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(["chat", "research", "approval", "research_helper"]),
    );
    expect(byName.research_helper.description).toBe("Writes an outline and a summary of a topic");
    expect(byName.research_helper.title).toBe("research helper");
    expect(byName.chat.inputSchema.type).toBe("object");
    expect(Object.keys(byName.chat.inputSchema.properties!)).toEqual(["messages", "thread_id", "context"]);
    expect(Object.keys(byName.research.inputSchema.properties!)).toEqual(
      expect.arrayContaining(["topic", "thread_id", "context"]),
    );
    // A tool can also be called by its assistant's id.
    const byId = await client.callTool({ name: helper.assistant_id, arguments: { topic: "bees" } });
    expect(byId.isError).toBeFalsy();
    expect(outputOf(byId).topic).toBe("bees");
  });

  it("a call runs the assistant without a thread and answers its output (text and structured)", async () => {
    const before = await hangar.client.threads.search({ limit: 1000 });
    const { client, transport } = await connect(`${hangar.server.url}/mcp`);
    // Stateless, as the official server: no session id.
    expect(transport.sessionId).toBeUndefined();
    const result: any = await client.callTool({ name: "chat", arguments: say("hi") });
    expect(result.isError).toBeFalsy();
    const output = outputOf(result);
    expect(output.messages.map((m: any) => m.type)).toEqual(["human", "ai"]);
    expect(result.structuredContent).toEqual(output);
    // No thread was left behind.
    expect(await hangar.client.threads.search({ limit: 1000 })).toHaveLength(before.length);
  });

  it("a call with thread_id runs on that thread, and context reaches the run", async () => {
    const thread = await hangar.client.threads.create();
    const { client } = await connect(`${hangar.server.url}/mcp`);
    for (const text of ["one", "two"]) {
      const r: any = await client.callTool({
        name: "chat",
        arguments: { ...say(text), thread_id: thread.thread_id, context: { tone: "dry" } },
      });
      expect(r.isError).toBeFalsy();
    }
    const state = await hangar.client.threads.getState<{ messages: any[] }>(thread.thread_id);
    expect(
      state.values.messages.map((m) => m.content).filter((c: string) => ["one", "two"].includes(c)),
    ).toEqual(["one", "two"]);
    const runs = await hangar.client.runs.list(thread.thread_id);
    expect(runs).toHaveLength(2);
    expect(runs.every((r: any) => r.kwargs?.context?.tone === "dry")).toBe(true);
  });

  it("errors: an unknown tool is an MCP error; bad input and a missing thread are error results naming why", async () => {
    const { client } = await connect(`${hangar.server.url}/mcp`);
    await expect(client.callTool({ name: "no-such-tool", arguments: {} })).rejects.toThrow(
      /-32602.*Unknown tool: no-such-tool/,
    );
    const missing: any = await client.callTool({
      name: "chat",
      arguments: { ...say("x"), thread_id: "00000000-0000-4000-8000-000000000000" },
    });
    expect(missing.isError).toBe(true);
    expect(missing.content[0].text).toMatch(/not found/i);
    const badThread: any = await client.callTool({ name: "chat", arguments: { ...say("x"), thread_id: 7 } });
    expect(badThread.isError).toBe(true);
    expect(badThread.content[0].text).toMatch(/thread_id/);
    const badContext: any = await client.callTool({
      name: "chat",
      arguments: { ...say("x"), context: "loud" },
    });
    expect(badContext.isError).toBe(true);
    expect(badContext.content[0].text).toMatch(/context/);
  });

  it("hostile or malformed requests get 4xx JSON-RPC errors, never a 5xx", async () => {
    const url = hangar.server.url;
    const answers = [
      await rpc(url, "{not json"),
      await rpc(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { accept: "application/json" }),
      await rpc(url, { hello: "world" }),
      await rpc(url, [{ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: 5 } }]),
      await rpc(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { "mcp-session-id": "../../etc" }),
    ];
    for (const res of answers) {
      expect(res.status, await res.clone().text()).toBeLessThan(500);
      expect(res.status === 200 || res.status >= 400).toBe(true);
      const body: any = await res.json().catch(() => undefined);
      if (res.status >= 400 && body) expect(body.jsonrpc ?? body.detail).toBeDefined();
    }
    // No stream on GET, as in the official server; DELETE without a session: nothing to end.
    expect((await fetch(`${url}/mcp`, { headers: { accept: "text/event-stream" } })).status).toBe(405);
    expect((await fetch(`${url}/mcp`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("MCP sessions (?session=true): a thread per session", () => {
  const hangar = useHangar();

  it("calls of a session run on its thread; ending it makes its id unknown and keeps the thread", async () => {
    const { client, transport } = await connect(`${hangar.server.url}/mcp?session=true`);
    const session = transport.sessionId!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    await client.callTool({ name: "chat", arguments: say("first") });
    await client.callTool({ name: "chat", arguments: say("second") });
    // The session is a thread of the API: both calls ran on it, one after the other.
    const state = await hangar.client.threads.getState<{ messages: any[] }>(session);
    expect(state.values.messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual([
      "first",
      "second",
    ]);
    // Another client naming the session continues it.
    const other = await rpc(
      hangar.server.url,
      { jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "chat", arguments: say("third") } },
      { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" },
    );
    expect(other.status).toBe(200);
    expect(other.headers.get("mcp-session-id")).toBe(session);
    await transport.terminateSession();
    const after = await rpc(
      hangar.server.url,
      { jsonrpc: "2.0", id: 10, method: "tools/list" },
      { "mcp-session-id": session },
    );
    expect(after.status).toBe(404);
    expect((await after.json()).error.message).toBe("Session not found");
    expect((await hangar.client.threads.getState<{ messages: any[] }>(session)).values.messages).toHaveLength(
      6,
    );
  });
});

describe("MCP under the API's auth", () => {
  describe("API keys", () => {
    const hangar = useHangar({ env: { HANGAR_API_KEYS: "mcp-key-1" } });

    it("refuses a request without a key, and serves one with it", async () => {
      const res = await rpc(hangar.server.url, { jsonrpc: "2.0", id: 1, method: "tools/list" });
      expect(res.status).toBe(401);
      await expect(connect(`${hangar.server.url}/mcp`)).rejects.toThrow();
      const { client } = await connect(`${hangar.server.url}/mcp`, { "x-api-key": "mcp-key-1" });
      const r: any = await client.callTool({ name: "chat", arguments: say("keyed") });
      expect(r.isError).toBeFalsy();
    });
  });

  describe("custom auth handlers", () => {
    const hangar = useHangar({ config: join(ROOT, "test/fixtures/auth-project/langgraph.json") });
    const as = (token: string) => ({ authorization: `Bearer ${token}` });

    it("decide as for the API: another user's session and threads are not found", async () => {
      await expect(connect(`${hangar.server.url}/mcp`)).rejects.toThrow();
      const alice = await connect(`${hangar.server.url}/mcp?session=true`, as("token-alice"));
      const session = alice.transport.sessionId!;
      await alice.client.callTool({ name: "chat", arguments: say("mine") });
      // Bob can list and call the tools, but not Alice's session or thread.
      const bob = await connect(`${hangar.server.url}/mcp`, as("token-bob"));
      expect((await bob.client.listTools()).tools.map((t) => t.name)).toContain("chat");
      const onAlices: any = await bob.client.callTool({
        name: "chat",
        arguments: { ...say("theirs"), thread_id: session },
      });
      expect(onAlices.isError).toBe(true);
      expect(onAlices.content[0].text).toMatch(/not found/i);
      const hijack = await rpc(
        hangar.server.url,
        { jsonrpc: "2.0", id: 1, method: "tools/list" },
        { ...as("token-bob"), "mcp-session-id": session },
      );
      expect(hijack.status).toBe(404);
      // Alice's thread has only her call.
      const res = await fetch(`${hangar.server.url}/threads/${session}/state`, {
        headers: as("token-alice"),
      });
      const state = (await res.json()) as { values: { messages: any[] } };
      expect(state.values.messages.filter((m) => m.type === "human").map((m) => m.content)).toEqual(["mine"]);
    });
  });
});

describe("http.disable_mcp", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/mcp-disabled/langgraph.json") });

  it("takes /mcp away (404), the rest of the API still served", async () => {
    const res = await rpc(hangar.server.url, { jsonrpc: "2.0", id: 1, method: "tools/list" });
    expect(res.status).toBe(404);
    expect((await hangar.client.assistants.search()).length).toBeGreaterThan(0);
  });
});
