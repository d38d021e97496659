// Error answers of the control plane, as the official (FastAPI) one gives them: the registry's errors
// (lib/errors.ts; the control plane's own in domain/errors.ts) as `{"detail": "<message>"}` with the status of their code, and 422 `HTTPValidationError`
// `{"detail": [{type, loc, msg, input, ctx?}]}` for every invalid request (schema checks and the rules it
// cannot say alike: never a 400).
import type { Logger } from "../../lib/logger.js";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { InvalidInputError } from "../../lib/errors.js";
import { httpStatus, replyOtherError } from "../../lib/http-errors.js";
import { CpValidationError, valueError } from "../domain/errors.js";

// The domain's errors, for the routes (they raise them; this module answers them).
export {
  conflict,
  CpValidationError,
  deploymentNotFound,
  forbidden,
  listenerNotFound,
  notFound,
  revisionNotFound,
  tooLarge,
  unauthorized,
  valueError,
  type ValidationItem,
} from "../domain/errors.js";

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
