// MCP at /mcp (Streamable HTTP, JSON responses): every assistant the caller can see is a tool whose input schema
// is its graph's; calling it runs the assistant. The handlers act through this server's own API (in-process
// requests carrying the caller's headers), so authentication, custom auth handlers, validation and errors are
// exactly the API's. Stateless as in the official server; `?session=true` on initialize opens a session whose
// id is a thread that its tool calls run on (see docs/mcp.md).
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import type { ApiContext } from "./context.js";
import { apiAs, type Api, type ApiAnswer } from "./inner.js";

/** Arguments of a tool call that are not the graph's input (unless its input schema has fields of these names). */
const RESERVED = {
  thread_id: {
    type: "string",
    description: "Run on this thread (by default: without a thread, or on the MCP session's thread)",
  },
  context: { type: "object", description: "The run's context (the graph's context schema)" },
} as const;

/** Most tools listed (assistants are read 100 at a time). */
const MAX_TOOLS = 1000;
const PAGE = 100;

const detailOf = (a: ApiAnswer) =>
  typeof a.body?.detail === "string" ? a.body.detail : JSON.stringify(a.body ?? a.status);

interface AssistantTool {
  tool: Tool;
  assistantId: string;
  /** Argument names taken out of the input (thread_id, context) for this tool. */
  reserved: string[];
}

/** A tool name MCP clients accept (letters, digits, `_`, `-`, at most 64). */
const toolName = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "assistant";

/** The assistants the caller can see, oldest first, with their tool names (a later duplicate gets its id's start). */
async function namedAssistants(api: Api): Promise<{ name: string; assistant: any }[]> {
  const assistants: any[] = [];
  for (let offset = 0; assistants.length < MAX_TOOLS; offset += PAGE) {
    const page = await api("POST", "/assistants/search", {
      limit: PAGE,
      offset,
      sort_by: "created_at",
      sort_order: "asc",
    });
    if (page.status !== 200) throw new Error(`listing assistants: ${detailOf(page)}`);
    assistants.push(...page.body);
    if (page.body.length < PAGE) break;
  }
  const taken = new Set<string>();
  return assistants.slice(0, MAX_TOOLS).map((assistant) => {
    let name = toolName(assistant.name || assistant.graph_id);
    if (taken.has(name)) name = `${name.slice(0, 55)}_${String(assistant.assistant_id).slice(0, 8)}`;
    taken.add(name);
    return { name, assistant };
  });
}

/** An assistant as a tool: its graph's input schema, beside the reserved arguments it leaves free. */
async function toolOf(
  api: Api,
  { name, assistant: a }: { name: string; assistant: any },
): Promise<AssistantTool> {
  const schemas = await api("GET", `/assistants/${a.assistant_id}/schemas`);
  const input = (schemas.status === 200 && schemas.body?.input_schema) || {};
  const properties: Record<string, unknown> = { ...(input.properties ?? {}) };
  const reserved = Object.keys(RESERVED).filter((k) => !(k in properties));
  for (const k of reserved) properties[k] = RESERVED[k as keyof typeof RESERVED];
  return {
    assistantId: a.assistant_id,
    reserved,
    tool: {
      name,
      title: a.name || undefined,
      description: a.description || `Runs the assistant "${a.name || a.assistant_id}" (graph ${a.graph_id}).`,
      inputSchema: { ...input, type: "object", properties },
    },
  };
}

type CallResult = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

const failed = (text: string): CallResult => ({ content: [{ type: "text", text }], isError: true });

/** Runs the assistant behind a tool; the run's output (its final state) is the result. */
async function callTool(
  api: Api,
  found: AssistantTool,
  args: Record<string, unknown>,
  sessionThread: string | undefined,
): Promise<CallResult> {
  const input: Record<string, unknown> = { ...args };
  let threadId = sessionThread;
  let context: unknown;
  if (found.reserved.includes("thread_id") && "thread_id" in input) {
    if (typeof input.thread_id !== "string") return failed("thread_id: expected a string");
    threadId = input.thread_id;
    delete input.thread_id;
  }
  if (found.reserved.includes("context") && "context" in input) {
    context = input.context;
    delete input.context;
  }
  const body = { assistant_id: found.assistantId, input, ...(context !== undefined ? { context } : {}) };
  const answer = threadId
    ? await api("POST", `/threads/${encodeURIComponent(threadId)}/runs/wait`, body)
    : await api("POST", "/runs/wait", body);
  if (answer.status >= 400) return failed(detailOf(answer));
  const output = answer.body;
  const error = output?.__error__;
  if (error) return failed(`${error.error ?? "Error"}: ${error.message ?? JSON.stringify(error)}`);
  return {
    content: [{ type: "text", text: JSON.stringify(output ?? null) }],
    ...(output && typeof output === "object" && !Array.isArray(output) ? { structuredContent: output } : {}),
  };
}

