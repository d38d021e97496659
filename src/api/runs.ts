// Run routes: streamed, waited and background runs (on a thread or stateless), batch, join, cancel, reads.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { StartedRun } from "../runs/service.js";
import type { RunBody } from "../runs/schemas.js";
import { isResumable } from "../runs/kwargs.js";
import { joinFilter } from "../runs/stream-modes.js";
import { serialize, type EventSource, type StreamEvent, type StreamFrom } from "../streams/channel.js";
import { SseWriter } from "../streams/sse.js";
import type { Json, Run } from "../storage/types.js";
import type { ApiContext } from "./context.js";
import { conflict, notFound, unprocessable } from "./errors.js";
import * as S from "./schemas.js";

const runPath = (s: StartedRun) =>
  s.run.thread_id ? `/threads/${s.run.thread_id}/runs/${s.run.run_id}` : `/runs/${s.run.run_id}`;

/** The Last-Event-ID request header as a number, or undefined. "-" and "-1" mean "from the start". */
export function lastEventId(req: FastifyRequest): number | undefined {
  const raw = req.headers["last-event-id"];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (v === undefined || v === "") return undefined;
  if (v === "-" || v === "-1") return -1;
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 ? n : undefined;
}

/**
 * Streams a log as SSE from `fromId` until it closes or the client goes away. `keep` filters events;
 * `onGone` runs when the client disconnects first; `beforeEnd` runs before the response ends.
 */
export async function streamLog(
  reply: FastifyReply,
  log: EventSource,
  fromId: StreamFrom,
  opts: {
    headers?: Record<string, string>;
    keep?: (ev: StreamEvent) => boolean;
    onGone?: () => void;
    beforeEnd?: () => Promise<void>;
    clients?: { inc(): void; dec(): void };
    /** Sent before the log's events. */
    first?: StreamEvent;
  } = {},
): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  // Headers hooks set before the hijack (CORS) go out with the stream's head.
  const sse = new SseWriter(res, { ...reply.getHeaders(), ...opts.headers });
  opts.clients?.inc();
  res.once("close", () => opts.clients?.dec());
  const gone = new AbortController();
  res.on("close", () => {
    if (res.writableFinished) return;
    gone.abort();
    opts.onGone?.();
  });
  if (opts.first) await sse.send(opts.first);
  // Backpressure: the next event is pulled only once the client has room for it (see SseWriter).
  for await (const ev of log.subscribe(fromId, gone.signal)) {
    if (!opts.keep || opts.keep(ev)) await sse.send(ev);
  }
  await opts.beforeEnd?.().catch(() => {});
  sse.end();
}

/**
 * A run's `metadata` event, as its log holds it (its first event); built from the run when the log no longer
 * holds it (trimmed).
 */
async function runMetadata(log: EventSource, run: Run): Promise<Omit<StreamEvent, "id">> {
  const stop = new AbortController();
  let original: StreamEvent | undefined;
  for await (const ev of log.subscribe(0, stop.signal)) {
    original = ev;
    break;
  }
  stop.abort();
  if (original?.event === "metadata") return { event: "metadata", data: original.data };
  return { event: "metadata", data: serialize({ run_id: run.run_id, attempt: 1 }) };
}

/**
 * Metadata of a thread a run may create (if_not_exists "create", on_completion "keep"): what the create
 * handler adds (an owner) and service_auth_user_id, so the thread is the caller's like one made by POST.
 */
async function newThreadOwner(ctx: ApiContext, req: FastifyRequest, threadId: string | null) {
  const { guard } = ctx;
  if (!guard.auth.custom || !req.user) return guard.owner(req);
  const value = { thread_id: threadId, metadata: {} as Record<string, unknown> };
  await guard.filter(req, "threads:create", value);
  return { ...(value.metadata as Json), ...guard.owner(req) };
}

/** A run on a thread: the user must be allowed to create runs there (a missing thread may be created). */
export async function createRunOnThread(
  ctx: ApiContext,
  req: FastifyRequest,
  threadId: string,
  body: RunBody,
): Promise<StartedRun> {
  const { guard } = ctx;
  const value = { thread_id: threadId, assistant_id: body.assistant_id, metadata: body.metadata ?? {} };
  const existing = await guard.maybeThread(req, threadId, "threads:create_run", value);
  // The graph sees who started the run; nothing the client sent under those keys.
  body.config = guard.runConfig(req, body.config, { headers: true });
  const owner =
    existing || body.if_not_exists !== "create" ? guard.owner(req) : await newThreadOwner(ctx, req, threadId);
  return ctx.runs.createStateful(threadId, body, owner, existing ?? undefined);
}

