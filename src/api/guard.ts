// Authorization at the routes: runs the project's auth handlers for an action and hides what the user may
// not see (404, as if it did not exist). Without custom auth every check passes.
import type { FastifyRequest } from "fastify";
import { filterToContainment, metadataMatches, type Authorizer, type AuthUser } from "../auth/auth.js";
import type { Json, Storage, Thread, Assistant } from "../storage/types.js";
import { notFound } from "./errors.js";
import { findAssistant } from "../graphs/assistants.js";

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
    const filter = await this.auth.authorize(req.user, event, { thread_id: threadId, ...value });
    const t = await this.storage.threads.get(threadId);
    if (t && !metadataMatches(t.metadata, filter)) throw notFound(`Thread "${threadId}" not found`);
    return t;
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
