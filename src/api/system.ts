// System routes: health, server info.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { createRequire } from "node:module";
import type { ApiContext } from "./context.js";

const LANGGRAPH_VERSION: string = createRequire(import.meta.url)("@langchain/langgraph/package.json").version;

export function systemRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    const tags = ["System"];
    app.get("/ok", { schema: { tags } }, async () => ({ ok: true }));
    app.get("/info", { schema: { tags } }, async () => ({
      version: ctx.version,
      server: "hangar",
      langgraph_js_version: LANGGRAPH_VERSION,
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
      graphs: ctx.graphs.ids(),
    }));
  };
}
