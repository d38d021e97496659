// The control plane's web console (console/control-plane.html, bundled into dist/console by `npm run build`) at
// the control plane's root: `/` answers its page and `/assets/*` the bundles it loads (relative paths, shared with
// the Agent Server's console). Static files: they hold no data and are served without a key, like /docs; what the
// console shows it reads through the API, with the key the user enters (the API's own auth applies to each call).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";
import { notFound } from "./errors.js";

/** dist/console of this installation, whether the control plane runs from dist/ or from src/ (three folders below). */
export const CP_CONSOLE_DIR = fileURLToPath(new URL("../../../dist/console/", import.meta.url));

const PAGE = "control-plane.html";

export function cpConsoleRoutes(dir = CP_CONSOLE_DIR): FastifyPluginAsync {
  return async (app) => {
    const page = join(dir, PAGE);
    if (!existsSync(page)) {
      const missing = async () => {
        throw notFound("The control plane's console is not built in this installation: run `npm run build`");
      };
      app.get("/", { schema: { hide: true } }, missing);
      app.get("/assets/*", { schema: { hide: true } }, missing);
      return;
    }
    // Read at each request: a rebuild next to a running control plane is served without a restart.
    app.get("/", { schema: { hide: true } }, async (_req, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-cache")
        .send(readFileSync(page, "utf8")),
    );
    await app.register(fastifyStatic, {
      root: join(dir, "assets"),
      prefix: "/assets/",
      // Swagger UI registers its own instance; this one adds nothing to the reply.
      decorateReply: false,
      index: false,
      schemaHide: true,
      cacheControl: true,
      maxAge: 0,
    });
  };
}