export function runRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { runs, storage, guard } = ctx;
  const createOnThread = (req: FastifyRequest, threadId: string, body: RunBody) =>
    createRunOnThread(ctx, req, threadId, body);
  const createStateless = async (req: FastifyRequest, body: S.RunCreateStatelessT) => {
    await guard.filter(req, "threads:create_run", { thread_id: null, assistant_id: body.assistant_id });
    body.config = guard.runConfig(req, body.config, { headers: true });
    const owner = body.on_completion === "keep" ? await newThreadOwner(ctx, req, null) : guard.owner(req);
    return runs.createStateless(body, owner);
  };
  const guardAs = (event: string) => async (req: FastifyRequest) => {
    await guard.thread(req, (req.params as { thread_id: string }).thread_id, event);
  };
  const read = guardAs("threads:read");
  const streamRun = (reply: FastifyReply, started: StartedRun, onDisconnect: "cancel" | "continue") =>
    streamLog(reply, started.channel, 0, {
      headers: { "Content-Location": runPath(started) },
      onGone: () => onDisconnect === "cancel" && started.cancel(),
      // The stream ends only once the run's results are durable.
      beforeEnd: () => storage.sync(),
      clients: ctx.metrics.streamClients,
    });

  return async (app) => {
    const tags = ["Runs"];
    const stateful = { tags, params: S.ThreadIdParams, body: S.RunCreateStateful };

    app.post("/threads/:thread_id/runs/stream", { schema: stateful }, async (req, reply) => {
      const started = await createOnThread(req, req.params.thread_id, req.body);
      await streamRun(reply, started, req.body.on_disconnect);
    });

    app.post("/threads/:thread_id/runs/wait", { schema: stateful }, async (req, reply) => {
      const started = await createOnThread(req, req.params.thread_id, req.body);
      const result = await started.done;
      return reply.header("Content-Location", runPath(started)).send(result.output);
    });

    app.post("/threads/:thread_id/runs", { schema: stateful }, async (req, reply) => {
      const started = await createOnThread(req, req.params.thread_id, req.body);
      return reply.header("Content-Location", runPath(started)).send(started.run);
    });

    app.post("/runs/stream", { schema: { tags, body: S.RunCreateStateless } }, async (req, reply) => {
      const started = await createStateless(req, req.body);
      await streamRun(reply, started, req.body.on_disconnect);
    });

    app.post("/runs/wait", { schema: { tags, body: S.RunCreateStateless } }, async (req, reply) => {
      const started = await createStateless(req, req.body);
      const result = await started.done;
      return reply.header("Content-Location", runPath(started)).send(result.output);
    });

    app.post("/runs", { schema: { tags, body: S.RunCreateStateless } }, async (req, reply) => {
      const started = await createStateless(req, req.body);
      return reply.header("Content-Location", runPath(started)).send(started.run);
    });

    app.post("/runs/batch", { schema: { tags, body: S.RunBatch } }, async (req) => {
      const out = [];
      for (const body of req.body) out.push((await createStateless(req, body)).run);
      return out;
    });

    app.get(
      "/threads/:thread_id/runs",
      { schema: { tags, params: S.ThreadIdParams, querystring: S.RunListQuery }, preHandler: read },
      async (req) => storage.runs.list(req.params.thread_id, req.query),
    );

    app.get(
      "/threads/:thread_id/runs/:run_id",
      { schema: { tags, params: S.RunIdParams }, preHandler: read },
      async (req) => {
        const run = await storage.runs.get(req.params.thread_id, req.params.run_id);
        if (!run) throw notFound(`Run "${req.params.run_id}" not found in thread "${req.params.thread_id}"`);
        return run;
      },
    );

    app.delete(
      "/threads/:thread_id/runs/:run_id",
      // As the official server: deleting a run is a threads:delete action on its thread (404 when hidden).
      { schema: { tags, params: S.RunIdParams }, preHandler: guardAs("threads:delete") },
      async (req, reply) => {
        const { thread_id, run_id } = req.params;
        const run = await storage.runs.get(thread_id, run_id);
        if (!run) throw notFound(`Run "${run_id}" not found in thread "${thread_id}"`);
        if (run.status === "pending" || run.status === "running")
          throw conflict(`Run "${run_id}" is ${run.status}; cancel it before deleting it`);
        await storage.runs.delete(run_id);
        return reply.status(200).send({});
      },
    );

    app.get(
      "/threads/:thread_id/runs/:run_id/join",
      { schema: { tags, params: S.RunIdParams, querystring: S.JoinQuery }, preHandler: read },
      async (req) => runs.join(req.params.thread_id, req.params.run_id),
    );

    app.post(
      "/threads/:thread_id/runs/:run_id/cancel",
      {
        schema: { tags, params: S.RunIdParams, querystring: S.CancelQuery },
        preHandler: guardAs("threads:update"),
      },
      async (req, reply) => {
        await runs.cancel(req.params.thread_id, req.params.run_id, req.query);
        return reply.status(200).send({});
      },
    );

    app.post(
      "/runs/cancel",
      { schema: { tags, body: S.CancelManyBody, querystring: S.CancelManyQuery } },
      async (req, reply) => {
        const b = req.body;
        if (!b.run_ids?.length && !b.status && !b.thread_id) {
          // Bad input (nothing says which runs), not a conflict with the state of any run.
          throw unprocessable("give run_ids, a status, or a thread_id to say which runs to cancel", "body");
        }
        if (b.thread_id) await guard.thread(req, b.thread_id, "threads:update");
        else if (guard.auth.custom && req.user) {
          await guard.filter(req, "threads:update", { run_ids: b.run_ids, status: b.status });
          // Across threads, only the runs the caller may cancel one by one: those of threads the update
          // handler lets them see, and their own thread-less runs. Others' runs are skipped as unknown ids are.
          const statuses = b.status === "pending" ? ["pending"] : b.status === "running" ? ["running"] : null;
          const wanted = b.run_ids?.length ? new Set(b.run_ids) : null;
          const allowed: string[] = [];
          for (const run of await storage.runs.inFlight()) {
            if (wanted ? !wanted.has(run.run_id) : statuses && !statuses.includes(run.status)) continue;
            if (await guard.mayActOnRun(req, run, "threads:update")) allowed.push(run.run_id);
          }
          if (allowed.length) await runs.cancelMany({ run_ids: allowed, action: req.query.action });
          return reply.status(204).send();
        }
        await runs.cancelMany({ ...b, action: req.query.action });
        return reply.status(204).send();
      },
    );

    app.get(
      "/threads/:thread_id/runs/:run_id/stream",
      { schema: { tags, params: S.RunIdParams, querystring: S.JoinStreamQuery }, preHandler: read },
      async (req, reply) => {
        const { thread_id, run_id } = req.params;
        const run = await storage.runs.get(thread_id, run_id);
        if (!run) throw notFound(`Run "${run_id}" not found in thread "${thread_id}"`);
        const log = runs.runLog(run);
        const resumable = isResumable(run.kwargs);
        const last = lastEventId(req);
        // Without stream_resumable, a join sees only what comes after it (seed §4); with it, Last-Event-ID
        // resumes right after that event and -1 replays everything kept.
        let from: StreamFrom = resumable && last !== undefined ? last + 1 : "next";
        const modes = req.query.stream_mode;
        const keep = joinFilter(modes === undefined ? undefined : [modes].flat());
        if (!log) {
          // Finished and not kept: an empty stream that ends at once.
          reply.hijack();
          new SseWriter(reply.raw, reply.getHeaders()).end();
          return;
        }
        // A join that starts after the run's first event gets its `metadata` event first all the same (as from
        // the official server), with the id of the newest event: a resume from it goes on after what was there.
        let first: StreamEvent | undefined;
        if (from === "next") {
          const head = await log.head();
          if (head >= 0) first = { ...(await runMetadata(log, run)), id: head };
          from = head + 1;
        }
        await streamLog(reply, log, from, {
          first,
          keep,
          clients: ctx.metrics.streamClients,
          onGone: () =>
            req.query.cancel_on_disconnect &&
            // The run may have ended (or been deleted) meanwhile: nothing is left to cancel then.
            void runs.cancel(thread_id, run_id, { wait: false, action: "interrupt" }).catch(() => {}),
        });
      },
    );
  };
}
