// Thread routes: create (with supersteps), read, patch, delete, search, count, copy, state and history.
import { randomUUID } from "node:crypto";
import { threadStreamFilter } from "../runs/stream-modes.js";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { Json, Thread } from "../storage/types.js";
import type { ApiContext } from "./context.js";
import { pick } from "./context.js";
import { lastEventId, streamLog } from "./runs.js";
import { conflict, notFound } from "./errors.js";
import { metadataMatches } from "../auth/auth.js";
import * as S from "./schemas.js";

/** The Thread as the API returns it (values {} for a thread without state). */
export const threadOut = (t: Thread) => ({ ...t, values: t.values ?? {} });

export function threadRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { storage, threadState, runs, guard } = ctx;
  const guardAs = (event: string) => async (req: FastifyRequest) => {
    await guard.thread(req, (req.params as { thread_id: string }).thread_id, event);
  };
  const read = guardAs("threads:read");
  const update = guardAs("threads:update");
  return async (app) => {
    const tags = ["Threads"];
    app.post("/threads", { schema: { tags, body: S.ThreadCreate } }, async (req) => {
      const b = req.body;
      const id = b.thread_id ?? randomUUID();
      // Handlers see (and may add to) the metadata; the owner's identity is recorded under custom auth.
      const value = { thread_id: id, metadata: { ...(b.metadata ?? {}) }, if_exists: b.if_exists };
      const createFilter = await guard.auth.authorize(req.user, "threads:create", value);
      b.metadata = { ...value.metadata, ...guard.owner(req) };
      const graphId =
        b.graph_id ?? (typeof b.metadata?.graph_id === "string" ? b.metadata.graph_id : undefined);
      if (b.supersteps?.length && !graphId) {
        throw notFound("graph_id: supersteps need a graph; give graph_id or metadata.graph_id");
      }
      const metadata = { ...(b.metadata ?? {}), ...(graphId ? { graph_id: graphId } : {}) };
      const ttl = b.ttl ?? ctx.defaultTtl ?? null;
      const created = await storage.threads.create({ thread_id: id, metadata, ttl });
      if (!created) {
        // An existing id is answered as its GET would be: another user's thread does not exist (404, with
        // the body of a missing one), neither for do_nothing (which would return it) nor for raise (a 409
        // would say it exists).
        const existing = await guard.visibleThread(req, id, "threads:read");
        if (!existing || !metadataMatches(existing.metadata, createFilter)) {
          throw notFound(`Thread "${id}" not found`);
        }
        if (b.if_exists === "do_nothing") return threadOut(existing);
        throw conflict(`Thread "${id}" already exists`);
      }
      if (b.supersteps?.length) {
        try {
          await threadState.applySupersteps(id, graphId!, b.supersteps);
        } catch (e) {
          await storage.threads.delete(id);
          throw e;
        }
        return threadOut((await storage.threads.get(id))!);
      }
      return threadOut(created);
    });

    app.post("/threads/search", { schema: { tags, body: S.ThreadSearch } }, async (req) => {
      const authMetadata = await guard.filter(req, "threads:search", { ...req.body });
      const rows = await storage.threads.search({ ...req.body, authMetadata });
      return rows.map((t) => pick(threadOut(t), req.body.select));
    });

    app.post("/threads/count", { schema: { tags, body: S.ThreadCount } }, async (req) => {
      const authMetadata = await guard.filter(req, "threads:search", { ...req.body });
      return storage.threads.count({ ...req.body, authMetadata });
    });

    app.get("/threads/:thread_id", { schema: { tags, params: S.ThreadIdParams } }, async (req) =>
      threadOut(await guard.thread(req, req.params.thread_id, "threads:read")),
    );

    app.patch(
      "/threads/:thread_id",
      { schema: { tags, params: S.ThreadIdParams, body: S.ThreadPatch } },
      async (req) => {
        await guard.thread(req, req.params.thread_id, "threads:update", {
          metadata: req.body.metadata ?? {},
        });
        if (req.body.ttl !== undefined) await storage.threads.setTtl(req.params.thread_id, req.body.ttl);
        const t = await storage.threads.patchMetadata(req.params.thread_id, req.body.metadata ?? {});
        if (!t) throw notFound(`Thread "${req.params.thread_id}" not found`);
        return threadOut(t);
      },
    );

    app.delete("/threads/:thread_id", { schema: { tags, params: S.ThreadIdParams } }, async (req, reply) => {
      const id = req.params.thread_id;
      await guard.thread(req, id, "threads:delete");
      if (await runs.isBusy(id)) throw conflict(`Thread "${id}" is busy with a run; cancel it first`);
      if (!(await storage.threads.delete(id))) throw notFound(`Thread "${id}" not found`);
      ctx.broker.dropThread(id);
      return reply.status(200).send({});
    });

    app.post("/threads/prune", { schema: { tags, body: S.ThreadPrune } }, async (req) => {
      let pruned = 0;
      for (const id of req.body.thread_ids) {
        // Another user's thread is skipped as a missing one is: the count says nothing about it.
        if (!(await guard.visibleThread(req, id, "threads:delete")) || (await runs.isBusy(id))) continue;
        if (req.body.strategy === "keep_latest") await storage.threads.keepLatest(id);
        else if (await storage.threads.delete(id)) ctx.broker.dropThread(id);
        pruned++;
      }
      return { pruned_count: pruned };
    });

    app.get(
      "/threads/:thread_id/storage",
      { schema: { tags, params: S.ThreadIdParams }, preHandler: read },
      async (req) => storage.threads.storageStats(req.params.thread_id),
    );

    app.post("/threads/:thread_id/copy", { schema: { tags, params: S.ThreadIdParams } }, async (req) => {
      await guard.thread(req, req.params.thread_id, "threads:read");
      const newId = randomUUID();
      // The copy is the caller's: what the create handler adds to metadata (an owner) goes onto it.
      const value = { thread_id: newId, metadata: {} as Record<string, unknown> };
      await guard.filter(req, "threads:create", value);
      // Its metadata names its own id as `thread_id`, as the official copy's does.
      const owner = { ...(value.metadata as Json), thread_id: newId, ...guard.owner(req) };
      const t = await storage.threads.copy(req.params.thread_id, newId, owner);
      if (!t) throw notFound(`Thread "${req.params.thread_id}" not found`);
      return threadOut(t);
    });

    app.get(
      "/threads/:thread_id/state",
      { schema: { tags, params: S.ThreadIdParams, querystring: S.StateQuery }, preHandler: read },
      async (req) => threadState.stateJson(req.params.thread_id, null, req.query.subgraphs),
    );

    app.get(
      "/threads/:thread_id/state/:checkpoint_id",
      {
        schema: {
          tags,
          params: S.ThreadIdParams.extend({ checkpoint_id: S.Uuid }),
          querystring: S.StateQuery,
        },
        preHandler: read,
      },
      async (req) =>
        threadState.stateJson(
          req.params.thread_id,
          { checkpoint_id: req.params.checkpoint_id },
          req.query.subgraphs,
        ),
    );

    app.post(
      "/threads/:thread_id/state/checkpoint",
      { schema: { tags, params: S.ThreadIdParams, body: S.StateCheckpointBody }, preHandler: read },
      async (req) => threadState.stateJson(req.params.thread_id, req.body.checkpoint, req.body.subgraphs),
    );

    app.post(
      "/threads/:thread_id/state",
      { schema: { tags, params: S.ThreadIdParams, body: S.StateUpdate }, preHandler: update },
      async (req) => threadState.updateState(req.params.thread_id, req.body),
    );

    app.post(
      "/threads/:thread_id/history",
      { schema: { tags, params: S.ThreadIdParams, body: S.HistoryBody }, preHandler: read },
      async (req) => threadState.historyJson(req.params.thread_id, req.body),
    );

    app.get(
      "/threads/:thread_id/history",
      { schema: { tags, params: S.ThreadIdParams, querystring: S.HistoryQuery }, preHandler: read },
      async (req) => threadState.historyJson(req.params.thread_id, req.query),
    );

    app.get(
      "/threads/:thread_id/stream",
      { schema: { tags, params: S.ThreadIdParams, querystring: S.ThreadStreamQuery }, preHandler: read },
      async (req, reply) => {
        const id = req.params.thread_id;
        const asked = [req.query.stream_modes ?? [], req.query.stream_mode ?? []].flat();
        const keep = threadStreamFilter(new Set(asked.length ? asked : ["run_modes"]));
        const log = ctx.broker.thread(id);
        const last = lastEventId(req);
        // Open until the client leaves (or the thread is deleted); Last-Event-ID resumes after that event.
        await streamLog(reply, log, last === undefined ? "next" : last + 1, {
          keep,
          clients: ctx.metrics.streamClients,
        });
      },
    );
  };
}
