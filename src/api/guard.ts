// Authorization at the routes: runs the project's auth handlers for an action and hides what the user may
// not see (404, as if it did not exist). Without custom auth every check passes.
import type { FastifyRequest } from "fastify";
import { filterToContainment, metadataMatches, type Authorizer, type AuthUser } from "../auth/auth.js";
import type { Json, Run, Storage, Thread, Assistant } from "../storage/types.js";
import { notFound } from "./errors.js";
import { findAssistant } from "../graphs/assistants.js";
import { isObject } from "../lib/objects.js";

/** The keys of a run's `config.configurable` that say who started it: only the server writes them. */
export const AUTH_CONFIG_KEYS = [
  "langgraph_auth_user",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
] as const;

/** Request headers never copied into a run's config: credentials (the official server's list, and Hangar's own). */
const CREDENTIAL_HEADERS = new Set(["x-api-key", "x-tenant-id", "x-service-key", "x-hangar-internal-token"]);

declare module "fastify" {
  interface FastifyRequest {
    user: AuthUser | null;
    /** The containment filter the auth handler of a cron action returned (applied by the cron routes). */
    authFilter?: Json;
  }
}

export class Guard {
  constructor(
    readonly auth: Authorizer,
    private storage: Storage,
  ) {}

  /** Authorizes `event` and returns the containment filter the handler asked for (or undefined). */
  async filter(req: FastifyRequest, event: string, value: unknown): Promise<Json | undefined> {
    return filterToContainment(await this.auth.authorize(req.user, event, value));
  }

  /** Metadata to record on threads the user creates: the identity as service_auth_user_id. */
  owner(req: FastifyRequest): Json {
    return this.auth.custom && req.user ? { service_auth_user_id: req.user.identity } : {};
  }

  /**
   * A run's config with the caller as the official server passes it to the graph: `langgraph_auth_user`,
   * `langgraph_auth_user_id` and `langgraph_auth_permissions` in `configurable`, replacing whatever the
   * client sent under those keys (removed when there is no authenticated user). With `headers`, the request's
   * `x-*` headers (but credentials) and `user-agent` are copied into `configurable` too, as the official server
   * does for a run it creates (checkpoint metadata then carries them).
   */
  runConfig(req: FastifyRequest, config: Json | null | undefined, opts: { headers?: boolean } = {}): Json {
    const base = isObject(config) ? config : {};
    const configurable: Json = { ...(isObject(base.configurable) ? base.configurable : {}) };
    if (opts.headers) {
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value !== "string" || CREDENTIAL_HEADERS.has(name)) continue;
        if (name.startsWith("x-") || name === "user-agent") configurable[name] = value;
      }
    }
    for (const k of AUTH_CONFIG_KEYS) delete configurable[k];
    if (this.auth.custom && req.user) {
      configurable.langgraph_auth_user = req.user as unknown as Json;
      configurable.langgraph_auth_user_id = req.user.identity;
      configurable.langgraph_auth_permissions = req.user.permissions;
    }
    return { ...base, configurable };
  }

  /** The thread (null when missing) and whether the user may act on it with `event` (the handler's filter). */
  private async lookUpThread(
    req: FastifyRequest,
    threadId: string,
    event: string,
    value: Json,
  ): Promise<{ thread: Thread | null; visible: boolean }> {
    const filter = await this.auth.authorize(req.user, event, { thread_id: threadId, ...value });
    const thread = await this.storage.threads.get(threadId);
    return { thread, visible: thread !== null && metadataMatches(thread.metadata, filter) };
  }

  /** The thread if it exists and the user may act on it with `event`; null otherwise (never a 404). */
  async visibleThread(
    req: FastifyRequest,
    threadId: string,
    event: string,
    value: Json = {},
  ): Promise<Thread | null> {
    const { thread, visible } = await this.lookUpThread(req, threadId, event, value);
    return visible ? thread : null;
  }

  /**
   * True when the user may act with `event` on a run: through its thread (the handler's filter on the
   * thread's metadata), or, for a run without a thread, when the same user started it.
   */
  async mayActOnRun(req: FastifyRequest, run: Run, event: string): Promise<boolean> {
    if (!this.auth.custom || !req.user) return true;
    if (run.thread_id) return (await this.visibleThread(req, run.thread_id, event)) !== null;
    const config = (run.kwargs as Json).config;
    const configurable = isObject(config) && isObject(config.configurable) ? config.configurable : {};
    return configurable.langgraph_auth_user_id === req.user.identity;
  }

  /** The thread if it exists and the user may act on it with `event`; 404 otherwise. */
  async thread(req: FastifyRequest, threadId: string, event: string, value: Json = {}): Promise<Thread> {
    const t = await this.maybeThread(req, threadId, event, value);
    if (!t) throw notFound(`Thread "${threadId}" not found`);
    return t;
  }

  /** Like `thread`, but a missing thread is fine (null), e.g. a run that may create it. */
  async maybeThread(
    req: FastifyRequest,
    threadId: string,
    event: string,
    value: Json = {},
  ): Promise<Thread | null> {
    const { thread, visible } = await this.lookUpThread(req, threadId, event, value);
    if (thread && !visible) throw notFound(`Thread "${threadId}" not found`);
    return thread;
  }

  /** The assistant if the user may act on it with `event`; 404 otherwise. */
  async assistant(req: FastifyRequest, id: string, event: string, value: Json = {}): Promise<Assistant> {
    const a = await findAssistant(this.storage, id);
    const filter = a
      ? await this.auth.authorize(req.user, event, { assistant_id: a.assistant_id, ...value })
      : undefined;
    // The official server's wording.
    if (!a || !metadataMatches(a.metadata, filter)) throw notFound("Assistant not found");
    return a;
  }
}
