// The A2A request handler of one assistant (the SDK's A2ARequestHandler): a task is a run of the assistant, its
// contextId the run's thread. It acts through this server's own API with the caller's headers, so auth and its
// handlers decide as for the API.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type {
  AgentCard,
  Artifact,
  ListTasksRequest,
  ListTasksResponse,
  Message,
  SendMessageRequest,
  StreamResponse,
  Task,
  TaskState as TaskStateT,
} from "@a2a-js/sdk";
import type { A2ARequestHandler } from "@a2a-js/sdk/server";
import type { ApiContext } from "./context.js";
import { isUuid } from "../lib/uuid.js";
import {
  agentMessage,
  apiClient,
  dataPart,
  inputOf,
  resumeOf,
  stateOf,
  statusOf,
  TERMINAL,
  textOf,
  textPart,
  type Sdk,
} from "./a2a-parts.js";

/** The handler for an assistant the caller can see, else undefined. */
export async function a2aHandler(
  ctx: ApiContext,
  app: FastifyInstance,
  req: FastifyRequest,
  assistantId: string,
  s: Sdk,
): Promise<A2ARequestHandler | undefined> {
  const api = await apiClient(app, req);
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
    if (run.assistant_id !== assistant.assistant_id) throw new TaskNotFoundError(`task ${runId} not found`);
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
    if (threadId && !isUuid(threadId)) throw new RequestMalformedError("message.contextId: expected a UUID");
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

  /** Whether a task's run has ended (whatever the state A2A gives it). */
  const ended = new Set([
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_INPUT_REQUIRED,
  ]);
  const hasEnded = (task: Task) => task.status !== undefined && ended.has(task.status.state);
  const noPush = async (): Promise<never> => {
    throw new s.errors.PushNotificationNotSupportedError("push notifications are not supported");
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
      if (hasEnded(task)) throw new TaskNotCancelableError(`task ${params.id} has ended`);
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

    createTaskPushNotificationConfig: noPush,
    getTaskPushNotificationConfig: noPush,
    listTaskPushNotificationConfigs: noPush,
    deleteTaskPushNotificationConfig: noPush,
  };

  /** A run's progress as A2A stream responses: the task, working, each new state, then the end state. */
  async function* follow(threadId: string, runId: string, fresh: boolean): AsyncGenerator<StreamResponse> {
    const first = await taskOf(threadId, runId);
    yield { payload: { $case: "task", value: first } };
    // A task that had ended when first read is all there is; else its updates follow, then its end state (even
    // when it ended meanwhile).
    if (hasEnded(first)) return;
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
    // The stream ends with the run's last event; its end state is recorded just after: wait for it.
    await api.runs.join(threadId, runId);
    const end = await taskOf(threadId, runId);
    yield {
      payload: {
        $case: "statusUpdate",
        value: { taskId: runId, contextId: threadId, status: end.status, metadata: undefined },
      },
    };
  }

  return handler;
}
