// CORS of the Agent Server: on by default as in the official server (any origin, requested headers echoed,
// `content-location` and `x-pagination-total` exposed, Private Network Access preflights answered).
import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";
import { ConfigError } from "../lib/settings/project.js";
import { CorsConfigSchema, type CorsConfig } from "../lib/settings/sections.js";

const DEFAULT_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
/** Always exposed: the SDK reads a created run's path and the total of a paginated search. */
const ALWAYS_EXPOSED = ["content-location", "x-pagination-total"];

/** Validates `http.cors`; a wrong field is a ConfigError naming it. */
export function parseCorsConfig(raw: unknown): CorsConfig | undefined {
  if (raw === undefined || raw === null) return undefined;
  const parsed = CorsConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = ["http", "cors", ...issue.path].join(".");
    throw new ConfigError(`langgraph.json ${field}: ${issue.message}`);
  }
  const c = parsed.data;
  if (c.allow_origin_regex !== undefined) {
    try {
      new RegExp(c.allow_origin_regex);
    } catch (e) {
      throw new ConfigError(`langgraph.json http.cors.allow_origin_regex: ${(e as Error).message}`);
    }
  }
  return c;
}

/**
 * Which origins may call: any when neither `allow_origins` nor `allow_origin_regex` narrows it (or the list
 * holds "*"); otherwise those listed and those the regex matches in full.
 */
export function originPolicy(c: CorsConfig | undefined): (origin: string) => boolean {
  const list = c?.allow_origins;
  const regex = c?.allow_origin_regex;
  if ((!list && regex === undefined) || list?.includes("*")) return () => true;
  const listed = new Set(list ?? []);
  const re = regex === undefined ? undefined : new RegExp(`^(?:${regex})$`);
  return (origin) => listed.has(origin) || (re?.test(origin) ?? false);
}

/** Headers exposed to scripts: the user's list (if any) plus the two the SDK needs, without duplicates. */
function exposedHeaders(c: CorsConfig | undefined): string[] {
  const out = [...(c?.expose_headers ?? [])];
  const seen = new Set(out.map((h) => h.toLowerCase()));
  for (const h of ALWAYS_EXPOSED) if (!seen.has(h)) out.push(h);
  return out;
}

/**
 * Installs CORS as the first `onRequest` hooks, so preflights are answered before authentication (browsers
 * send no credentials in them) and every response, errors and hijacked SSE streams included, carries the
 * headers. The allowed origin is reflected (works with credentials, unlike "*"); with no `allow_headers`
 * the preflight echoes the requested headers; `Access-Control-Max-Age` is sent only when configured.
 */
export async function installCors(app: FastifyInstance, raw: unknown): Promise<void> {
  const c = parseCorsConfig(raw);
  const allowed = originPolicy(c);
  // Private Network Access (Chrome): a public page asking for a private address (e.g. localhost) says so
  // in the preflight and needs this answer. @fastify/cors ends preflights in its own hook, so this runs first.
  app.addHook("onRequest", async (req, reply) => {
    const origin = req.headers.origin;
    if (
      req.method === "OPTIONS" &&
      req.headers["access-control-request-private-network"] === "true" &&
      origin !== undefined &&
      allowed(origin)
    ) {
      reply.header("Access-Control-Allow-Private-Network", "true");
    }
  });
  await app.register(cors, {
    // No Origin (curl, servers): nothing to add. A disallowed one: no CORS headers, preflight not answered.
    origin: (origin, cb) => cb(null, origin === undefined || allowed(origin)),
    methods: c?.allow_methods?.length ? c.allow_methods : DEFAULT_METHODS,
    // Not given: echo Access-Control-Request-Headers (an empty list means the same, as in the official server).
    ...(c?.allow_headers?.length ? { allowedHeaders: c.allow_headers } : {}),
    exposedHeaders: exposedHeaders(c),
    credentials: c?.allow_credentials ?? false,
    ...(c?.max_age !== undefined ? { maxAge: c.max_age } : {}),
    // Any OPTIONS is answered as a preflight, as the official server's middleware does.
    strictPreflight: false,
  });
}
