// The HTTP side of the error registry, shared by the two HTTP layers (api/ and the control plane's): the status
// of each error code, and the answers both servers give alike to errors that are not their own.
// Only HTTP code imports this module (the import check in eslint.config.js keeps domain code out).
import type { FastifyError, FastifyReply } from "fastify";
import { HangarError, isConnectionLost, type ErrorCode } from "./errors.js";
import type { Logger } from "./logger.js";

/** The status of each code a request can fail with; codes not here are not a client's doing (500). */
const STATUS: Partial<Record<ErrorCode, number>> = {
  not_found: 404,
  conflict: 409,
  busy: 409,
  invalid_input: 422,
  too_large: 413,
  unauthorized: 401,
  forbidden: 403,
};

/**
 * The HTTP status of an error, or undefined when it is not one a request fails with on purpose. The project's
 * auth handler may choose its own status (an HTTPException) for `unauthorized` and `forbidden`.
 */
export function httpStatus(err: unknown): number | undefined {
  if (!(err instanceof HangarError)) return undefined;
  const own = err.details.status;
  if ((err.code === "unauthorized" || err.code === "forbidden") && typeof own === "number") return own;
  return STATUS[err.code];
}

/** "50 MB", "1 MB", "512 KB": a body limit for messages. */
function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KB`;
  return `${n} bytes`;
}

/**
 * The errors every Hangar server answers alike, after its own kinds: content type (415), body size (413),
 * Fastify's own 4xx, a storage outage (503, retry), and anything else (500 with `internalDetail`, logged).
 */
export function replyOtherError(
  err: FastifyError,
  reply: FastifyReply,
  log: Logger,
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
  if (isConnectionLost(err)) {
    log.warn(`storage unavailable: ${err.message}`);
    return reply
      .status(503)
      .header("Retry-After", "1")
      .send({ detail: `Storage is unavailable, try again: ${err.message}` });
  }
  const req = reply.request;
  log.error(
    { err, reqId: req.id },
    `internal error in ${req.method} ${req.url.split("?")[0]}: ${err.message}`,
  );
  return reply.status(500).send({ detail: internalDetail });
}
