// Revision routes (`/v2/deployments/{deployment_id}/revisions`): list, get, redeploy.
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { tenantOf } from "../auth.js";
import type { CpContext } from "../../domain/context.js";
import { deploymentOut, redeployRevision, revisionOut } from "../../domain/deployments.js";
import { deploymentNotFound, revisionNotFound } from "../errors.js";
import * as S from "./schemas.js";

export function revisionRoutes(ctx: CpContext): FastifyPluginAsyncZod {
  const { store } = ctx;
  return async (app) => {
    const tags = ["Revisions"];

    const deploymentOr404 = async (req: FastifyRequest, id: string) => {
      const d = await store.getDeployment(tenantOf(req), id);
      if (!d) throw deploymentNotFound(id);
      return d;
    };
    const revisionOr404 = async (req: FastifyRequest, deploymentId: string, revisionId: string) => {
      const d = await deploymentOr404(req, deploymentId);
      const r = await store.getRevision(d.id, revisionId);
      if (!r) throw revisionNotFound(revisionId);
      return { d, r };
    };

    app.get(
      "/v2/deployments/:deployment_id/revisions",
      { schema: { tags, params: S.DeploymentIdParams, querystring: S.RevisionListQuery } },
      async (req) => {
        const d = await deploymentOr404(req, req.params.deployment_id);
        const { limit, offset, status } = req.query;
        const rows = await store.listRevisions(d.id, { limit, offset, status });
        return { resources: rows.map(revisionOut), offset: offset + rows.length };
      },
    );

    app.get(
      "/v2/deployments/:deployment_id/revisions/:revision_id",
      { schema: { tags, params: S.RevisionIdParams } },
      async (req) =>
        revisionOut((await revisionOr404(req, req.params.deployment_id, req.params.revision_id)).r),
    );

    app.post(
      "/v2/deployments/:deployment_id/revisions/:revision_id/redeploy",
      { schema: { tags, params: S.RevisionIdParams } },
      async (req) => {
        const { d, r } = await revisionOr404(req, req.params.deployment_id, req.params.revision_id);
        return deploymentOut(await redeployRevision(ctx, d, r));
      },
    );
  };
}
