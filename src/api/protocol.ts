// Protocol v2 over HTTP: `POST /threads/{id}/commands` (run.start, input.respond, state.get) and
// `POST /threads/{id}/stream/events` (SSE of the thread's protocol events, filtered by channel, namespace and
// depth, replayed after `since`). A protocol event's `seq` is its id in the thread's event log, so it survives a
// worker change and a Redis restart as thread streams do. See docs/protocol-v2.md.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { matchesSubscription } from "@langchain/langgraph/stream";
import { z } from "zod";
import {
  appliedThroughSeq,
  PROTOCOL_MODE,
  protocolError as failure,
  protocolLog,
  readToHead,
  sequenced,
} from "../runs/protocol-run.js";
import type { RunBody } from "../runs/schemas.js";
import { SseWriter } from "../streams/sse.js";
import { HangarError, NotFoundError } from "../lib/errors.js";
import { isUuid } from "../lib/uuid.js";
import type { ApiContext } from "./context.js";
import { apiAs } from "./inner.js";
import { createRunOnThread } from "./runs.js";
import { Command, registerProtocolSocket, Subscription } from "./protocol-socket.js";
import * as S from "./schemas.js";
import { isObject } from "../lib/objects.js";

/** The body of an SSE event stream: a subscription, and nothing else. */
const EventsFilter = Subscription.strict();

type Params = Record<string, unknown>;
const STRATEGIES = ["reject", "rollback", "interrupt", "enqueue"] as const;
const strategy = (s: unknown): RunBody["multitask_strategy"] =>
  STRATEGIES.find((known) => known === s) ?? "enqueue";
/** A run's status as an agent tree node's status, before the run's own lifecycle events say more. */
const RUN_TO_LIFECYCLE: Record<string, string> = {
  pending: "started",
  running: "running",
  success: "completed",
  error: "failed",
  timeout: "failed",
  interrupted: "interrupted",
};

