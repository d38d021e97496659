// Builds the Fastify application of the Agent Server: validation, OpenAPI document, docs page, routes.
import fastify, { type FastifyInstance } from "fastify";
import websocket from "@fastify/websocket";
import swagger from "@fastify/swagger";
import swaggerUi from "@fastify/swagger-ui";
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from "fastify-type-provider-zod";
import { RawJson, toJson } from "../lib/serde.js";
import { enterEncryptionUser } from "../lib/encryption-context.js";
import { assistantRoutes } from "./assistants.js";
import type { ApiContext } from "./context.js";
import { frameworkErrorHandler, inputError, installErrorHandler, notFoundRoute } from "./errors.js";
import { installJsonLimits } from "../lib/json-limits.js";
import { installCors } from "./cors.js";
import type { Logger } from "../lib/logger.js";
import { setLoopbackAddress } from "../lib/loopback.js";
import { fastifyLogging, logRequests } from "../lib/request-log.js";
import { schemaCompilers } from "../lib/schema-compilers.js";
import { uiRoutes } from "./ui.js";
import { consoleRoutes, isConsolePath } from "./console.js";
import { UserAppMount } from "./user-app.js";
import { runRoutes } from "./runs.js";
import { storeRoutes } from "./store.js";
import { cronRoutes } from "./crons.js";
import { a2aRoutes } from "./a2a.js";
import { protocolRoutes } from "./protocol.js";
import { isInnerRequest } from "./inner.js";
import { mcpRoutes } from "./mcp.js";
import { metricsRoutes } from "./metrics.js";
import { systemRoutes } from "./system.js";
import { threadImportRoutes } from "./thread-import.js";
import { threadRoutes } from "./threads.js";

const BODY_LIMIT = 50 * 1024 * 1024;

