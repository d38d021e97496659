// Store routes: put, get and delete items, search by namespace prefix and filter, list namespaces. Under custom
// auth, the filter a store handler returns (req.authFilter) scopes each of them (store-auth.ts).
import type { Item } from "@langchain/langgraph-checkpoint";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { ApiContext } from "./context.js";
import { unprocessable } from "./errors.js";
import * as S from "./schemas.js";
import { checkExisting, checkWritable, itemMatches, scanMatching } from "./store-auth.js";

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
      const filter = req.authFilter;
      if (filter) {
        checkExisting(
          filter,
          await asClientError(() => store.getItem(b.namespace, b.key, { refreshTtl: false })),
        );
        checkWritable(filter, b.namespace, b.key, b.value);
      }
      await asClientError(() =>
        store.putItem(b.namespace, b.key, b.value, { ttl: b.ttl ?? null, index: b.index }),
      );
      return reply.status(204).send();
    });

    app.delete("/store/items", { schema: { tags, body: S.StoreDelete } }, async (req, reply) => {
      const { namespace, key } = req.body;
      const filter = req.authFilter;
      if (filter) {
        const existing = await asClientError(() => store.getItem(namespace, key, { refreshTtl: false }));
        checkExisting(filter, existing);
        if (!existing) checkWritable(filter, namespace, key, undefined);
      }
      await asClientError(() => store.putItem(namespace, key, null, {}));
      return reply.status(204).send();
    });

    // The SDK sends the namespace as one dot-joined value; a repeated parameter is read too.
    app.get("/store/items", { schema: { tags, querystring: S.StoreGetQuery } }, async (req) => {
      const raw = req.query.namespace ?? [];
      const namespace = (Array.isArray(raw) ? raw : raw.split(".")).filter((l) => l !== "");
      const refreshTtl = req.query.refresh_ttl ?? true;
      const filter = req.authFilter;
      // Under a filter the item is read first without touching its TTL: another user's item stays as it was.
      const item = await asClientError(() =>
        store.getItem(namespace, req.query.key, { refreshTtl: refreshTtl && !filter }),
      );
      checkExisting(filter, item);
      if (item && filter && refreshTtl) await store.refreshTtl([item]);
      return item ? itemOut(item) : null;
    });

    app.post("/store/items/search", { schema: { tags, body: S.StoreSearch } }, async (req) => {
      const b = req.body;
      const filter = req.authFilter;
      const refreshTtl = b.refresh_ttl ?? true;
      const search = (offset: number, limit: number, refresh: boolean) =>
        asClientError(() =>
          store.searchItems(
            {
              namespacePrefix: b.namespace_prefix ?? [],
              filter: b.filter ?? undefined,
              limit,
              offset,
              query: b.query ?? undefined,
            },
            { refreshTtl: refresh },
          ),
        );
      if (!filter) return { items: (await search(b.offset, b.limit, refreshTtl)).map(itemOut) };
      const items = await scanMatching(
        (offset, limit) => search(offset, limit, false),
        (i) => itemMatches(filter, i.namespace, i.key, i.value),
        b.offset,
        b.limit,
      );
      if (refreshTtl) await store.refreshTtl(items);
      return { items: items.map(itemOut) };
    });

    app.post("/store/namespaces", { schema: { tags, body: S.StoreNamespaces } }, async (req) => {
      const b = req.body;
      const list = (offset: number, limit: number) =>
        store.listNamespacesPage({
          prefix: b.prefix,
          suffix: b.suffix,
          maxDepth: b.max_depth,
          limit,
          offset,
        });
      const filter = req.authFilter;
      if (!filter) return { namespaces: await list(b.offset, b.limit) };
      const visible = (ns: string[]) => itemMatches(filter, ns, undefined, undefined);
      return { namespaces: await scanMatching(list, visible, b.offset, b.limit) };
    });
  };
}
