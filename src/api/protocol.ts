// Protocol v2 over HTTP: `POST /threads/{id}/commands` (run.start, input.respond, state.get) and
// `POST /threads/{id}/stream/events` (SSE of the thread's protocol events, filtered by channel, namespace and
// depth, replayed after `since`). A protocol event's `seq` is its id in the thread's event log, so it survives a
// worker change and a Redis restart as thread streams do. See docs/protocol-v2.md.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { matchesSubscription } from "@langchain/langgraph/stream";
import { z } from "zod";
import { PROTOCOL_MODE, protocolError as failure, protocolLog } from "../runs/protocol-run.js";
import type { RunCreateStatefulT } from "../runs/schemas.js";
import { SseWriter } from "../streams/sse.js";
import { HangarError } from "../lib/errors.js";
import type { ApiContext } from "./context.js";
import { apiAs } from "./inner.js";
import { createRunOnThread } from "./runs.js";
import { Command, registerProtocolSocket, Subscription } from "./protocol-socket.js";
import * as S from "./schemas.js";

/** The body of an SSE event stream: a subscription, and nothing else. */
const EventsFilter = Subscription.strict();

type Params = Record<string, unknown>;
const isRecord = (v: unknown): v is Params => typeof v === "object" && v !== null && !Array.isArray(v);
const STRATEGIES = ["reject", "rollback", "interrupt", "enqueue"];

export function protocolRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { guard } = ctx;

  /** Pending interrupts of a thread (from its state), by id. */
  const pendingInterrupts = async (threadId: string): Promise<string[]> => {
    const state = await ctx.threadState.getState(threadId, null, true).catch(() => undefined);
    const tasks = ((state as { tasks?: { interrupts?: { id?: string }[] }[] } | undefined)?.tasks ?? []) as {
      interrupts?: { id?: string }[];
    }[];
    return tasks.flatMap((t) => (t.interrupts ?? []).map((i) => String(i.id ?? ""))).filter(Boolean);
  };

  /** Starts a protocol run on the thread (input, or the resume of its interrupts). */
  const startRun = async (req: FastifyRequest, threadId: string, p: Params, resume?: Params) => {
    const body = {
      assistant_id: String(p.assistant_id),
      input: resume ? null : (p.input ?? null),
      command: resume
        ? {
            resume,
            ...(p.update !== undefined ? { update: p.update } : {}),
            ...(p.goto !== undefined ? { goto: p.goto } : {}),
          }
        : undefined,
      config: isRecord(p.config) ? p.config : undefined,
      metadata: isRecord(p.metadata) ? p.metadata : undefined,
      stream_mode: [PROTOCOL_MODE],
      stream_subgraphs: true,
      stream_resumable: true,
      if_not_exists: "create",
      multitask_strategy: STRATEGIES.includes(String(p.multitaskStrategy)) ? p.multitaskStrategy : "enqueue",
      on_disconnect: "continue",
      durability: "async",
    } as unknown as RunCreateStatefulT;
    return createRunOnThread(ctx, req, threadId, body);
  };

  /** The assistant a thread's last protocol run used (input.respond names none). */
  const lastAssistant = async (threadId: string): Promise<string | undefined> => {
    const [run] = await ctx.storage.runs.list(threadId, { limit: 1, offset: 0 });
    return run?.assistant_id;
  };

  const handle = async (req: FastifyRequest, threadId: string, cmd: z.infer<typeof Command>) => {
    const p = cmd.params ?? {};
    const meta = { thread_id: threadId };
    switch (cmd.method) {
      case "run.start": {
        if (typeof p.assistant_id !== "string" || !p.assistant_id) {
          return failure(cmd.id, "invalid_argument", "run.start requires an assistant_id");
        }
        const started = await startRun(req, threadId, p);
        return { type: "success", id: cmd.id, result: { run_id: started.run.run_id }, meta };
      }
      case "input.respond": {
        const responses: Params = {};
        if (Array.isArray(p.responses)) {
          for (const r of p.responses) {
            if (!isRecord(r) || typeof r.interrupt_id !== "string") {
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
        if (!pending.length) return failure(cmd.id, "no_such_run", "nothing on this thread waits for input");
        const unknown = Object.keys(responses).find((id) => !pending.includes(id));
        if (unknown) return failure(cmd.id, "no_such_interrupt", `no pending interrupt ${unknown}`);
        const assistant = await lastAssistant(threadId);
        await startRun(req, threadId, { ...p, assistant_id: assistant }, responses);
        return { type: "success", id: cmd.id, result: {}, meta };
      }
      case "state.get": {
        await guard.thread(req, threadId, "threads:read");
        const state = await ctx.threadState.getState(threadId, null, true);
        return {
          type: "success",
          id: cmd.id,
          result: { values: (state as { values?: unknown }).values ?? {} },
          meta,
        };
      }
      default:
        return failure(cmd.id, "unknown_command", `unknown command "${cmd.method}"`);
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
        return await handle(req, threadId, cmd);
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
