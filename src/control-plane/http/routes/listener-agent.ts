// Hangar extension for `hangar listener` processes (they poll; the control plane never calls them): the
// deployments assigned to a listener, with their revisions and their secrets UNMASKED (the listener turns them
// into Kubernetes Secrets), and what its reconcile loop (the same as the local one) writes back: revision
// status, the deployment's active revision and status, log lines, a deleted deployment removed.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { tenantOf } from "../auth.js";
import type { CpContext } from "../../domain/context.js";
import { deploymentOut, revisionOut } from "../../domain/deployments.js";
import { conflict, deploymentNotFound, listenerNotFound, revisionNotFound } from "../errors.js";
import { BUILT_SOURCES, FINAL_REVISION_STATUSES, type Deployment, type LogLine } from "../../domain/types.js";
import { requireListenerPlan } from "./listeners.js";
import * as S from "./schemas.js";

/**
 * A deployment as its listener sees it: secrets in clear, `latest_revision`, `active_revision`, and `revisions`:
 * the ones the reconciler looks at (not final and not DEPLOYED, the latest, the active one), newest first.
 */
async function assignmentOut(ctx: CpContext, d: Deployment) {
  const { store } = ctx;
  const built = BUILT_SOURCES.includes(d.source);
  // A built source's revision is the listener's once the control plane pushed its image (or it ended).
  const all = (await store.listRevisions(d.id, { limit: 10_000, offset: 0 })).filter(
    (r) => !built || !!r.source_revision_config.image_uri || FINAL_REVISION_STATUSES.includes(r.status),
  );
  const latest = all.find((r) => r.id === d.latest_revision_id) ?? null;
  const active = all.find((r) => r.id === d.active_revision_id) ?? null;
  const revisions = all.filter(
    (r) =>
      r === latest ||
      r === active ||
      (!FINAL_REVISION_STATUSES.includes(r.status) && r.status !== "DEPLOYED"),
  );
  return {
    ...deploymentOut(d),
    secrets: d.secrets.map((s) => ({ name: s.name, value: s.value })),
    deleted_at: d.deleted_at ?? null,
    latest_revision: latest ? revisionOut(latest) : null,
    active_revision: active ? revisionOut(active) : null,
    revisions: revisions.map(revisionOut),
    ...(built && ctx.imagePullConfig ? { image_pull_secret: { dockerconfigjson: ctx.imagePullConfig } } : {}),
  };
}

