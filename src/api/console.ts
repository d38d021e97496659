// The web console (console/, bundled into dist/console by `npm run build`) at /console/: static files. They hold
// no data and are served without credentials, like /docs; everything the console shows it reads through the API,
// with the credential the user enters (the API's own auth applies to every one of those calls).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyPluginAsync } from "fastify";
import { notFound } from "./errors.js";

/** dist/console of this installation, whether the server runs from dist/ or from src/ (both two folders below). */
export const CONSOLE_DIR = fileURLToPath(new URL("../../dist/console/", import.meta.url));

/** The console's paths, which need no credential (the data they load does). */
export const isConsolePath = (path: string): boolean => path === "/console" || path.startsWith("/console/");

export function consoleRoutes(dir = CONSOLE_DIR): FastifyPluginAsync {
  return async (app) => {
    // The folder form, so the console's relative asset paths resolve under it (behind a mount prefix too).
    app.get("/console", { schema: { hide: true } }, (_req, reply) => reply.redirect("console/"));
    if (!existsSync(join(dir, "index.html"))) {
      app.get("/console/*", { schema: { hide: true } }, async () => {
        throw notFound("The console is not built in this installation: run `npm run build`");
      });
      return;
    }
    await app.register(fastifyStatic, {
      root: dir,
      prefix: "/console/",
      // @fastify/swagger-ui registers its own instance; this one adds nothing to the reply.
      decorateReply: false,
      index: ["index.html"],
      // The folder also holds the control plane's page (served at the control plane's root), not this server's.
      allowedPath: (path) => !path.endsWith("/control-plane.html"),
      schemaHide: true,
      cacheControl: true,
      maxAge: 0,
    });
  };
}
