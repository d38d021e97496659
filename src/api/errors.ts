// HTTP errors of the Agent Server and the one place that maps every error to a `{detail}` JSON response.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { describePath, type InputProblem } from "../lib/json-limits.js";

export class HttpError extends Error {
  constructor(
    public status: number,
    public detail: unknown,
  ) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
  }
}

export const notFound = (what: string) => new HttpError(404, what);
export const conflict = (what: string) => new HttpError(409, what);
export const unprocessable = (what: string) => new HttpError(422, what);

/** The 422 for input that breaks the limits of lib/json-limits.ts (depth, NUL, lone surrogate), naming where. */
export function inputError(root: "body" | "query" | "path", problem: InputProblem): HttpError {
  return unprocessable(`Invalid request: ${describePath(root, problem.path)}: ${problem.message}`);
}

/**
 * Errors Fastify raises before any hook runs: a URL that does not percent-decode (422, as other bad input), a
 * path parameter longer than the router allows (414). Always the `{detail}` shape.
 */
export function frameworkErrorHandler(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  if (err.code === "FST_ERR_BAD_URL") {
    reply.status(422).send({ detail: "Invalid request: path: the URL is not valid percent-encoded UTF-8" });
  } else if (err.code === "FST_ERR_MAX_PARAM_LENGTH") {
    reply.status(414).send({ detail: "Invalid request: path: a path parameter is too long" });
  } else {
    reply.status(err.statusCode && err.statusCode < 500 ? err.statusCode : 400).send({ detail: err.message });
  }
}

/** "50 MB", "1 MB", "512 KB": a body limit for messages. */
function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  return `${n} bytes`;
}

function describeValidation(err: FastifyError): string {
  const issues = (err as any).validation as { instancePath?: string; message?: string; params?: any }[];
  const context = (err as any).validationContext as string | undefined;
  return issues
    .map((i) => {
      const path = (i.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
      const where = [context === "body" ? "" : context, path].filter(Boolean).join(".") || context || "body";
      return `${where}: ${i.message ?? "invalid"}`;
    })
    .join("; ");
}

/**
 * A lost or refused connection to PostgreSQL or Redis (the request may succeed when retried): network errors,
 * PostgreSQL's connection-exception and operator-intervention classes (08, 57P), pg's own connection errors.
 */
function isUnavailable(err: Error & { code?: unknown }): boolean {
  const code = typeof err.code === "string" ? err.code : "";
  if (/^(ECONNRESET|ECONNREFUSED|EPIPE|ETIMEDOUT|EHOSTUNREACH)$/.test(code)) return true;
  if (/^(08|57P)/.test(code)) return true;
  return /Connection terminated|not queryable|timeout exceeded when trying to connect|Connection is closed/.test(
    err.message,
  );
}

export function installErrorHandler(app: FastifyInstance, log: (msg: string) => void): void {
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err instanceof HttpError) {
      return reply.status(err.status).send({ detail: err.detail });
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      return reply.status(422).send({ detail: `Invalid request: ${describeValidation(err)}` });
    }
    if (err.code === "FST_ERR_CTP_INVALID_JSON_BODY" || err instanceof SyntaxError) {
      return reply.status(422).send({ detail: `Malformed JSON body: ${err.message}` });
    }
    return replyOtherError(err, reply, log, "Internal server error");
  });
}

/**
 * The errors every Hangar server answers alike, after its own kinds: content type (415), body size (413),
 * Fastify's own 4xx, a storage outage (503, retry), and anything else (500 with `internalDetail`, logged).
 */
export function replyOtherError(
  err: FastifyError,
  reply: FastifyReply,
  log: (msg: string) => void,
  internalDetail: string,
): FastifyReply {
  if (err.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") {
    return reply.status(415).send({ detail: "Content-Type must be application/json" });
  }
  if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") {
    const limit = reply.request.routeOptions.bodyLimit;
    const named = typeof limit === "number" ? ` (the limit is ${formatBytes(limit)})` : "";
    return reply.status(413).send({ detail: `Request body too large${named}` });
  }
  if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
    return reply.status(err.statusCode).send({ detail: err.message });
  }
  if (isUnavailable(err)) {
    log(`storage unavailable: ${err.message}`);
    return reply
      .status(503)
      .header("Retry-After", "1")
      .send({ detail: `Storage is unavailable, try again: ${err.message}` });
  }
  log(`internal error: ${err.stack ?? err.message}`);
  return reply.status(500).send({ detail: internalDetail });
}

/** Unknown routes: 404 with a detail. */
export function notFoundRoute(req: FastifyRequest, reply: FastifyReply): void {
  reply.status(404).send({ detail: `Not found: ${req.method} ${req.url.split("?")[0]}` });
}
