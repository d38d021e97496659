// Upload routes: upload URLs for a deployment (official) or for the workspace before a deployment exists
// (Hangar), and the PUT that receives the tarball (no API key: the one-use token in the URL is the credential).
import type { FastifyPluginAsync } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { tenantOf } from "../auth.js";
import type { CpContext } from "../../domain/context.js";
import { deploymentNotFound } from "../errors.js";
import { issueUpload } from "../../domain/uploads.js";
import { receiveUpload } from "../uploads.js";
import * as S from "./schemas.js";

/** Upload URL routes (behind the API key). */
export function uploadUrlRoutes(ctx: CpContext): FastifyPluginAsyncZod {
  return async (app) => {
    const tags = ["Uploads"];
    app.post(
      "/v2/deployments/:deployment_id/upload-url",
      { schema: { tags, params: S.DeploymentIdParams } },
      async (req) => {
        const d = await ctx.store.getDeployment(tenantOf(req), req.params.deployment_id);
        if (!d) throw deploymentNotFound(req.params.deployment_id);
        return issueUpload(ctx, d.tenant_id, d.id);
      },
    );
    app.post(
      "/v2/uploads/upload-url",
      {
        schema: {
          tags,
          description:
            "Hangar: an upload URL for the workspace, whose source_tarball_path can be given when creating an " +
            "internal_source deployment.",
        },
      },
      async (req) => issueUpload(ctx, tenantOf(req), null),
    );
  };
}

/** `PUT /v2/uploads/{token}`: the body is streamed to disk as it comes, whatever its content type. */
export function uploadPutRoute(ctx: CpContext): FastifyPluginAsync {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", (_req, _payload, done) => done(null));
    app.put(
      "/v2/uploads/:token",
      {
        schema: {
          tags: ["Uploads"],
          description: "Receives a source tarball (.tar.gz) for an upload URL; the token is used once.",
          params: z.object({ token: z.string() }),
        },
      },
      async (req, reply) => receiveUpload(ctx, (req.params as { token: string }).token, req, reply),
    );
  };
}
