// Builds the control plane's Fastify application: FastAPI-style validation and errors, the OpenAPI document
// and docs page, the health route, the API (behind the API key), the upload PUT (behind its token) and the web
// console at the root (static files, without a key).
import { createRequire } from "node:module";
import fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { jsonSchemaTransform, serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { authenticate, setPrincipal } from "./auth.js";
import type { CpContext } from "../domain/context.js";
import { cpNotFoundRoute, CpValidationError, installCpErrorHandler, type ValidationItem } from "./errors.js";
import { installJsonLimits, MAX_JSON_DEPTH, type InputProblem } from "../../lib/json-limits.js";
import { cpValidatorCompiler } from "./validation.js";
import { cpConsoleRoutes } from "./console.js";
import { deploymentRoutes } from "./routes/deployments.js";
import { listenerAgentRoutes } from "./routes/listener-agent.js";
import { listenerRoutes } from "./routes/listeners.js";
import { logRoutes } from "./routes/logs.js";
import { revisionRoutes } from "./routes/revisions.js";
import { uploadPutRoute, uploadUrlRoutes } from "./routes/uploads.js";
import { fastifyLogging, logRequests } from "../../lib/request-log.js";
import { schemaCompilers } from "../../lib/schema-compilers.js";

export const CP_VERSION: string = createRequire(import.meta.url)("../../../package.json").version;

/** An HTTPValidationError item for input that breaks the limits of lib/json-limits.ts. */
function limitItem(root: "body" | "query" | "path", problem: InputProblem, input: unknown): ValidationItem {
  const loc = [root, ...problem.path];
  if (problem.kind === "depth") {
    // Named by the top-level field it is in (the full path is as deep as the limit).
    const error = `nesting deeper than the limit of ${MAX_JSON_DEPTH} levels`;
    return {
      type: "json_invalid",
      loc: loc.slice(0, 2),
      msg: "JSON decode error",
      input: {},
      ctx: { error },
    };
  }
  // The offending string, as pydantic echoes input; a depth error echoes nothing (the input is the whole body).
  return { type: "string_invalid", loc, msg: `Input should be a valid string: ${problem.message}`, input };
}

/**
 * Parses JSON bodies; an empty body is no body (a required one is then reported missing). Malformed JSON,
 * nesting deeper than MAX_JSON_DEPTH and NUL or lone-surrogate strings are 422 HTTPValidationErrors.
 */
function installJsonParser(app: FastifyInstance): void {
  installJsonLimits(app, {
    malformed: (e) => {
      const pos = Number(/position (\d+)/.exec(e.message)?.[1] ?? 0);
      return new CpValidationError([
        {
          type: "json_invalid",
          loc: ["body", pos],
          msg: "JSON decode error",
          input: {},
          ctx: { error: e.message },
        },
      ]);
    },
    problem: (root, problem, value) => new CpValidationError([limitItem(root, problem, value)]),
  });
}

/** Errors Fastify raises before any hook: a URL that does not percent-decode, an over-long path parameter. */
function cpFrameworkErrors(err: FastifyError, _req: FastifyRequest, reply: FastifyReply): void {
  const error = err.code === "FST_ERR_MAX_PARAM_LENGTH" ? "a path parameter is too long" : err.message;
  const item: ValidationItem = {
    type: "value_error",
    loc: ["path"],
    msg: `Value error, ${error}`,
    ctx: { error },
  };
  reply.status(422).send({ detail: [item] });
}

export async function buildCpApp(
  ctx: CpContext,
  extraRoutes?: (app: FastifyInstance) => void | Promise<void>,
): Promise<FastifyInstance> {
  const app = fastify({
    ...fastifyLogging(ctx.log),
    forceCloseConnections: true,
    frameworkErrors: cpFrameworkErrors,
    schemaController: schemaCompilers(cpValidatorCompiler, serializerCompiler),
  }).withTypeProvider<ZodTypeProvider>();
  logRequests(app, ctx.log);
  installCpErrorHandler(app, ctx.log);

  await app.register(swagger, {
    openapi: {
      info: {
        title: "Hangar Control Plane",
        version: CP_VERSION,
        description:
          "Manages deployments, revisions and listeners, following the LangSmith Deployment Control Plane API " +
          "(0.1.0). Authenticate with `X-Api-Key` (or `Authorization: Bearer`); `X-Tenant-Id` picks a workspace " +
          "for an organization key.",
      },
      components: {
        securitySchemes: {
          "API Key": { type: "apiKey", in: "header", name: "X-Api-Key" },
          "Tenant ID": { type: "apiKey", in: "header", name: "X-Tenant-Id" },
          "Bearer Auth": { type: "http", scheme: "bearer" },
        },
      },
      security: [{ "API Key": [] }, { "Tenant ID": [] }, { "Bearer Auth": [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());
  app.get("/ok", { schema: { tags: ["System"], security: [] } }, async () => ({ ok: true }));

  // The API: every route needs a key, and works in the request's workspace.
  await app.register(async (api) => {
    installJsonParser(api);
    api.addHook("onRequest", async (req) => {
      setPrincipal(req, await authenticate(ctx.store, req));
    });
    await api.register(listenerRoutes(ctx));
    await api.register(listenerAgentRoutes(ctx));
    await api.register(deploymentRoutes(ctx));
    await api.register(revisionRoutes(ctx));
    await api.register(uploadUrlRoutes(ctx));
    await api.register(logRoutes(ctx));
  });
  await app.register(uploadPutRoute(ctx));
  await app.register(cpConsoleRoutes());
  if (extraRoutes) await extraRoutes(app);
  app.setNotFoundHandler(cpNotFoundRoute);
  return app;
}
