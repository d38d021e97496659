// Store routes: put, get and delete items, search by namespace prefix and filter, list namespaces.
import type { Item } from "@langchain/langgraph-checkpoint";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { ApiContext } from "./context.js";
import { unprocessable } from "./errors.js";
import * as S from "./schemas.js";

const itemOut = (i: Item & { score?: number }) => ({
  namespace: i.namespace,
  key: i.key,
  value: i.value,
  created_at: new Date(i.createdAt).toISOString(),
  updated_at: new Date(i.updatedAt).toISOString(),
  ...(i.score !== undefined ? { score: i.score } : {}),
});

/** The store's own errors (a bad namespace, a query without an index) are the client's: 422. */
async function asClientError<T>(p: () => Promise<T>): Promise<T> {
  try {
    return await p();
  } catch (e) {
    throw unprocessable((e as Error).message);
  }
}

export function storeRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { store } = ctx.storage;
  return async (app) => {
    const tags = ["Store"];
    app.put("/store/items", { schema: { tags, body: S.StorePut } }, async (req, reply) => {
      const b = req.body;
      await asClientError(() =>
        store.putItem(b.namespace, b.key, b.value, { ttl: b.ttl ?? null, index: b.index }),
      );
      return reply.status(204).send();
    });

    app.delete("/store/items", { schema: { tags, body: S.StoreDelete } }, async (req, reply) => {
      await asClientError(() => store.putItem(req.body.namespace, req.body.key, null, {}));
      return reply.status(204).send();
    });

    // The SDK sends the namespace as one dot-joined value; a repeated parameter is read too.
    app.get("/store/items", { schema: { tags, querystring: S.StoreGetQuery } }, async (req) => {
      const raw = req.query.namespace ?? [];
      const namespace = (Array.isArray(raw) ? raw : raw.split(".")).filter((l) => l !== "");
      const item = await asClientError(() =>
        store.getItem(namespace, req.query.key, { refreshTtl: req.query.refresh_ttl ?? true }),
      );
      return item ? itemOut(item) : null;
    });

    app.post("/store/items/search", { schema: { tags, body: S.StoreSearch } }, async (req) => {
      const b = req.body;
      const items = await asClientError(() =>
        store.searchItems(
          {
            namespacePrefix: b.namespace_prefix ?? [],
            filter: b.filter ?? undefined,
            limit: b.limit,
            offset: b.offset,
            query: b.query ?? undefined,
          },
          { refreshTtl: b.refresh_ttl ?? true },
        ),
      );
      return { items: items.map(itemOut) };
    });

    app.post("/store/namespaces", { schema: { tags, body: S.StoreNamespaces } }, async (req) => {
      const b = req.body;
      const namespaces = await store.listNamespacesPage({
        prefix: b.prefix,
        suffix: b.suffix,
        maxDepth: b.max_depth,
        limit: b.limit,
        offset: b.offset,
      });
      return { namespaces };
    });
  };
}
