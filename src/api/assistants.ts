// Assistant routes: CRUD, versions, search/count, and the graph, schema and subgraph views.
import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { drawableGraph, schemasOf } from "../graphs/introspect.js";
import type { Assistant } from "../storage/types.js";
import type { ApiContext } from "./context.js";
import { pick } from "./context.js";
import { conflict, notFound } from "./errors.js";
import * as S from "./schemas.js";

export function assistantRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { storage, graphs, guard } = ctx;
  const load = (req: FastifyRequest, id: string, event = "assistants:read"): Promise<Assistant> =>
    guard.assistant(req, id, event);
  const schemas = schemasOf(graphs);
  const graphFor = async (a: Assistant) => {
    if (!graphs.has(a.graph_id)) throw notFound(`Graph "${a.graph_id}" is not loaded`);
    return graphs.get(a.graph_id, { configurable: { ...((a.config.configurable as object) ?? {}) } });
  };

  return async (app) => {
    const tags = ["Assistants"];
    app.post("/assistants", { schema: { tags, body: S.AssistantCreate } }, async (req) => {
      const b = req.body;
      const value = { ...b, metadata: { ...(b.metadata ?? {}) } };
      await guard.filter(req, "assistants:create", value);
      b.metadata = value.metadata;
      if (!graphs.has(b.graph_id)) throw notFound(`Graph "${b.graph_id}" not found`);
      const id = b.assistant_id ?? randomUUID();
      const created = await storage.assistants.create({
        assistant_id: id,
        graph_id: b.graph_id,
        config: b.config ?? {},
        context: b.context ?? {},
        metadata: b.metadata ?? {},
        name: b.name ?? "Untitled",
        description: b.description ?? null,
      });
      if (created) return created;
      // An existing id is answered as its GET would be: another user's assistant is a 404, never returned.
      const existing = await guard.assistant(req, id, "assistants:read");
      if (b.if_exists === "do_nothing") return existing;
      throw conflict(`Assistant "${id}" already exists`);
    });

    app.post("/assistants/search", { schema: { tags, body: S.AssistantSearch } }, async (req) => {
      const authMetadata = await guard.filter(req, "assistants:search", { ...req.body });
      const rows = await storage.assistants.search({ ...req.body, authMetadata });
      return rows.map((a) => pick(a, req.body.select));
    });

    app.post("/assistants/count", { schema: { tags, body: S.AssistantCount } }, async (req) => {
      const authMetadata = await guard.filter(req, "assistants:search", { ...req.body });
      return storage.assistants.count({ ...req.body, authMetadata });
    });

    app.get("/assistants/:assistant_id", { schema: { tags, params: S.AssistantIdParams } }, async (req) =>
      load(req, req.params.assistant_id),
    );

    app.patch(
      "/assistants/:assistant_id",
      { schema: { tags, params: S.AssistantIdParams, body: S.AssistantPatch } },
      async (req) => {
        const a = await load(req, req.params.assistant_id, "assistants:update");
        if (req.body.graph_id && !graphs.has(req.body.graph_id))
          throw notFound(`Graph "${req.body.graph_id}" not found`);
        return (await storage.assistants.patch(a.assistant_id, req.body))!;
      },
    );

    app.delete(
      "/assistants/:assistant_id",
      { schema: { tags, params: S.AssistantIdParams, querystring: S.AssistantDeleteQuery } },
      async (req, reply) => {
        const a = await load(req, req.params.assistant_id, "assistants:delete");
        await storage.assistants.delete(a.assistant_id);
        // With delete_threads, the threads whose metadata names this assistant go too (as officially).
        if (req.query.delete_threads) {
          const metadata = { assistant_id: a.assistant_id };
          for (;;) {
            const threads = await storage.threads.search({ metadata, limit: 1000, offset: 0 });
            for (const t of threads) {
              if (await storage.threads.delete(t.thread_id)) ctx.broker.dropThread(t.thread_id);
            }
            if (threads.length < 1000) break;
          }
        }
        // The ids of the assistants deleted, as the official server answers.
        return reply.status(200).send([a.assistant_id]);
      },
    );

    app.post(
      "/assistants/:assistant_id/versions",
      { schema: { tags, params: S.AssistantIdParams, body: S.AssistantVersions } },
      async (req) => {
        const a = await load(req, req.params.assistant_id);
        return storage.assistants.versions(a.assistant_id, req.body);
      },
    );

    app.post(
      "/assistants/:assistant_id/latest",
      { schema: { tags, params: S.AssistantIdParams, body: S.AssistantLatest } },
      async (req) => {
        const a = await load(req, req.params.assistant_id, "assistants:update");
        const updated = await storage.assistants.setLatest(a.assistant_id, req.body.version);
        if (!updated)
          throw notFound(`Version ${req.body.version} of assistant "${a.assistant_id}" not found`);
        return updated;
      },
    );

    app.get(
      "/assistants/:assistant_id/graph",
      { schema: { tags, params: S.AssistantIdParams, querystring: S.GraphQuery } },
      async (req) => drawableGraph(await graphFor(await load(req, req.params.assistant_id)), req.query.xray),
    );

    app.get(
      "/assistants/:assistant_id/schemas",
      { schema: { tags, params: S.AssistantIdParams } },
      async (req) => {
        const a = await load(req, req.params.assistant_id);
        return { graph_id: a.graph_id, ...(await schemas.graph(a.graph_id, await graphFor(a))) };
      },
    );

    app.get(
      "/assistants/:assistant_id/subgraphs",
      { schema: { tags, params: S.AssistantIdParams, querystring: S.SubgraphQuery } },
      async (req) => {
        const a = await load(req, req.params.assistant_id);
        return schemas.subgraphs(a.graph_id, await graphFor(a), undefined, req.query.recurse);
      },
    );

    app.get(
      "/assistants/:assistant_id/subgraphs/:namespace",
      {
        schema: {
          tags,
          params: S.AssistantIdParams.extend({ namespace: S.AssistantIdParams.shape.assistant_id }),
          querystring: S.SubgraphQuery,
        },
      },
      async (req) => {
        const a = await load(req, req.params.assistant_id);
        return schemas.subgraphs(a.graph_id, await graphFor(a), req.params.namespace, req.query.recurse);
      },
    );
  };
}
