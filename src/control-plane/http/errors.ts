// Error shapes of the control plane, as the official (FastAPI) one answers: `{"detail": "<message>"}` for
// 4xx errors, and 422 `HTTPValidationError` `{"detail": [{type, loc, msg, input, ctx?}]}` for every invalid
// request (the schema's checks and the rules it cannot say alike: never a 400).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { CpConflictError } from "../domain/types.js";
import { replyOtherError } from "../../api/errors.js";

/** An error answered as `{"detail": detail}` with its status. */
export class CpHttpError extends Error {
  constructor(
    public status: number,
    public detail: string,
  ) {
    super(detail);
  }
}

export const unauthorized = (detail: string) => new CpHttpError(401, detail);
export const forbidden = (detail: string) => new CpHttpError(403, detail);
export const notFound = (detail: string) => new CpHttpError(404, detail);
export const conflict = (detail: string) => new CpHttpError(409, detail);

/** One item of an HTTPValidationError, in pydantic's key order. */
export interface ValidationItem {
  type: string;
  loc: (string | number)[];
  msg: string;
  input?: unknown;
  ctx?: Record<string, unknown>;
}

/** A 422 HTTPValidationError. */
export class CpValidationError extends Error {
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

export function installCpErrorHandler(app: FastifyInstance, log: (msg: string) => void): void {
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    if (err instanceof CpHttpError) return reply.status(err.status).send({ detail: err.detail });
    if (err instanceof CpValidationError) return reply.status(422).send({ detail: err.items });
    if (err instanceof CpConflictError) return reply.status(409).send({ detail: err.message });
    return replyOtherError(err, reply, log, "Internal Server Error");
  });
}

/** Unknown routes: 404 `{"detail": "Not Found"}`, FastAPI's answer. */
export function cpNotFoundRoute(_req: FastifyRequest, reply: FastifyReply): void {
  reply.status(404).send({ detail: "Not Found" });
}
