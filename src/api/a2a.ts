// A2A at /a2a/{assistant_id} (JSON-RPC, A2A v1.0 and the v0.3 method names) and the agent card at
// /.well-known/agent-card.json?assistant_id=: an A2A task is a run of the assistant, its contextId the run's
// thread. The official A2A SDK parses, validates and answers the protocol (and translates v0.3); the handler
// here acts through this server's own API with the caller's headers (the SDK's client over loopback), so auth
// and its handlers decide as for the API. See docs/a2a.md.
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Client } from "@langchain/langgraph-sdk";
import type {
  AgentCard,
  Artifact,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  Part,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskState as TaskStateT,
} from "@a2a-js/sdk";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { ApiContext } from "./context.js";

/** The SDK's modules, loaded on the first A2A request (a server that never speaks A2A does not load them). */
async function sdk() {
  const [core, server, errors, legacy] = await Promise.all([
    import("@a2a-js/sdk"),
    import("@a2a-js/sdk/server"),
    import("@a2a-js/sdk/errors"),
    import("@a2a-js/sdk/compat/v0_3/server"),
  ]);
  return { core, server, errors, legacy };
}
type Sdk = Awaited<ReturnType<typeof sdk>>;

/** Headers of the A2A request not passed on to the API requests made for it. */
const NOT_FORWARDED = new Set([
  "accept",
  "a2a-version",
  "a2a-extensions",
  "connection",
  "content-length",
  "content-type",
  "host",
  "keep-alive",
  "transfer-encoding",
  "upgrade",
]);

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/** This server's own URL (the app's listening address) and a client of its API with the caller's headers. */
function apiClient(app: FastifyInstance, req: FastifyRequest): Client {
  const addr = app.server.address();
  if (!addr || typeof addr !== "object") throw new Error("the server is not listening");
  const host = addr.address === "0.0.0.0" || addr.address === "::" ? "127.0.0.1" : addr.address;
  const apiUrl = `http://${host.includes(":") ? `[${host}]` : host}:${addr.port}`;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined && !NOT_FORWARDED.has(k)) headers[k] = Array.isArray(v) ? v.join(", ") : v;
  }
  return new Client({ apiUrl, defaultHeaders: headers, callerOptions: { maxRetries: 0 } });
}

/** The HTTP status of an error the SDK's client threw (undefined for another error). */
const statusOf = (e: unknown): number | undefined => (e as { status?: number })?.status;

/** The text of a message's content (a string, or text blocks). */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((b) => (typeof b === "string" ? b : b?.type === "text" ? String(b.text ?? "") : ""))
      .join("");
  }
  return "";
}

const textPart = (text: string): Part => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "text/plain",
});
const dataPart = (value: unknown): Part => ({
  content: { $case: "data", value },
  metadata: undefined,
  filename: "",
  mediaType: "application/json",
});

/** The graph input a message asks for: its text as a user message, its data parts merged in. */
function inputOf(message: Message, sdkErrors: Sdk["errors"]): Record<string, unknown> {
  const texts: string[] = [];
  const input: Record<string, unknown> = {};
  for (const p of message.parts) {
    const c = p.content;
    if (c?.$case === "text") texts.push(c.value);
    else if (c?.$case === "data" && c.value && typeof c.value === "object" && !Array.isArray(c.value)) {
      Object.assign(input, c.value);
    } else {
      throw new sdkErrors.ContentTypeNotSupportedError("only text and data (object) parts are supported");
    }
  }
  if (texts.length) {
    const prior = Array.isArray(input.messages) ? input.messages : [];
    input.messages = [...prior, { role: "user", content: texts.join("\n") }];
  }
  return input;
}

/** The value a resumed interrupt gets from a message: its data, else its text. */
function resumeOf(message: Message): unknown {
  const data = message.parts.find((p) => p.content?.$case === "data")?.content?.value;
  if (data !== undefined) return data;
  return message.parts
    .map((p) => (p.content?.$case === "text" ? p.content.value : ""))
    .filter(Boolean)
    .join("\n");
}

