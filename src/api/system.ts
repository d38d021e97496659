// System routes: health, server info.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { ApiContext } from "./context.js";

export function systemRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    const tags = ["System"];
    app.get("/ok", { schema: { tags } }, async () => ({ ok: true }));
    app.get("/info", { schema: { tags } }, async () => ({
      version: ctx.version,
      server: "hangar",
      // The project's own @langchain/langgraph (the one its graphs run on), as the official server reports.
      langgraph_js_version: ctx.graphs.langgraphVersion(),
      flags: { assistants: true, crons: true, langsmith: false, langsmith_tracing_replicas: false },
      graphs: ctx.graphs.ids(),
    }));
  };
}
