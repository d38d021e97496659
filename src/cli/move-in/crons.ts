// `hangar migrate`: crons. The API lets no client choose a cron's id, so a source cron counts as already on the
// target when the target has one of the same assistant, thread, schedule and input whose metadata holds the
// source's (each target cron stands for one source cron). A source that serves no crons (the official dev server)
// is noted, not a failure.
import { copyEach, tally, type Tally } from "./report.js";
import { allPages, HttpFailure, listing, reason, request, stepFailure, type Side } from "./sides.js";

interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  schedule: string;
  timezone?: string | null;
  end_time?: string | null;
  enabled?: boolean;
  on_run_completed?: string | null;
  payload?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}

/** Fields of a cron's payload that say what its runs do (the request fields of a cron's creation). */
const RUN_FIELDS = [
  "input",
  "config",
  "context",
  "webhook",
  "interrupt_before",
  "interrupt_after",
  "stream_mode",
  "stream_subgraphs",
  "stream_resumable",
  "durability",
];
/** Keys of a run's config.configurable that name who runs it: the target records its own. */
const AUTH_KEYS = ["langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"];

/** JSON with object keys sorted, to compare values whatever the order a server wrote them in. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}

const keyOf = (c: Cron) =>
  canonical([c.assistant_id, c.thread_id ?? null, c.schedule, c.payload?.input ?? null]);

const holds = (have: Record<string, unknown> = {}, want: Record<string, unknown> = {}) =>
  Object.entries(want).every(([k, v]) => canonical(have[k]) === canonical(v));

/** A page of a side's crons, oldest first. */
const cronPage = (side: Side) => (limit: number, offset: number) =>
  request<Cron[]>(side, "POST", "/runs/crons/search", {
    limit,
    offset,
    sort_by: "created_at",
    sort_order: "asc",
  });
const listCrons = (side: Side) => allPages(cronPage(side));

/** Whether a failed cron listing means the server has no crons at all (not implemented there). */
const noCrons = (e: unknown) =>
  e instanceof HttpFailure && ([404, 405, 501].includes(e.status) || /not implemented/i.test(e.detail));

/** The creation request of a cron like `c`. */
function bodyOf(c: Cron): Record<string, unknown> {
  const payload = c.payload ?? {};
  const body: Record<string, unknown> = { assistant_id: c.assistant_id, schedule: c.schedule };
  for (const k of RUN_FIELDS) if (payload[k] !== undefined && payload[k] !== null) body[k] = payload[k];
  const config = body.config as { configurable?: Record<string, unknown> } | undefined;
  if (config?.configurable) {
    const configurable = { ...config.configurable };
    for (const k of AUTH_KEYS) delete configurable[k];
    body.config = { ...config, configurable };
  }
  if (c.timezone) body.timezone = c.timezone;
  if (c.end_time) body.end_time = c.end_time;
  if (typeof c.enabled === "boolean") body.enabled = c.enabled;
  if (c.metadata && Object.keys(c.metadata).length) body.metadata = c.metadata;
  if (c.thread_id) {
    if (typeof payload.multitask_strategy === "string") body.multitask_strategy = payload.multitask_strategy;
  } else if (c.on_run_completed) body.on_run_completed = c.on_run_completed;
  return body;
}

export async function copyCrons(from: Side, to: Side, dryRun: boolean): Promise<Tally> {
  const t = tally("crons", dryRun);
  let list: Cron[];
  try {
    list = await listCrons(from);
  } catch (e) {
    if (noCrons(e)) {
      t.notes.push(`crons: the source serves none (${reason(e)}); nothing to copy`);
      return t;
    }
    throw stepFailure(from, "listing the crons", e);
  }
  const theirs = list.length ? await listing(to, "the crons", cronPage(to)) : [];
  return copyEach(
    t,
    list,
    (c) => `cron ${c.cron_id} (${c.schedule}, assistant ${c.assistant_id})`,
    async (c) => {
      const i = theirs.findIndex((o) => keyOf(o) === keyOf(c) && holds(o.metadata, c.metadata));
      if (i >= 0) {
        theirs.splice(i, 1);
        t.present++;
        return;
      }
      if (!dryRun) {
        const path = c.thread_id ? `/threads/${c.thread_id}/runs/crons` : "/runs/crons";
        await request(to, "POST", path, bodyOf(c));
      }
      t.copied++;
    },
  );
}