export async function buildApp(ctx: ApiContext, log: Logger): Promise<FastifyInstance> {
  const app = fastify({
    ...fastifyLogging(log),
    bodyLimit: BODY_LIMIT,
    forceCloseConnections: true,
    // A URL that does not percent-decode (e.g. an encoded lone surrogate) is a 422 {detail}, not Fastify's 400.
    frameworkErrors: frameworkErrorHandler,
    schemaController: schemaCompilers(validatorCompiler, serializerCompiler),
  }).withTypeProvider<ZodTypeProvider>();
  // A request the user's app hands back to Hangar's routes is logged once, as the user app's request.
  // Not logged twice: what the project's app hands back to Hangar, and the API requests made in-process (MCP, protocol v2).
  logRequests(app, log, { skip: (req) => (mount?.isForwarded(req) ?? false) || isInnerRequest(req) });
  installErrorHandler(app, log);
  ctx.metrics.instrument(app);
  // Every JSON response goes through one serializer that writes LangChain messages as dicts.
  app.setReplySerializer((payload) => (payload instanceof RawJson ? payload.json : toJson(payload)));

  // JSON bodies: an empty one (SDK calls without a payload), or none at all with no Content-Type (`curl -X POST`),
  // is treated as {}; malformed JSON, nesting deeper than MAX_JSON_DEPTH, and NUL or lone-surrogate strings or
  // keys are refused with a 422 naming where.
  installJsonLimits(app, {
    emptyBody: {},
    malformed: (e) => Object.assign(e, { statusCode: 422, code: "FST_ERR_CTP_INVALID_JSON_BODY" }),
    problem: (root, problem) => inputError(root, problem),
  });

  // CORS first: preflights are answered before authentication, and every response carries the headers.
  await installCors(app, ctx.http?.cors);

  // Authentication on every request but health, server info, docs and the OpenAPI document (as in the
  // official server). /internal/* authenticates with its own token (see server.ts), not the project's auth.
  const open = new Set(["/ok", "/info", "/openapi.json", "/internal/recover"]);
  // UI assets (GET /ui/...) are loaded by <script>/<link> tags, which send no credentials. A request the
  // project's app (http.app) handed on to Hangar's routes was authenticated when it arrived.
  const mount = ctx.userApp ? new UserAppMount(app, ctx.userApp, log, BODY_LIMIT) : undefined;
  if (mount) app.addHook("onRequest", mount.recognise);
  app.decorateRequest("user", null);
  app.addHook("onRequest", async (req) => {
    const path = req.url.split("?")[0];
    if (open.has(path) || path === "/docs" || path.startsWith("/docs/")) return;
    if (ctx.console && req.method === "GET" && isConsolePath(path)) return;
    if (mount?.isForwarded(req) || (ctx.ui && req.method === "GET" && path.startsWith("/ui/"))) return;
    req.user = await ctx.guard.auth.authenticate(req);
  });

  // Store and cron actions go through the auth handlers. Store handlers see the namespace as the SDK's
  // Auth types name it (`namespace`) and may rewrite it (e.g. prefix it with the user's identity); the
  // route then uses the rewritten one; the filter they return scopes the items the route reads or writes
  // (store-auth.ts). Cron handlers may add metadata to a cron being created, and the filter they return
  // limits which crons the request sees (applied in the storage query).
  const events: Record<string, [string, string?]> = {
    "PUT /store/items": ["store:put", "namespace"],
    "GET /store/items": ["store:get", "namespace"],
    "DELETE /store/items": ["store:delete", "namespace"],
    "POST /store/items/search": ["store:search", "namespace_prefix"],
    "POST /store/namespaces": ["store:list_namespaces", "prefix"],
    "POST /runs/crons": ["crons:create"],
    "POST /threads/:thread_id/runs/crons": ["crons:create"],
    "POST /runs/crons/search": ["crons:search"],
    "POST /runs/crons/count": ["crons:search"],
    "GET /runs/crons/:cron_id": ["crons:read"],
    "PATCH /runs/crons/:cron_id": ["crons:update"],
    "DELETE /runs/crons/:cron_id": ["crons:delete"],
  };
  app.addHook("preHandler", async (req) => {
    // A HEAD request runs its GET's handler, so it goes through the GET's auth handler too.
    const method = req.method === "HEAD" ? "GET" : req.method;
    const found = events[`${method} ${req.routeOptions.url}`];
    if (!found) return;
    const [event, nsField] = found;
    const source = (method === "GET" ? req.query : req.body) as Record<string, unknown> | undefined;
    const value: Record<string, unknown> = { ...(source ?? {}) };
    if (nsField) {
      const ns = source?.[nsField];
      value.namespace = typeof ns === "string" ? ns.split(".").filter(Boolean) : (ns ?? []);
    }
    req.authFilter = await ctx.guard.filter(req, event, value);
    if (nsField && source) source[nsField] = value.namespace;
    if (event === "crons:create" && source && value.metadata !== undefined) source.metadata = value.metadata;
  });

  // Custom encryption at rest: what the handler writes is encrypted for the request's user. Entered in a hook that
  // ends synchronously, so the route's handler (and what it starts) runs in that scope.
  if (ctx.encryptionScoped) {
    app.addHook("preHandler", (req, _reply, done) => {
      enterEncryptionUser(req.user);
      done();
    });
  }

  // Nothing is acknowledged or shown before it is durable: every response waits until what was written so
  // far is committed and fsynced (a read may otherwise show a running run's checkpoint that a crash in the
  // next few ms would lose). With nothing pending this costs nothing.
  app.addHook("onSend", async () => {
    await ctx.storage.sync();
  });

  // WebSocket upgrades (protocol v2) go through the same hooks as requests: authentication, CORS, the guard.
  await app.register(websocket);
  await app.register(swagger, {
    openapi: {
      info: {
        title: "Hangar Agent Server",
        version: ctx.version,
        description: "The LangGraph Agent Server API, served by Hangar",
      },
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: "/docs" });
  app.get("/openapi.json", { schema: { hide: true } }, async () => app.swagger());

  const http = ctx.http ?? {};
  if (!http.disable_meta) {
    await app.register(systemRoutes(ctx));
    await app.register(metricsRoutes(ctx));
  } else app.get("/ok", { schema: { hide: true } }, async () => ({ ok: true }));
  if (!http.disable_assistants) await app.register(assistantRoutes(ctx));
  if (!http.disable_threads) {
    await app.register(threadRoutes(ctx));
    await app.register(threadImportRoutes(ctx));
  }
  if (!http.disable_runs) {
    await app.register(runRoutes(ctx));
    await app.register(cronRoutes(ctx));
  }
  if (!http.disable_store) await app.register(storeRoutes(ctx));
  if (!http.disable_mcp) await app.register(mcpRoutes(ctx));
  if (!http.disable_a2a) await app.register(a2aRoutes(ctx));
  if (!http.disable_runs && !http.disable_protocol) await app.register(protocolRoutes(ctx));
  if (ctx.ui) await app.register(uiRoutes(ctx, ctx.ui));
  if (ctx.console) await app.register(consoleRoutes());
  // The project's own app (http.app) sees requests last of the request hooks (after CORS and authentication),
  // before any route; see user-app.ts.
  if (mount) app.addHook("onRequest", mount.dispatch);
  app.setNotFoundHandler(notFoundRoute);
  // `new Client()` without apiUrl (in a custom route or a graph node) and relative webhooks reach this server.
  app.addHook("onListen", async () => {
    const addr = app.server.address();
    if (addr && typeof addr === "object") setLoopbackAddress(addr.address, addr.port);
  });
  return app;
}
