// Builds the control plane's Fastify application: FastAPI-style validation and errors, the OpenAPI document
// and docs page, the health route, the API (behind the API key) and the upload PUT (behind its token).
import { createRequire } from "node:module";
import fastify, { type FastifyInstance } from "fastify";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import { jsonSchemaTransform, serializerCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import { authenticate, setPrincipal } from "./auth.js";
import type { CpContext } from "./context.js";
import { cpNotFoundRoute, CpValidationError, installCpErrorHandler } from "./errors.js";
import { cpValidatorCompiler } from "./validation.js";
import { deploymentRoutes } from "./api/deployments.js";
import { listenerAgentRoutes } from "./api/listener-agent.js";
import { listenerRoutes } from "./api/listeners.js";
import { logRoutes } from "./api/logs.js";
import { revisionRoutes } from "./api/revisions.js";
import { uploadPutRoute, uploadUrlRoutes } from "./api/uploads.js";

export const CP_VERSION: string = createRequire(import.meta.url)("../../package.json").version;

/** Parses JSON bodies; an empty body is no body (a required one is then reported missing). */
function installJsonParser(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      const error = (e as Error).message;
      const pos = Number(/position (\d+)/.exec(error)?.[1] ?? 0);
      done(
        new CpValidationError([
          { type: "json_invalid", loc: ["body", pos], msg: "JSON decode error", input: {}, ctx: { error } },
        ]),
        undefined,
      );
    }
  });
}

export async function buildCpApp(
  ctx: CpContext,
  extraRoutes?: (app: FastifyInstance) => void | Promise<void>,
): Promise<FastifyInstance> {
  const app = fastify({ forceCloseConnections: true }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(cpValidatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
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
  if (extraRoutes) await extraRoutes(app);
  app.setNotFoundHandler(cpNotFoundRoute);
  return app;
}
