// Deployment routes (`/v2/deployments`): list, create, bulk delete, get, PATCH, delete; scoped to the
// request's workspace (another workspace's deployment is 404 like a missing one).
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { principal, tenantOf } from "../auth.js";
import type { CpContext } from "../../domain/context.js";
import {
  createDeployment,
  deleteDeployments,
  deploymentOut,
  patchDeployment,
} from "../../domain/deployments.js";
import { deploymentNotFound, forbidden } from "../errors.js";
import type { DeploymentStatus } from "../../domain/types.js";
import * as S from "./schemas.js";

export function deploymentRoutes(ctx: CpContext): FastifyPluginAsyncZod {
  const { store } = ctx;
  return async (app) => {
    const tags = ["Deployments"];

    /**
     * Seed §1/§8: deploying from the command line needs an organization on the plus plan or above. A command
     * line is `hangar deploy` (it sends `X-Hangar-Client: cli`) or any client deploying an `internal_source` or
     * `internal_docker` revision, the sources only the deploy commands make (the official CLI's `deploy`).
     */
    const checkCliPlan = (req: FastifyRequest, source: string | null | undefined) => {
      if (
        req.headers["x-hangar-client"] !== "cli" &&
        source !== "internal_source" &&
        source !== "internal_docker"
      )
        return;
      const { organization, workspace } = principal(req);
      if (organization.plan === "free") {
        throw forbidden(
          `Deploying from the command line needs an organization on the plus plan or above; ` +
            `workspace ID '${workspace.id}' belongs to organization '${organization.name}' on the free plan.`,
        );
      }
    };

    /** The request workspace's deployment, or 404. */
    const getOr404 = async (req: FastifyRequest, id: string) => {
      const d = await store.getDeployment(tenantOf(req), id);
      if (!d) throw deploymentNotFound(id);
      return d;
    };

    app.get("/v2/deployments", { schema: { tags, querystring: S.DeploymentListQuery } }, async (req) => {
      const q = req.query;
      const rows = await store.listDeployments(tenantOf(req), {
        limit: q.limit,
        offset: q.offset,
        name_contains: q.name_contains || undefined,
        deployment_type: q.deployment_type,
        deployment_ids: q.deployment_ids,
        status: (q.status || undefined) as DeploymentStatus | undefined,
      });
      return { resources: rows.map(deploymentOut), offset: q.offset + rows.length };
    });

    app.post("/v2/deployments", { schema: { tags, body: S.DeploymentCreate } }, async (req, reply) => {
      checkCliPlan(req, req.body.source);
      const d = await createDeployment(ctx, tenantOf(req), req.body);
      return reply.status(201).send(deploymentOut(d));
    });

    app.delete("/v2/deployments", { schema: { tags, querystring: S.DeploymentDeleteQuery } }, async (req) => {
      await deleteDeployments(ctx, tenantOf(req), req.query.deployment_ids);
      return {};
    });

    app.get(
      "/v2/deployments/:deployment_id",
      { schema: { tags, params: S.DeploymentIdParams } },
      async (req) => deploymentOut(await getOr404(req, req.params.deployment_id)),
    );

    app.patch(
      "/v2/deployments/:deployment_id",
      { schema: { tags, params: S.DeploymentIdParams, body: S.DeploymentPatch } },
      async (req) => {
        checkCliPlan(req, req.body.revision_source);
        const d = await getOr404(req, req.params.deployment_id);
        return deploymentOut(await patchDeployment(ctx, d, req.body));
      },
    );

    app.delete(
      "/v2/deployments/:deployment_id",
      { schema: { tags, params: S.DeploymentIdParams } },
      async (req, reply) => {
        await deleteDeployments(ctx, tenantOf(req), [req.params.deployment_id]);
        return reply.status(204).send();
      },
    );
  };
}
