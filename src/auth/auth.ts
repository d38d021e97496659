// Custom auth: the project's Auth object (@langchain/langgraph-sdk/auth) authenticates every request and
// authorizes each action; handlers may allow, deny, or return a metadata filter that limits what the user
// sees. Without custom auth, HANGAR_API_KEYS (comma-separated) can require an x-api-key header.
import { existsSync } from "node:fs";
import type { FastifyRequest } from "fastify";
import { parseGraphSpec } from "../lib/settings/project.js";
import type { AuthConfig } from "../lib/settings/sections.js";
import { ConfigError, ForbiddenError, UnauthorizedError } from "../lib/errors.js";
import { safeEqual, safeIncludes } from "../lib/safe-equal.js";
import { loopbackKey } from "../lib/loopback.js";
import type { Json } from "../storage/types.js";
import { importProjectModule } from "../lib/project-import.js";
import { isObject } from "../lib/objects.js";

export interface AuthUser {
  identity: string;
  display_name: string;
  is_authenticated: boolean;
  permissions: string[];
  [k: string]: unknown;
}

type Handler = (p: {
  event: string;
  resource: string;
  action: string;
  value: unknown;
  user: AuthUser;
  permissions: string[];
}) => unknown;

interface AuthObject {
  "~handlerCache": { authenticate?: (req: Request) => unknown; callbacks?: Record<string, Handler> };
}

/** A filter on metadata, as handlers return it: `{key: value}`, `{key: {$eq}}` or `{key: {$contains}}`. */
export type AuthFilter = Record<string, unknown>;

/** The project's `auth.path` cannot be loaded. */
export class AuthError extends ConfigError {}

/** Converts a handler filter to JSON containment on metadata ($contains: the array holds the value). */
export function filterToContainment(filter: AuthFilter | undefined): Json | undefined {
  if (!filter) return undefined;
  const out: Json = {};
  for (const [k, v] of Object.entries(filter)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const ops = v as { $eq?: unknown; $contains?: unknown };
      if ("$eq" in ops) out[k] = ops.$eq;
      else if ("$contains" in ops) out[k] = Array.isArray(ops.$contains) ? ops.$contains : [ops.$contains];
      else out[k] = v;
    } else out[k] = v;
  }
  return out;
}

/** True when the metadata satisfies the filter (the same rule the storage query applies). */
export function metadataMatches(metadata: Json, filter: AuthFilter | undefined): boolean {
  const c = filterToContainment(filter);
  if (!c) return true;
  return Object.entries(c).every(([k, want]) => {
    const have = metadata[k];
    if (Array.isArray(want))
      return (
        Array.isArray(have) && want.every((w) => have.some((h) => JSON.stringify(h) === JSON.stringify(w)))
      );
    return JSON.stringify(have) === JSON.stringify(want);
  });
}

export class Authorizer {
  private constructor(
    private auth: AuthObject | null,
    private apiKeys: Set<string> | null,
  ) {}

  /** Loads `auth.path` of langgraph.json (if any); `keys` are those of HANGAR_API_KEYS. */
  static async load(
    projectDir: string,
    authConfig: AuthConfig | null | undefined,
    keys: string[],
  ): Promise<Authorizer> {
    const apiKeys = keys.length ? new Set(keys) : null;
    const path = authConfig?.path;
    if (typeof path !== "string") return new Authorizer(null, apiKeys);
    const entry = parseGraphSpec(projectDir, "auth", path);
    const where = `auth.path "${path}"`;
    if (!existsSync(entry.file)) throw new AuthError(`${where}: file ${entry.file} not found`);
    let mod: Record<string, unknown>;
    try {
      mod = await importProjectModule(entry.file);
    } catch (e) {
      throw new AuthError(`${where}: failed to import: ${(e as Error).message}`);
    }
    const obj = mod[entry.exportName ?? "default"] as AuthObject | undefined;
    if (!obj || typeof obj !== "object" || !("~handlerCache" in obj)) {
      throw new AuthError(`${where}: the export is not an Auth object of @langchain/langgraph-sdk/auth`);
    }
    return new Authorizer(obj, apiKeys);
  }

  get custom(): boolean {
    return this.auth !== null;
  }

  /** Authenticates a request; throws 401/403 (or the handler's HTTPException status). */
  async authenticate(req: FastifyRequest): Promise<AuthUser | null> {
    if (!this.auth) {
      // This process's own requests to itself (`new Client()` in a graph, relative webhooks) carry its key.
      const key = String(req.headers["x-api-key"] ?? "");
      if (this.apiKeys && !(safeIncludes(key, this.apiKeys) || safeEqual(key, loopbackKey()))) {
        throw new UnauthorizedError("Missing or invalid x-api-key header");
      }
      return null;
    }
    const authenticate = this.auth["~handlerCache"].authenticate;
    if (!authenticate) return null;
    const url = `http://${req.headers.host ?? "localhost"}${req.url}`;
    const headers = new Headers();
    for (const [k, v] of Object.entries(req.headers)) {
      if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : String(v));
    }
    let result: unknown;
    try {
      result = await authenticate(new Request(url, { method: req.method, headers }));
    } catch (e) {
      const status = (e as { status?: number }).status;
      throw new UnauthorizedError((e as Error).message || "Unauthorized", { status });
    }
    if (typeof result === "string") {
      return { identity: result, display_name: result, is_authenticated: true, permissions: [] };
    }
    if (!isObject(result) || typeof result.identity !== "string") {
      throw new UnauthorizedError("authenticate() returned no identity");
    }
    // Normalized as the official server does (the object graphs get as langgraph_auth_user).
    return {
      ...result,
      permissions: Array.isArray(result.permissions) ? result.permissions : [],
      is_authenticated: typeof result.is_authenticated === "boolean" ? result.is_authenticated : true,
      display_name: typeof result.display_name === "string" ? result.display_name : result.identity,
    } as unknown as AuthUser;
  }

  /**
   * Runs the handler for `event` ("threads:read", ...) by precedence: the exact event, then the resource
   * ("threads"), then the action ("*:read"), then "*". Returns the metadata filter to apply, if any;
   * throws 403 when the handler refuses. Handlers may change `value` in place (e.g. add metadata).
   */
  async authorize(user: AuthUser | null, event: string, value: unknown): Promise<AuthFilter | undefined> {
    if (!this.auth || !user) return undefined;
    const [resource, action] = event.split(":");
    const cbs = this.auth["~handlerCache"].callbacks ?? {};
    const handler = cbs[event] ?? cbs[resource] ?? cbs[`*:${action}`] ?? cbs["*"];
    if (!handler) return undefined;
    let out: unknown;
    try {
      out = await handler({ event, resource, action, value, user, permissions: user.permissions });
    } catch (e) {
      const status = (e as { status?: number }).status;
      throw new ForbiddenError((e as Error).message || "Forbidden", { status });
    }
    if (out === false) throw new ForbiddenError(`Not allowed: ${event}`);
    return isObject(out) ? (out as AuthFilter) : undefined;
  }
}
