// Cron routes: create (stateless or on a thread), search, count, get, patch, delete.
import { randomUUID } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { metadataMatches } from "../auth/auth.js";
import type { z } from "zod";
import { findAssistant } from "../graphs/assistants.js";
import { CRONS_SIGNAL, nextRunDate } from "../runs/crons.js";
import { checkWebhookUrl } from "../runs/webhook.js";
import type { Cron, Json } from "../storage/types.js";
import type { ApiContext } from "./context.js";
import { pick } from "./context.js";
import { notFound } from "./errors.js";
import { AUTH_CONFIG_KEYS } from "./guard.js";
import * as S from "./schemas.js";
import { isObject } from "../lib/objects.js";

const SCHEDULE_FIELDS = ["schedule", "timezone", "end_time", "enabled", "on_run_completed", "assistant_id"];

/** The run a cron creates: every field of the request except the schedule's own. */
function payloadOf(body: Record<string, unknown>): Json {
  return Object.fromEntries(
    Object.entries(body).filter(([k, v]) => !SCHEDULE_FIELDS.includes(k) && v !== undefined),
  );
}

const cronOut = (c: Cron) => ({ ...c });

/**
 * A patched cron's run config: the new config if one was sent, but the auth keys (who the cron runs as) stay
 * those recorded when it was created, whatever the patch says.
 */
function keepAuth(current: unknown, patch: unknown): Json {
  const cur = isObject(current) ? current : {};
  const next = patch === undefined ? cur : isObject(patch) ? patch : {};
  const curConf = isObject(cur.configurable) ? cur.configurable : {};
  const configurable: Json = { ...(isObject(next.configurable) ? next.configurable : {}) };
  for (const k of AUTH_CONFIG_KEYS) {
    delete configurable[k];
    if (curConf[k] !== undefined) configurable[k] = curConf[k];
  }
  return { ...next, configurable };
}

export function cronRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  const { storage } = ctx;
  /** The cron schedulers of the deployment look at the crons now (they sleep until the next one is due). */
  const schedulersWake = () => void ctx.broker.signal(CRONS_SIGNAL, "1").catch(() => {});
  /** The cron, if it exists and the auth handler's filter lets the request see it; 404 otherwise. */
  const load = async (req: FastifyRequest, id: string) => {
    const c = await storage.crons.get(id);
    if (!c || !metadataMatches(c.metadata, req.authFilter)) throw notFound(`Cron "${id}" not found`);
    return c;
  };

  const create = async (
    req: FastifyRequest,
    body: z.infer<typeof S.CronCreate> | z.infer<typeof S.ThreadCronCreate>,
    threadId: string | null,
  ) => {
    // A webhook its runs will call is checked now, as a run's is (and again when it is sent).
    if (body.webhook) await checkWebhookUrl(body.webhook, ctx.webhooks);
    const assistant = await findAssistant(storage, body.assistant_id);
    if (!assistant) throw notFound(`Assistant "${body.assistant_id}" not found`);
    // A cron on a thread runs there: the user must be allowed to create runs on it.
    if (threadId)
      await ctx.guard.thread(req, threadId, "threads:create_run", { assistant_id: body.assistant_id });
    const next = nextRunDate(body.schedule, body.timezone, new Date(), body.end_time);
    const created = cronOut(
      await storage.crons.create({
        cron_id: randomUUID(),
        assistant_id: assistant.assistant_id,
        thread_id: threadId,
        user_id: ctx.guard.auth.custom && req.user ? req.user.identity : null,
        schedule: body.schedule,
        timezone: body.timezone ?? null,
        end_time: body.end_time ?? null,
        enabled: body.enabled,
        on_run_completed: "on_run_completed" in body ? body.on_run_completed : "keep",
        // Its runs see the user who created it as langgraph_auth_user (never what the client sent).
        payload: { ...payloadOf(body), config: ctx.guard.runConfig(req, body.config as Json | undefined) },
        metadata: body.metadata ?? {},
        next_run_date: next,
      }),
    );
    schedulersWake();
    return created;
  };

  return async (app) => {
    const tags = ["Crons"];
    app.post("/runs/crons", { schema: { tags, body: S.CronCreate } }, async (req) =>
      create(req, req.body, null),
    );

    app.post(
      "/threads/:thread_id/runs/crons",
      { schema: { tags, params: S.ThreadIdParams, body: S.ThreadCronCreate } },
      async (req) => create(req, req.body, req.params.thread_id),
    );

    app.post("/runs/crons/search", { schema: { tags, body: S.CronSearch } }, async (req) =>
      (await storage.crons.search({ ...req.body, authMetadata: req.authFilter })).map((c) =>
        pick(cronOut(c), req.body.select),
      ),
    );

    app.post("/runs/crons/count", { schema: { tags, body: S.CronCount } }, async (req) =>
      storage.crons.count({ ...req.body, authMetadata: req.authFilter }),
    );

    app.get("/runs/crons/:cron_id", { schema: { tags, params: S.CronIdParams } }, async (req) =>
      cronOut(await load(req, req.params.cron_id)),
    );

    app.patch(
      "/runs/crons/:cron_id",
      { schema: { tags, params: S.CronIdParams, body: S.CronPatch } },
      async (req) => {
        const cur = await load(req, req.params.cron_id);
        const b = req.body;
        if (b.webhook) await checkWebhookUrl(b.webhook, ctx.webhooks);
        const schedule = b.schedule ?? cur.schedule;
        const timezone = b.timezone ?? cur.timezone;
        const endTime = b.end_time !== undefined ? b.end_time : cur.end_time;
        const enabled = b.enabled ?? cur.enabled;
        const reschedule =
          b.schedule !== undefined ||
          b.timezone !== undefined ||
          b.end_time !== undefined ||
          (b.enabled && !cur.enabled);
        const updated = await storage.crons.update(cur.cron_id, {
          schedule,
          timezone,
          end_time: endTime,
          enabled,
          ...(b.on_run_completed ? { on_run_completed: b.on_run_completed } : {}),
          payload: { ...cur.payload, ...payloadOf(b), config: keepAuth(cur.payload.config, b.config) },
          ...(b.metadata ? { metadata: { ...cur.metadata, ...b.metadata } } : {}),
          ...(reschedule ? { next_run_date: nextRunDate(schedule, timezone, new Date(), endTime) } : {}),
        });
        if (reschedule) schedulersWake();
        return cronOut(updated!);
      },
    );

    app.delete("/runs/crons/:cron_id", { schema: { tags, params: S.CronIdParams } }, async (req, reply) => {
      await load(req, req.params.cron_id);
      if (!(await storage.crons.delete(req.params.cron_id)))
        throw notFound(`Cron "${req.params.cron_id}" not found`);
      return reply.status(200).send({});
    });
  };
}