const agentMessage = (contextId: string, taskId: string, parts: Part[]): Message => ({
  messageId: randomUUID(),
  contextId,
  taskId,
  role: 2, // ROLE_AGENT
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

/** A2A's state for a run (and its thread's pending interrupts). */
function stateOf(TaskState: Sdk["core"]["TaskState"], status: string, interrupted: boolean): TaskStateT {
  if (status === "pending") return TaskState.TASK_STATE_SUBMITTED;
  if (status === "running") return TaskState.TASK_STATE_WORKING;
  if (status === "success")
    return interrupted ? TaskState.TASK_STATE_INPUT_REQUIRED : TaskState.TASK_STATE_COMPLETED;
  if (status === "interrupted") return TaskState.TASK_STATE_CANCELED;
  return TaskState.TASK_STATE_FAILED;
}

const TERMINAL = new Set(["success", "error", "timeout", "interrupted"]);

export function a2aRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    /** The handler of one request: the SDK calls it with the request already validated. */
    const handlerFor = async (req: FastifyRequest, assistantId: string, s: Sdk) => {
      const api = apiClient(app, req);
      const { TaskState } = s.core;
      const { TaskNotFoundError, TaskNotCancelableError, UnsupportedOperationError, RequestMalformedError } =
        s.errors;
      const assistant = await api.assistants.get(assistantId).catch((e) => {
        if (statusOf(e) === 404 || statusOf(e) === 422) return undefined;
        throw e;
      });
      if (!assistant) return undefined;
      const base = `${req.protocol}://${req.headers.host ?? "127.0.0.1"}`;
      const card: AgentCard = {
        name: assistant.name || assistant.graph_id,
        description:
          (assistant as { description?: string | null }).description ||
          `The assistant "${assistant.name || assistant.assistant_id}" (graph ${assistant.graph_id}), served by Hangar.`,
        supportedInterfaces: [
          {
            url: `${base}/a2a/${assistant.assistant_id}`,
            protocolBinding: "JSONRPC",
            tenant: "",
            protocolVersion: "1.0",
          },
          {
            url: `${base}/a2a/${assistant.assistant_id}`,
            protocolBinding: "JSONRPC",
            tenant: "",
            protocolVersion: "0.3",
          },
        ],
        provider: undefined,
        version: ctx.version,
        capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
        securitySchemes: {},
        securityRequirements: [],
        defaultInputModes: ["text/plain", "application/json"],
        defaultOutputModes: ["text/plain", "application/json"],
        skills: [
          {
            id: assistant.assistant_id,
            name: assistant.name || assistant.graph_id,
            description: `Runs the graph ${assistant.graph_id}`,
            tags: [assistant.graph_id],
            examples: [],
            inputModes: ["text/plain", "application/json"],
            outputModes: ["text/plain", "application/json"],
            securityRequirements: [],
          },
        ],
        signatures: [],
      };

      /** The task of a run: its state, the user's input as history, the output as an artifact. */
      const taskOf = async (threadId: string, runId: string, historyLength?: number): Promise<Task> => {
        const run = await api.runs.get(threadId, runId).catch((e) => {
          if (statusOf(e) === 404) throw new TaskNotFoundError(`task ${runId} not found`);
          throw e;
        });
        if (run.assistant_id !== assistant.assistant_id)
          throw new TaskNotFoundError(`task ${runId} not found`);
        const done = TERMINAL.has(run.status);
        const state = done ? await api.threads.getState(threadId) : undefined;
        const interrupts = (state?.tasks ?? []).flatMap((t) => t.interrupts ?? []);
        const values = (state?.values ?? {}) as Record<string, unknown>;
        const messages = Array.isArray(values.messages) ? values.messages : [];
        const last = [...messages].reverse().find((m: any) => m?.type === "ai" || m?.role === "assistant");
        const artifacts: Artifact[] =
          run.status === "success"
            ? [
                {
                  artifactId: `${runId}-output`,
                  name: "output",
                  description: "The run's final state",
                  parts: [...(last ? [textPart(textOf((last as any).content))] : []), dataPart(values)],
                  metadata: undefined,
                  extensions: [],
                },
              ]
            : [];
        const input = (run as { kwargs?: { input?: unknown } }).kwargs?.input;
        const history: Message[] =
          input && typeof input === "object"
            ? [
                {
                  ...agentMessage(threadId, runId, [dataPart(input)]),
                  role: 1, // ROLE_USER
                },
              ]
            : [];
        const statusMessage = interrupts.length
          ? agentMessage(
              threadId,
              runId,
              interrupts.map((i: any) => dataPart(i.value ?? null)),
            )
          : run.status === "error"
            ? agentMessage(threadId, runId, [textPart("the run failed")])
            : undefined;
        return {
          id: runId,
          contextId: threadId,
          status: {
            state: stateOf(TaskState, run.status, interrupts.length > 0),
            message: statusMessage,
            timestamp: run.updated_at,
          },
          artifacts,
          history: historyLength === 0 ? [] : history,
          metadata: { assistant_id: assistant.assistant_id, graph_id: assistant.graph_id },
        };
      };

      /** The thread of a task id the caller can see (else TaskNotFound). */
      const threadOfTask = async (taskId: string): Promise<string> => {
        const thread = isUuid(taskId) ? await ctx.storage.runs.threadOf(taskId) : null;
        if (!thread) throw new TaskNotFoundError(`task ${taskId} not found`);
        return thread;
      };

      /** Starts the run a message asks for; returns its thread and run ids. */
      const start = async (params: SendMessageRequest, stream: boolean) => {
        const message = params.message;
        if (!message?.parts?.length)
          throw new RequestMalformedError("message.parts: at least one part is needed");
        let threadId = message.contextId;
        let resume = false;
        if (message.taskId) {
          // A reply to a task waiting for input resumes its thread's interrupt.
          const thread = await threadOfTask(message.taskId);
          const task = await taskOf(thread, message.taskId, 0);
          if (task.status?.state !== TaskState.TASK_STATE_INPUT_REQUIRED) {
            throw new UnsupportedOperationError(`task ${message.taskId} does not wait for input`);
          }
          threadId = thread;
          resume = true;
        }
        if (threadId && !isUuid(threadId))
          throw new RequestMalformedError("message.contextId: expected a UUID");
        if (!threadId) threadId = (await api.threads.create()).thread_id;
        else if (!resume) {
          await api.threads.get(threadId).catch(async (e) => {
            // A context this server has not seen yet becomes a thread of that id.
            if (statusOf(e) === 404) await api.threads.create({ threadId, ifExists: "do_nothing" });
            else throw e;
          });
        }
        const payload = resume
          ? { command: { resume: resumeOf(message) } }
          : { input: inputOf(message, s.errors) };
        return { threadId, payload, stream };
      };

      const handler: A2ARequestHandler = {
        getAgentCard: async () => card,
        getAuthenticatedExtendedAgentCard: async () => card,

        async sendMessage(params) {
          const { threadId, payload } = await start(params, false);
          if (params.configuration?.returnImmediately) {
            // Resumable, so that SubscribeToTask can replay it from its start.
            const run = await api.runs.create(threadId, assistant.assistant_id, {
              ...payload,
              streamResumable: true,
            });
            return taskOf(threadId, run.run_id);
          }
          let runId = "";
          await api.runs.wait(threadId, assistant.assistant_id, {
            ...payload,
            onRunCreated: (m) => (runId = m.run_id),
          });
          return taskOf(threadId, runId, params.configuration?.historyLength);
        },

        async *sendMessageStream(params) {
          const { threadId, payload } = await start(params, true);
          const run = await api.runs.create(threadId, assistant.assistant_id, {
            ...payload,
            streamMode: ["values"],
            streamResumable: true,
          });
          yield* follow(threadId, run.run_id, true);
        },

        async getTask(params) {
          return taskOf(await threadOfTask(params.id), params.id, params.historyLength);
        },

        async cancelTask(params) {
          const threadId = await threadOfTask(params.id);
          const task = await taskOf(threadId, params.id);
          const run = await api.runs.get(threadId, params.id);
          if (TERMINAL.has(run.status)) throw new TaskNotCancelableError(`task ${params.id} has ended`);
          await api.runs.cancel(threadId, params.id, true);
          return { ...(await taskOf(threadId, params.id)), history: task.history };
        },

        async listTasks(params: ListTasksRequest): Promise<ListTasksResponse> {
          const pageSize = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
          const offset = params.pageToken ? Number(params.pageToken) : 0;
          if (!Number.isInteger(offset) || offset < 0)
            throw new RequestMalformedError("pageToken: not a token of this server");
          const threads = params.contextId
            ? [params.contextId]
            : (await api.threads.search({ limit: 100, sortBy: "updated_at", sortOrder: "desc" })).map(
                (t) => t.thread_id,
              );
          const all: { threadId: string; runId: string; created: string }[] = [];
          for (const t of threads) {
            if (!isUuid(t)) continue;
            const runs = await api.runs.list(t, { limit: 1000 }).catch((e) => {
              if (statusOf(e) === 404) return [];
              throw e;
            });
            for (const r of runs) {
              if (r.assistant_id === assistant.assistant_id)
                all.push({ threadId: t, runId: r.run_id, created: r.created_at });
            }
          }
          all.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
          let tasks = await Promise.all(all.map((r) => taskOf(r.threadId, r.runId, params.historyLength)));
          // No filter for an unspecified or unrecognized state (the SDK's client sends "UNRECOGNIZED" when none is given).
          if (params.status > 0) tasks = tasks.filter((t) => t.status?.state === params.status);
          const page = tasks.slice(offset, offset + pageSize);
          if (params.includeArtifacts === false) for (const t of page) t.artifacts = [];
          return {
            tasks: page,
            nextPageToken: offset + pageSize < tasks.length ? String(offset + pageSize) : "",
            pageSize,
            totalSize: tasks.length,
          };
        },

        // Beyond the official server, which answers -32601: a running task's stream, from its start.
        async *resubscribe(params) {
          const threadId = await threadOfTask(params.id);
          yield* follow(threadId, params.id, false);
        },

        async createTaskPushNotificationConfig() {
          throw new s.errors.PushNotificationNotSupportedError("push notifications are not supported");
        },
        async getTaskPushNotificationConfig() {
          throw new s.errors.PushNotificationNotSupportedError("push notifications are not supported");
        },
        async listTaskPushNotificationConfigs() {
          throw new s.errors.PushNotificationNotSupportedError("push notifications are not supported");
        },
        async deleteTaskPushNotificationConfig() {
          throw new s.errors.PushNotificationNotSupportedError("push notifications are not supported");
        },
      };

      /** A run's progress as A2A stream responses: the task, working, each new state, then the end state. */
      async function* follow(
        threadId: string,
        runId: string,
        fresh: boolean,
      ): AsyncGenerator<StreamResponse> {
        const first = await taskOf(threadId, runId);
        yield { payload: { $case: "task", value: first } };
        if (TERMINAL.has((await api.runs.get(threadId, runId)).status)) return;
        const working = (state: TaskStateT) => ({
          $case: "statusUpdate" as const,
          value: {
            taskId: runId,
            contextId: threadId,
            status: { state, message: undefined, timestamp: new Date().toISOString() },
            metadata: undefined,
          },
        });
        if (fresh || first.status?.state !== TaskState.TASK_STATE_WORKING) {
          yield { payload: working(TaskState.TASK_STATE_WORKING) };
        }
        for await (const part of api.runs.joinStream(threadId, runId, {
          lastEventId: "-1",
          streamMode: ["values"],
        })) {
          if (part.event !== "values") continue;
          yield {
            payload: {
              $case: "artifactUpdate",
              value: {
                taskId: runId,
                contextId: threadId,
                artifact: {
                  artifactId: `${runId}-output`,
                  name: "output",
                  description: "The run's state after a step",
                  parts: [dataPart(part.data)],
                  metadata: undefined,
                  extensions: [],
                },
                append: false,
                lastChunk: false,
                metadata: undefined,
              },
            },
          };
        }
        const end = await taskOf(threadId, runId);
        yield {
          payload: {
            $case: "statusUpdate",
            value: { taskId: runId, contextId: threadId, status: end.status, metadata: undefined },
          },
        };
      }

      return handler;
    };

    const notFound = (reply: FastifyReply, assistantId: string) =>
      reply.code(404).send({ detail: `Assistant ${assistantId} not found` });

    app.post<{ Params: { assistant_id: string } }>(
      "/a2a/:assistant_id",
      { schema: { tags: ["A2A"] } },
      async (req, reply) => {
        const s = await sdk();
        const handler = await handlerFor(req, req.params.assistant_id, s);
        if (!handler) return notFound(reply, req.params.assistant_id);
        const body = req.body as { method?: unknown; id?: unknown } | undefined;
        // v0.3 method names ("message/send") go through the SDK's translation; v1.0 ones ("SendMessage") as they are.
        const legacy = typeof body?.method === "string" && body.method.includes("/");
        const context = s.server.defaultServerCallContextBuilder({
          extensions: undefined,
          user: undefined,
          headers: req.headers,
          requestedVersion: legacy ? "0.3" : "1.0",
        });
        const transport = legacy
          ? new s.legacy.LegacyJsonRpcTransportHandler(handler)
          : new s.server.JsonRpcTransportHandler(handler);
        const answer = await transport.handle(req.body as Record<string, unknown>, context);
        if (typeof (answer as AsyncGenerator)?.[Symbol.asyncIterator] !== "function")
          return reply.send(answer);
        const rpcError = (e: unknown) => ({
          jsonrpc: "2.0",
          id: body?.id ?? null,
          error: legacy
            ? s.legacy.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(e)
            : s.server.JsonRpcTransportHandler.mapToJSONRPCError(e),
        });
        // A stream whose first step fails (an unknown task) is answered as a plain JSON-RPC error.
        const events = (answer as AsyncGenerator<unknown>)[Symbol.asyncIterator]();
        let first: IteratorResult<unknown>;
        try {
          first = await events.next();
        } catch (e) {
          return reply.send(rpcError(e));
        }
        // Else SSE, each JSON-RPC response a `data:` line; an error mid-stream ends it as an `error` event.
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, { ...reply.getHeaders(), ...s.core.SSE_HEADERS } as Record<string, string>);
        try {
          for (let step = first; !step.done; step = await events.next()) {
            res.write(s.core.formatSSEEvent(step.value as never));
          }
        } catch (e) {
          res.write(s.core.formatSSEErrorEvent(rpcError(e) as never));
        }
        res.end();
      },
    );

    app.get<{ Querystring: { assistant_id?: string } }>(
      "/.well-known/agent-card.json",
      { schema: { tags: ["A2A"] } },
      async (req, reply) => {
        const id = req.query.assistant_id;
        if (!id)
          return reply
            .code(422)
            .send({ detail: "assistant_id: required (the assistant whose card to show)" });
        const handler = await handlerFor(req, id, await sdk());
        if (!handler) return notFound(reply, id);
        return reply.send(await handler.getAgentCard());
      },
    );
  };
}
