// The Agent Server's answers to errors: the registry's errors (lib/errors.ts) with the status of their code, and
// Fastify's own, as the official `{detail}` JSON body. Domain code throws registry errors and never sees HTTP.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { invalidInput, type InvalidInputError } from "../lib/errors.js";
import { httpStatus, replyOtherError } from "../lib/http-errors.js";
import { describePath, type InputProblem } from "../lib/json-limits.js";
import type { Logger } from "../lib/logger.js";

// The registry's constructors the routes throw (api/ keeps its historical name for invalid input).
export { conflict, notFound, invalidInput as unprocessable } from "../lib/errors.js";

/** The 422 for input that breaks the limits of lib/json-limits.ts (depth, NUL, lone surrogate), naming where. */
export function inputError(root: "body" | "query" | "path", problem: InputProblem): InvalidInputError {
  return invalidInput(`Invalid request: ${describePath(root, problem.path)}: ${problem.message}`, root);
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

export function installErrorHandler(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err: FastifyError, _req, reply) => {
    const status = httpStatus(err);
    if (status !== undefined) return reply.status(status).send({ detail: err.message });
    if (hasZodFastifySchemaValidationErrors(err)) {
      return reply.status(422).send({ detail: `Invalid request: ${describeValidation(err)}` });
    }
    if (err.code === "FST_ERR_CTP_INVALID_JSON_BODY" || err instanceof SyntaxError) {
      return reply.status(422).send({ detail: `Malformed JSON body: ${err.message}` });
    }
    return replyOtherError(err, reply, log, "Internal server error");
  });
}

/** Unknown routes: 404 with a detail. */
export function notFoundRoute(req: FastifyRequest, reply: FastifyReply): void {
  reply.status(404).send({ detail: `Not found: ${req.method} ${req.url.split("?")[0]}` });
}
