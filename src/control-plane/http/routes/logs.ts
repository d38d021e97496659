// Log routes (`/v1/projects/...`): a revision's build logs and a deployment's (or one revision's) deploy logs,
// paged and filtered, at the paths the official CLI's `deploy logs` calls.
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { tenantOf } from "../auth.js";
import type { CpContext } from "../../domain/context.js";
import { deploymentNotFound, revisionNotFound } from "../errors.js";
import type { LogKind, LogLine } from "../../domain/types.js";
import * as S from "./schemas.js";

const iso = (s: string | null | undefined) => (s ? new Date(s).toISOString() : undefined);
const lineOut = (l: LogLine) => ({
  timestamp: l.timestamp,
  level: l.level,
  message: l.message,
  revision_id: l.revision_id,
});

export function logRoutes(ctx: CpContext): FastifyPluginAsyncZod {
  const { store } = ctx;
  return async (app) => {
    const tags = ["Logs"];

    const read = async (
      req: FastifyRequest,
      deploymentId: string,
      kind: LogKind,
      revisionId?: string | null,
    ) => {
      const b = req.body as z.infer<typeof S.LogsBody>;
      const lines = await store.readLogs(deploymentId, {
        kind,
        revision_id: revisionId ?? undefined,
        limit: b.limit,
        offset: b.offset,
        order: b.order,
        level: b.level ?? undefined,
        query: b.query || undefined,
        start_time: iso(b.start_time),
        end_time: iso(b.end_time),
      });
      return { logs: lines.map(lineOut), offset: b.offset + lines.length };
    };

    // One revision's build or deploy logs.
    for (const kind of ["build", "deploy"] as const) {
      app.post(
        `/v1/projects/:deployment_id/revisions/:revision_id/${kind}_logs`,
        { schema: { tags, params: S.RevisionIdParams, body: S.LogsBody } },
        async (req) => {
          const d = await store.getDeployment(tenantOf(req), req.params.deployment_id);
          if (!d) throw deploymentNotFound(req.params.deployment_id);
          const r = await store.getRevision(d.id, req.params.revision_id);
          if (!r) throw revisionNotFound(req.params.revision_id);
          return read(req, d.id, kind, r.id);
        },
      );
    }

    app.post(
      "/v1/projects/:deployment_id/deploy_logs",
      { schema: { tags, params: S.DeploymentIdParams, body: S.LogsBody } },
      async (req) => {
        const d = await store.getDeployment(tenantOf(req), req.params.deployment_id);
        if (!d) throw deploymentNotFound(req.params.deployment_id);
        return read(req, d.id, "deploy", req.body.revision_id);
      },
    );
  };
}