export function protocolRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { guard } = ctx;

  /** Pending interrupts of a thread (from its state), by id. */
  const pendingInterrupts = async (threadId: string): Promise<string[]> => {
    const state = await ctx.threadState.getState(threadId, null, true).catch(() => undefined);
    return (state?.interrupts ?? []).map((i) => String((i as { id?: unknown }).id ?? "")).filter(Boolean);
  };

  /** Starts a protocol run on the thread (input, or the resume of its interrupts; `extra` goes into the body). */
  const startRun = async (
    req: FastifyRequest,
    threadId: string,
    p: Params,
    resume?: unknown,
    extra: Partial<RunBody> = {},
  ) => {
    const body: RunBody = {
      assistant_id: String(p.assistant_id),
      input: resume !== undefined ? null : (p.input ?? null),
      command:
        resume !== undefined
          ? {
              resume,
              ...(p.update !== undefined ? { update: p.update } : {}),
              ...(p.goto !== undefined ? { goto: p.goto } : {}),
            }
          : undefined,
      config: isObject(p.config) ? p.config : undefined,
      metadata: isObject(p.metadata) ? p.metadata : undefined,
      stream_mode: [PROTOCOL_MODE],
      stream_subgraphs: true,
      stream_resumable: true,
      if_not_exists: "create",
      multitask_strategy: strategy(p.multitaskStrategy),
      on_disconnect: "continue",
      durability: "async",
      ...extra,
    };
    return createRunOnThread(ctx, req, threadId, body);
  };

  /** The thread's latest run (the assistant a command that names none goes on with). */
  const lastRun = async (threadId: string) => {
    const [run] = await ctx.storage.runs.list(threadId, { limit: 1, offset: 0 });
    return run;
  };
  const lastAssistant = async (threadId: string): Promise<string | undefined> =>
    (await lastRun(threadId))?.assistant_id;

  /** The agent tree of a run, from the lifecycle events in its log (what has happened up to now). */
  const agentTree = async (threadId: string, runId: string | undefined) => {
    const run = runId ? await ctx.storage.runs.get(threadId, runId) : await lastRun(threadId);
    if (runId && !run) throw new NotFoundError(`run ${runId} not found on thread ${threadId}`);
    const nodes = new Map<string, { namespace: string[]; status: string; graph_name: string }>();
    const log = run ? ctx.broker.get(run.run_id) : undefined;
    if (log) {
      for await (const ev of readToHead(log)) {
        const event = sequenced(ev);
        if (event?.method !== "lifecycle") continue;
        const { params } = event;
        const data = params.data as { event?: string; graph_name?: string };
        const key = JSON.stringify(params.namespace);
        nodes.set(key, {
          namespace: params.namespace,
          status: String(data.event ?? "running"),
          graph_name: String(data.graph_name ?? nodes.get(key)?.graph_name ?? params.namespace.at(-1) ?? ""),
        });
      }
    }
    if (!nodes.has("[]")) {
      nodes.set("[]", {
        namespace: [],
        status: RUN_TO_LIFECYCLE[run?.status ?? "pending"] ?? "started",
        graph_name: run?.assistant_id ?? "",
      });
    }
    const tree = (ns: string[]): Params => {
      const node = nodes.get(JSON.stringify(ns))!;
      const children = [...nodes.values()]
        .filter((n) => n.namespace.length === ns.length + 1 && ns.every((part, i) => n.namespace[i] === part))
        .sort((a, b) => JSON.stringify(a.namespace).localeCompare(JSON.stringify(b.namespace)))
        .map((n) => tree(n.namespace));
      return { ...node, ...(children.length ? { children } : {}) };
    };
    return { tree: tree([]), run_id: run?.run_id ?? null };
  };

  /** A thread's checkpoints, newest first, as protocol summaries. */
  const checkpoints = async (threadId: string, limit: number, before?: string) => {
    const states = await ctx.threadState.history(threadId, { limit, before: before ?? null });
    return states.map((st) => {
      const metadata = (st.metadata ?? {}) as Params;
      const writes = isObject(metadata.writes) ? Object.keys(metadata.writes) : [];
      return {
        id: st.checkpoint_id,
        timestamp: st.created_at,
        step: typeof metadata.step === "number" ? metadata.step : -1,
        ...(writes.length ? { node_name: writes[0] } : {}),
        metadata,
      };
    });
  };

  const handle = async (req: FastifyRequest, threadId: string, cmd: z.infer<typeof Command>) => {
    const p = cmd.params ?? {};
    // Each answer's own (answer() adds the thread's applied_through_seq to it).
    const meta: { thread_id: string; applied_through_seq?: number } = { thread_id: threadId };
    switch (cmd.method) {
      case "run.start": {
        if (typeof p.assistant_id !== "string" || !p.assistant_id) {
          return failure(cmd.id, "invalid_argument", "run.start requires an assistant_id.");
        }
        // On a thread that waits for input, run.start's input answers it (as the official server does).
        const waiting = p.input != null && (await pendingInterrupts(threadId)).length > 0;
        const started = await startRun(req, threadId, p, waiting ? p.input : undefined);
        return { type: "success", id: cmd.id, result: { run_id: started.run.run_id }, meta };
      }
      case "input.inject": {
        const m = p.message;
        if (!isObject(m) || !["user", "system"].includes(String(m.role)) || typeof m.content !== "string") {
          return failure(
            cmd.id,
            "invalid_argument",
            'input.inject requires a message {role: "user" | "system", content: string}',
          );
        }
        const assistant = typeof p.assistant_id === "string" ? p.assistant_id : await lastAssistant(threadId);
        if (!assistant)
          return failure(cmd.id, "no_such_run", "nothing has run on this thread; call run.start first");
        // LangGraph takes no input into a superstep under way: the message is the input of the next run,
        // queued behind the current one (at once if the thread is idle).
        const started = await startRun(req, threadId, {
          assistant_id: assistant,
          input: { messages: [m] },
          multitaskStrategy: "enqueue",
        });
        return { type: "success", id: cmd.id, result: { run_id: started.run.run_id }, meta };
      }
      case "state.listCheckpoints": {
        const limit = p.limit === undefined ? 10 : p.limit;
        if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 1000) {
          return failure(
            cmd.id,
            "invalid_argument",
            "state.listCheckpoints: limit is an integer from 1 to 1000",
          );
        }
        if (p.before !== undefined && typeof p.before !== "string") {
          return failure(cmd.id, "invalid_argument", "state.listCheckpoints: before is a checkpoint id");
        }
        await guard.thread(req, threadId, "threads:read");
        return {
          type: "success",
          id: cmd.id,
          result: { checkpoints: await checkpoints(threadId, limit, p.before as string | undefined) },
          meta,
        };
      }
      case "state.fork": {
        if (typeof p.checkpoint_id !== "string" || !p.checkpoint_id) {
          return failure(cmd.id, "invalid_argument", "state.fork requires a checkpoint_id");
        }
        const assistant = typeof p.assistant_id === "string" ? p.assistant_id : await lastAssistant(threadId);
        if (!assistant)
          return failure(cmd.id, "no_such_run", "nothing has run on this thread; call run.start first");
        await guard.thread(req, threadId, "threads:read");
        const known = await ctx.threadState
          .getState(threadId, { checkpoint_id: p.checkpoint_id })
          .catch((e: unknown) => (e instanceof NotFoundError ? undefined : Promise.reject(e)));
        if (known?.checkpoint_id !== p.checkpoint_id) {
          return failure(cmd.id, "no_such_checkpoint", `no checkpoint ${p.checkpoint_id} on this thread`);
        }
        const started = await startRun(req, threadId, { ...p, assistant_id: assistant }, undefined, {
          checkpoint_id: known.checkpoint_id,
        });
        return {
          type: "success",
          id: cmd.id,
          result: { run_id: started.run.run_id, thread_id: threadId },
          meta,
        };
      }
      case "agent.getTree": {
        if (p.run_id !== undefined && (typeof p.run_id !== "string" || !isUuid(p.run_id))) {
          return failure(cmd.id, "invalid_argument", "agent.getTree: run_id is a run's UUID");
        }
        await guard.thread(req, threadId, "threads:read");
        const { tree } = await agentTree(threadId, p.run_id as string | undefined);
        return { type: "success", id: cmd.id, result: { tree }, meta };
      }
      case "input.respond": {
        const responses: Params = {};
        if (Array.isArray(p.responses)) {
          for (const r of p.responses) {
            if (!isObject(r) || typeof r.interrupt_id !== "string") {
              return failure(
                cmd.id,
                "invalid_argument",
                "input.respond: each response needs an interrupt_id",
              );
            }
            responses[r.interrupt_id] = r.response;
          }
        } else if (typeof p.interrupt_id === "string") responses[p.interrupt_id] = p.response;
        if (!Object.keys(responses).length) {
          return failure(cmd.id, "invalid_argument", "input.respond requires an interrupt_id and a response");
        }
        await guard.thread(req, threadId, "threads:create_run");
        const pending = await pendingInterrupts(threadId);
        if (!pending.length) {
          return failure(
            cmd.id,
            "invalid_argument",
            "input.respond can only be used while the run is interrupted.",
          );
        }
        const unknown = Object.keys(responses).find((id) => !pending.includes(id));
        if (unknown) return failure(cmd.id, "no_such_interrupt", `no pending interrupt ${unknown}`);
        const assistant = await lastAssistant(threadId);
        await startRun(req, threadId, { ...p, assistant_id: assistant }, responses);
        return { type: "success", id: cmd.id, result: {}, meta };
      }
      case "state.get": {
        await guard.thread(req, threadId, "threads:read");
        if (p.keys !== undefined && !(Array.isArray(p.keys) && p.keys.every((k) => typeof k === "string"))) {
          return failure(cmd.id, "invalid_argument", "state.get: keys is a list of state keys");
        }
        const state = await ctx.threadState.getState(threadId, null, true);
        const all = (isObject(state.values) ? state.values : {}) as Params;
        const keys = p.keys as string[] | undefined;
        const values = keys ? Object.fromEntries(keys.filter((k) => k in all).map((k) => [k, all[k]])) : all;
        const checkpoint = state.checkpoint_id
          ? { id: state.checkpoint_id, ns: state.checkpoint?.checkpoint_ns ?? "" }
          : undefined;
        return {
          type: "success",
          id: cmd.id,
          result: { values, ...(checkpoint ? { checkpoint } : {}) },
          meta,
        };
      }
      default:
        return { ...failure(cmd.id, "unknown_command", `Unknown protocol command: ${cmd.method}`), meta };
    }
  };

  return async (app) => {
    const tags = ["Protocol v2"];
    /** Before listening: the thread exists (made for the caller if it did not) and the caller may read it. */
    const listening = async (req: FastifyRequest) => {
      const threadId = (req.params as { thread_id: string }).thread_id;
      // A client may listen before its first run creates the thread (the SDK does): the thread is created
      // for the caller then, as POST /threads would (so nobody else can later take that id and be heard).
      await apiAs(app, req)("POST", "/threads", { thread_id: threadId, if_exists: "do_nothing" });
      await guard.thread(req, threadId, "threads:read");
    };
    /** A command's answer, the API's refusals as protocol errors. */
    const answer = async (req: FastifyRequest, threadId: string, cmd: z.infer<typeof Command>) => {
      try {
        // As the official server answers: the highest seq of the thread's events seen when the command came, read
        // before it acts, so that the events of a run it starts all come after it (the SDK takes what is not after
        // it for a replay).
        const seen = await appliedThroughSeq(ctx.broker.thread(threadId));
        const answered = await handle(req, threadId, cmd);
        if ("meta" in answered) answered.meta.applied_through_seq = seen;
        return answered;
      } catch (e) {
        if (e instanceof HangarError) {
          const code =
            e.code === "not_found"
              ? "no_such_run"
              : e.code === "forbidden" || e.code === "unauthorized"
                ? "permission_denied"
                : "invalid_argument";
          return failure(cmd.id, code, e.message);
        }
        throw e;
      }
    };
    registerProtocolSocket(app, ctx, { listening, answer });

    app.post(
      "/threads/:thread_id/commands",
      { schema: { tags, params: S.ThreadIdParams, body: Command } },
      async (req) => answer(req, req.params.thread_id, req.body),
    );

    app.post(
      "/threads/:thread_id/stream/events",
      {
        schema: { tags, params: S.ThreadIdParams, body: EventsFilter },
        preHandler: listening,
      },
      async (req, reply: FastifyReply) => {
        const filter = req.body as z.infer<typeof EventsFilter>;
        const log = ctx.broker.thread((req.params as { thread_id: string }).thread_id);
        reply.hijack();
        const res = reply.raw;
        const sse = new SseWriter(res, { ...reply.getHeaders() });
        ctx.metrics.streamClients.inc();
        res.once("close", () => ctx.metrics.streamClients.dec());
        const gone = new AbortController();
        res.on("close", () => gone.abort());
        // Open until the client leaves; events after `since` (or all that the log holds) first.
        for await (const event of protocolLog(
          log,
          filter.since === undefined ? 0 : filter.since + 1,
          gone.signal,
        )) {
          if (!matchesSubscription(event as never, filter as never)) continue;
          await sse.send({ id: event.seq, event: event.method, data: JSON.stringify(event) });
        }
        sse.end();
      },
    );
  };
}