export function listenerAgentRoutes(ctx: CpContext): FastifyPluginAsyncZod {
  const { store } = ctx;
  return async (app) => {
    const tags = ["Listener agent (Hangar)"];
    app.addHook("preHandler", requireListenerPlan);

    /** The listener's deployments (deleted ones included), or 404 when the listener is not the workspace's. */
    const assigned = async (tenantId: string, listenerId: string): Promise<Deployment[]> => {
      if (!(await store.getListener(tenantId, listenerId))) throw listenerNotFound(listenerId);
      return (await store.deploymentsFor(listenerId)).filter((d) => d.tenant_id === tenantId);
    };

    app.get(
      "/v2/listeners/:listener_id/assignments",
      {
        schema: {
          tags,
          params: S.ListenerIdParams,
          description:
            "The deployments assigned to the listener (deleted ones too, with deleted_at, until the listener " +
            "reports them removed), each with latest_revision, active_revision, revisions (those in progress, " +
            "the latest and the active one, newest first), and secrets NOT masked.",
        },
      },
      async (req) => {
        const deployments = await assigned(tenantOf(req), req.params.listener_id);
        const resources = [];
        for (const d of deployments) resources.push(await assignmentOut(ctx, d));
        return { resources };
      },
    );

    app.get(
      "/v2/listeners/:listener_id/assignments/:deployment_id",
      {
        schema: {
          tags,
          params: S.ListenerDeploymentParams,
          description: "One deployment assigned to the listener, as in the list.",
        },
      },
      async (req) => {
        const { listener_id, deployment_id } = req.params;
        const d = (await assigned(tenantOf(req), listener_id)).find((x) => x.id === deployment_id);
        if (!d) throw deploymentNotFound(deployment_id);
        return assignmentOut(ctx, d);
      },
    );

    app.patch(
      "/v2/listeners/:listener_id/assignments/:deployment_id",
      {
        schema: {
          tags,
          params: S.ListenerDeploymentParams,
          body: S.AssignmentPatch,
          description:
            "The listener switched the deployment: its active revision (the one serving), status, and the URL its cluster serves it at (the deployment's custom_url when it has none of its own).",
        },
      },
      async (req) => {
        const { listener_id, deployment_id } = req.params;
        const d = (await assigned(tenantOf(req), listener_id)).find((x) => x.id === deployment_id);
        if (!d) throw deploymentNotFound(deployment_id);
        const { active_revision_id, status, url } = req.body;
        if (active_revision_id && !(await store.getRevision(d.id, active_revision_id))) {
          throw revisionNotFound(active_revision_id);
        }
        // The cluster's address becomes the deployment's URL, unless it has one of its own (an external_docker
        // deployment's, given by its user). One made before listeners reported theirs may name this control plane's
        // router, which never serves a listener's deployment: replaced too.
        const current = d.source_config.custom_url;
        const own = !!current && current !== `${ctx.publicUrl()}/deployments/${d.id}`;
        const address = url && !own && url !== current ? url : undefined;
        const updated = await store.updateDeployment(d.id, {
          ...(active_revision_id ? { active_revision_id } : {}),
          ...(status ? { status } : {}),
          ...(address ? { source_config: { ...d.source_config, custom_url: address } } : {}),
        });
        return assignmentOut(ctx, updated);
      },
    );

    app.post(
      "/v2/listeners/:listener_id/revisions/:revision_id/status",
      { schema: { tags, params: S.ListenerRevisionParams, body: S.RevisionStatusReport } },
      async (req) => {
        const { listener_id, revision_id } = req.params;
        for (const d of await assigned(tenantOf(req), listener_id)) {
          const r = await store.getRevision(d.id, revision_id);
          if (!r) continue;
          await store.setRevisionStatus(r.id, req.body.status, req.body.message ?? null);
          // The listener's roll-out finished: this revision serves now.
          if (req.body.status === "DEPLOYED")
            await store.updateDeployment(d.id, { active_revision_id: r.id });
          return revisionOut((await store.getRevision(d.id, r.id))!);
        }
        throw revisionNotFound(revision_id);
      },
    );

    app.post(
      "/v2/listeners/:listener_id/logs",
      { schema: { tags, params: S.ListenerIdParams, body: S.LogReport } },
      async (req, reply) => {
        const ids = new Set((await assigned(tenantOf(req), req.params.listener_id)).map((d) => d.id));
        const now = new Date().toISOString();
        const lines: LogLine[] = req.body.lines.map((l) => {
          if (!ids.has(l.deployment_id)) throw deploymentNotFound(l.deployment_id);
          return {
            deployment_id: l.deployment_id,
            revision_id: l.revision_id ?? null,
            kind: l.kind,
            level: l.level,
            message: l.message,
            timestamp: l.timestamp ? new Date(l.timestamp).toISOString() : now,
          };
        });
        await store.appendLogs(lines);
        return reply.status(204).send();
      },
    );

    app.delete(
      "/v2/listeners/:listener_id/assignments/:deployment_id",
      {
        schema: {
          tags,
          params: S.ListenerDeploymentParams,
          description: "The listener removed a deleted deployment's objects: its records are purged.",
        },
      },
      async (req, reply) => {
        const { listener_id, deployment_id } = req.params;
        const d = (await assigned(tenantOf(req), listener_id)).find((x) => x.id === deployment_id);
        if (!d) throw deploymentNotFound(deployment_id);
        if (!d.deleted_at) throw conflict(`Deployment ID ${deployment_id} is not deleted.`);
        await store.purgeDeployment(d.id);
        return reply.status(204).send();
      },
    );
  };
}
