// Run routes: streamed, waited and background runs (on a thread or stateless), and run reads.
import type { FastifyReply } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { StartedRun } from "../runs/manager.js";
import { SseWriter } from "../streams/sse.js";
import type { ApiContext } from "./context.js";
import { notFound } from "./errors.js";
import * as S from "./schemas.js";

const runPath = (s: StartedRun) =>
  s.run.thread_id ? `/threads/${s.run.thread_id}/runs/${s.run.run_id}` : `/runs/${s.run.run_id}`;

/** Streams a run's events as SSE until the run ends or the client goes away. */
async function streamRun(
  reply: FastifyReply,
  started: StartedRun,
  onDisconnect: "cancel" | "continue",
  sync: () => Promise<void>,
) {
  reply.hijack();
  const res = reply.raw;
  const sse = new SseWriter(res, { "Content-Location": runPath(started) });
  const gone = new AbortController();
  res.on("close", () => {
    if (res.writableFinished) return;
    gone.abort();
    if (onDisconnect === "cancel") started.cancel();
  });
  for await (const ev of started.channel.subscribe(0, gone.signal)) sse.send(ev);
  // The stream ends only once the run's results are durable.
  await sync().catch(() => {});
  sse.end();
}

export function runRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { runs, storage } = ctx;
  return async (app) => {
    const tags = ["Runs"];
    const stateful = { tags, params: S.ThreadIdParams, body: S.RunCreateStateful };

    app.post("/threads/:thread_id/runs/stream", { schema: stateful }, async (req, reply) => {
      const started = await runs.createStateful(req.params.thread_id, req.body);
      await streamRun(reply, started, req.body.on_disconnect, () => storage.sync());
    });

    app.post("/threads/:thread_id/runs/wait", { schema: stateful }, async (req, reply) => {
      const started = await runs.createStateful(req.params.thread_id, req.body);
      const result = await started.done;
      return reply.header("Content-Location", runPath(started)).send(result.output);
    });

    app.post("/threads/:thread_id/runs", { schema: stateful }, async (req, reply) => {
      const started = await runs.createStateful(req.params.thread_id, req.body);
      return reply.header("Content-Location", runPath(started)).send(started.run);
    });

    app.post("/runs/stream", { schema: { tags, body: S.RunCreateStateless } }, async (req, reply) => {
      const started = await runs.createStateless(req.body);
      await streamRun(reply, started, req.body.on_disconnect, () => storage.sync());
    });

    app.post("/runs/wait", { schema: { tags, body: S.RunCreateStateless } }, async (req, reply) => {
      const started = await runs.createStateless(req.body);
      const result = await started.done;
      return reply.header("Content-Location", runPath(started)).send(result.output);
    });

    app.get(
      "/threads/:thread_id/runs",
      { schema: { tags, params: S.ThreadIdParams, querystring: S.RunListQuery } },
      async (req) => {
        if (!(await storage.threads.get(req.params.thread_id))) {
          throw notFound(`Thread "${req.params.thread_id}" not found`);
        }
        return storage.runs.list(req.params.thread_id, req.query);
      },
    );

    app.get("/threads/:thread_id/runs/:run_id", { schema: { tags, params: S.RunIdParams } }, async (req) => {
      const run = await storage.runs.get(req.params.thread_id, req.params.run_id);
      if (!run) throw notFound(`Run "${req.params.run_id}" not found in thread "${req.params.thread_id}"`);
      return run;
    });
  };
}