/** A JSON-RPC error answered over HTTP (session problems, which the MCP transport does not see). */
function rpcError(reply: FastifyReply, status: number, code: number, message: string) {
  return reply.code(status).send({ jsonrpc: "2.0", error: { code, message }, id: null });
}

const SESSION_META = "mcp_session";

/** The thread of a session id the caller may use (open, visible to them), else undefined. */
async function sessionThread(api: Api, id: string): Promise<string | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const t = await api("GET", `/threads/${id}`);
  return t.status === 200 && t.body?.metadata?.[SESSION_META] === "open" ? id : undefined;
}

const wantsSession = (req: FastifyRequest) => {
  const v = (req.query as Record<string, unknown> | undefined)?.session;
  return v === "true" || v === "1";
};

const isInitialize = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).some((m) => m && typeof m === "object" && m.method === "initialize");

export function mcpRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    const schema = { tags: ["MCP"] };
    const handle = async (req: FastifyRequest, reply: FastifyReply) => {
      const api = apiAs(app, req);
      const header = req.headers["mcp-session-id"];
      let thread: string | undefined;
      if (typeof header === "string" && header) {
        thread = await sessionThread(api, header);
        if (!thread) return rpcError(reply, 404, -32001, "Session not found");
      } else if (wantsSession(req) && isInitialize(req.body)) {
        const created = await api("POST", "/threads", { metadata: { [SESSION_META]: "open" } });
        if (created.status !== 200) return reply.code(created.status).send(created.body);
        thread = created.body.thread_id as string;
      }
      const [{ Server }, { StreamableHTTPServerTransport }, types] = await Promise.all([
        import("@modelcontextprotocol/sdk/server/index.js"),
        import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
        import("@modelcontextprotocol/sdk/types.js"),
      ]);
      const server = new Server(
        { name: "hangar", version: ctx.version },
        { capabilities: { tools: { listChanged: false } } },
      );
      server.setRequestHandler(types.ListToolsRequestSchema, async () => {
        const tools: Tool[] = [];
        for (const n of await namedAssistants(api)) tools.push((await toolOf(api, n)).tool);
        return { tools };
      });
      server.setRequestHandler(types.CallToolRequestSchema, async (r) => {
        // Found by name (or assistant id) in the listing; only its own schemas are read.
        const named = await namedAssistants(api);
        const name = r.params.name;
        const hit =
          named.find((n) => n.name === name) ?? named.find((n) => n.assistant.assistant_id === name);
        if (!hit) throw new types.McpError(types.ErrorCode.InvalidParams, `Unknown tool: ${name}`);
        return callTool(api, await toolOf(api, hit), r.params.arguments ?? {}, thread);
      });
      // Stateless: a transport per request; the session (if any) is a thread, which every process can find.
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      await server.connect(transport);
      reply.hijack();
      const res = reply.raw;
      // Headers set before the hijack (CORS) go out with the answer.
      for (const [k, v] of Object.entries(reply.getHeaders())) if (v !== undefined) res.setHeader(k, v);
      if (thread) res.setHeader("mcp-session-id", thread);
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await transport.handleRequest(req.raw, res, req.body);
    };
    for (const url of ["/mcp", "/mcp/"]) {
      app.post(url, { schema }, handle);
      // No server-initiated stream, as in the official server.
      app.get(url, { schema }, async (_req, reply) =>
        rpcError(reply, 405, -32000, "Method not allowed: this server sends no stream on GET"),
      );
      // Ends a session: its id is then refused (404); its thread is kept. Without a session: nothing to end.
      app.delete(url, { schema }, async (req, reply) => {
        const header = req.headers["mcp-session-id"];
        const api = apiAs(app, req);
        const thread = typeof header === "string" ? await sessionThread(api, header) : undefined;
        if (!thread) return rpcError(reply, 404, -32001, "Session not found");
        await api("PATCH", `/threads/${thread}`, { metadata: { [SESSION_META]: "closed" } });
        return reply.code(200).send();
      });
    }
  };
}
