// Listener routes (`/v2/listeners`): list, create, get, PATCH, PUT, delete. Only for organizations on the
// self-hosted enterprise plan (403 otherwise, on every listener route); scoped to the request's workspace.
import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { principal, tenantOf } from "../auth.js";
import type { CpContext } from "../../domain/context.js";
import { conflict, forbidden, listenerNotFound, valueError } from "../errors.js";
import type { Listener } from "../../domain/types.js";
import * as S from "./schemas.js";

/** A Listener as the API returns it. */
export const listenerOut = (l: Listener) => ({
  version: l.version ?? null,
  compute_type: l.compute_type,
  compute_id: l.compute_id,
  compute_config: { k8s_namespaces: l.compute_config?.k8s_namespaces ?? null },
  id: l.id,
  created_at: l.created_at,
  updated_at: l.updated_at,
});

/** preHandler of every listener route: listeners need an organization on the self-hosted enterprise plan. */
export async function requireListenerPlan(req: FastifyRequest): Promise<void> {
  const { organization, workspace } = principal(req);
  if (organization.plan !== "self_hosted_enterprise") {
    throw forbidden(
      `Listeners cannot be created for workspace ID '${workspace.id}'. Creating listeners is only allowed ` +
        "for organizations with self-hosted enterprise plans.",
    );
  }
}

export function listenerRoutes(ctx: CpContext): FastifyPluginAsyncZod {
  const { store } = ctx;
  return async (app) => {
    const tags = ["Listeners"];
    app.addHook("preHandler", requireListenerPlan);

    const getOr404 = async (req: FastifyRequest, id: string) => {
      const l = await store.getListener(tenantOf(req), id);
      if (!l) throw listenerNotFound(id);
      return l;
    };

    app.get("/v2/listeners", { schema: { tags, querystring: S.PageQuery } }, async (req) => {
      const { limit, offset } = req.query;
      const rows = await store.listListeners(tenantOf(req), { limit, offset });
      return { resources: rows.map(listenerOut), offset: offset + rows.length };
    });

    app.post("/v2/listeners", { schema: { tags, body: S.ListenerCreate } }, async (req, reply) => {
      const tenant = tenantOf(req);
      const b = req.body;
      const created = await store.createListener({
        id: randomUUID(),
        tenant_id: tenant,
        version: b.version ?? null,
        compute_type: b.compute_type,
        compute_id: b.compute_id,
        compute_config: { k8s_namespaces: b.compute_config.k8s_namespaces ?? null },
      });
      if (created === "conflict") {
        throw conflict(
          `Listener for workspace ID '${tenant}' and compute ID '${b.compute_id}' already exists.`,
        );
      }
      return reply.status(201).send(listenerOut(created));
    });

    app.get("/v2/listeners/:listener_id", { schema: { tags, params: S.ListenerIdParams } }, async (req) =>
      listenerOut(await getOr404(req, req.params.listener_id)),
    );

    app.patch(
      "/v2/listeners/:listener_id",
      { schema: { tags, params: S.ListenerIdParams, body: S.ListenerPatch } },
      async (req) => {
        const id = req.params.listener_id;
        const b = req.body;
        const patch: { version?: string | null; compute_config?: Listener["compute_config"] } = {};
        if (b.version !== undefined) patch.version = b.version;
        if (b.compute_config)
          patch.compute_config = { k8s_namespaces: b.compute_config.k8s_namespaces ?? null };
        const l = await store.updateListener(tenantOf(req), id, patch);
        if (!l) throw listenerNotFound(id);
        return listenerOut(l);
      },
    );

    app.put(
      "/v2/listeners/:listener_id",
      { schema: { tags, params: S.ListenerIdParams, body: S.ListenerPut } },
      async (req) => {
        const id = req.params.listener_id;
        const cur = await getOr404(req, id);
        const b = req.body;
        if (b.compute_type !== undefined && b.compute_type !== cur.compute_type) {
          throw valueError(
            ["body", "compute_type"],
            "compute_type cannot be changed once the listener is created",
            b.compute_type,
          );
        }
        if (b.compute_id !== undefined && b.compute_id !== cur.compute_id) {
          throw valueError(
            ["body", "compute_id"],
            "compute_id cannot be changed once the listener is created",
            b.compute_id,
          );
        }
        const l = await store.updateListener(tenantOf(req), id, {
          version: b.version ?? null,
          compute_config: { k8s_namespaces: b.compute_config.k8s_namespaces ?? null },
        });
        if (!l) throw listenerNotFound(id);
        return listenerOut(l);
      },
    );

    app.delete(
      "/v2/listeners/:listener_id",
      { schema: { tags, params: S.ListenerIdParams } },
      async (req, reply) => {
        const id = req.params.listener_id;
        await getOr404(req, id);
        const assigned = await store.deploymentsFor(id);
        if (assigned.length) {
          throw conflict(
            `Listener ID ${id} still has ${assigned.length} deployment(s) (${assigned.map((d) => d.id).join(", ")}); ` +
              "delete them and let the listener remove them first.",
          );
        }
        await store.deleteListener(tenantOf(req), id);
        return reply.status(204).send();
      },
    );
  };
}
