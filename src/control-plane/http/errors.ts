// Error answers of the control plane, as the official (FastAPI) one gives them: the registry's errors
// (lib/errors.ts) as `{"detail": "<message>"}` with the status of their code, and 422 `HTTPValidationError`
// `{"detail": [{type, loc, msg, input, ctx?}]}` for every invalid request (schema checks and the rules it
// cannot say alike: never a 400).
import type { Logger } from "../../lib/logger.js";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  ConflictError,
  ForbiddenError,
  InvalidInputError,
  NotFoundError,
  TooLargeError,
  UnauthorizedError,
} from "../../lib/errors.js";
import { httpStatus, replyOtherError } from "../../lib/http-errors.js";

export const unauthorized = (detail: string) => new UnauthorizedError(detail);
export const forbidden = (detail: string) => new ForbiddenError(detail);
export const notFound = (detail: string) => new NotFoundError(detail);
export const conflict = (detail: string) => new ConflictError(detail);
export const tooLarge = (detail: string) => new TooLargeError(detail);

/** One item of an HTTPValidationError, in pydantic's key order. */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** A 422 HTTPValidationError: invalid input, with pydantic's items. */
export class CpValidationError extends InvalidInputError {
  /** The status Fastify gives it when its validator compiler returns it. */
  statusCode = 422;
  constructor(public items: ValidationItem[]) {
    super(items.map((i) => `${i.loc.join(".")}: ${i.msg}`).join("; "));
  }
}

/** A 422 for a rule the schema cannot say (pydantic's `value_error`). */
export function valueError(loc: (string | number)[], message: string, input?: unknown): CpValidationError {
  return new CpValidationError([
    { type: "value_error", loc, msg: `Value error, ${message}`, input, ctx: { error: message } },
  ]);
}

export const deploymentNotFound = (id: string) => notFound(`Deployment ID ${id} not found.`);
export const revisionNotFound = (id: string) => notFound(`Revision ID ${id} not found.`);
export const listenerNotFound = (id: string) => notFound(`Listener ID ${id} not found.`);

export function installCpErrorHandler(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err instanceof CpValidationError) return reply.status(422).send({ detail: err.items });
    // Invalid input without pydantic's items still answers an HTTPValidationError (never `{detail: "..."}`).
    if (err instanceof InvalidInputError) {
      const field = typeof err.details.field === "string" ? [err.details.field] : [];
      return reply.status(422).send({ detail: valueError(["body", ...field], err.message).items });
    }
    const status = httpStatus(err);
    if (status !== undefined) return reply.status(status).send({ detail: err.message });
    return replyOtherError(err, reply, log, "Internal Server Error");
  });
}

/** Unknown routes: 404 `{"detail": "Not Found"}`, FastAPI's answer. */
export function cpNotFoundRoute(_req: FastifyRequest, reply: FastifyReply): void {
  reply.status(404).send({ detail: "Not Found" });
}
