// Generative UI routes: `POST /ui/{agent}` answers the HTML the SDK's `LoadExternalComponent` inserts (link and
// script tags whose `onload` renders the named component), `GET /ui/{agent}/{file}` serves the bundled assets.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { uiGlobalName, type UiBundles } from "../graphs/ui-bundle.js";
import type { ApiContext } from "./context.js";
import { notFound } from "./errors.js";

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/** For a single-quoted attribute (the official shape: `onload='__LGUI_agent.render("name", "{{shadowRootId}}")'`). */
const escapeAttr = (s: string) => s.replace(/&/g, "&amp;").replace(/'/g, "&#39;");

/**
 * Where the browser fetches assets: the request's own host (as the official server does: `http:` for
 * localhost and 127.0.0.1, the page's protocol otherwise), or a path on the same origin when there is no Host.
 */
function assetBase(host: string | undefined): string {
  if (!host) return "";
  const local = ["localhost", "127.0.0.1"].some((h) => host === h || host.startsWith(`${h}:`));
  return `${local ? "http:" : ""}//${host}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function uiRoutes(ctx: ApiContext, bundles: UiBundles): FastifyPluginAsyncZod {
  return async (app) => {
    const hide = true;
    app.post(
      "/ui/:agent",
      {
        schema: {
          hide,
          params: z.object({ agent: z.string() }),
          body: z.object({ name: z.string().min(1) }).passthrough(),
        },
      },
      async (req, reply) => {
        // The loader asks with the stream's assistant id: a graph id (as the official server expects), or
        // here also the id of an assistant of that graph.
        let agent = req.params.agent;
        if (!bundles.has(agent) && UUID.test(agent)) {
          agent = (await ctx.guard.assistant(req, agent, "assistants:read")).graph_id;
        }
        const files = bundles.get(agent);
        if (!files?.length) throw notFound(`UI not found for agent "${agent}"`);
        const base = `${assetBase(req.headers.host)}/ui/${encodeURIComponent(agent)}`;
        const tags: string[] = [];
        for (const css of files.filter((f) => f.basename.endsWith(".css"))) {
          tags.push(`<link rel="stylesheet" href="${base}/${css.basename}" />`);
        }
        const js = files.find((f) => f.basename.endsWith(".js"));
        if (js) {
          const call = `${uiGlobalName(agent)}.render(${JSON.stringify(req.body.name)}, "{{shadowRootId}}")`;
          tags.push(`<script src="${base}/${js.basename}" onload='${escapeAttr(call)}'></script>`);
        }
        return reply.type("text/html; charset=utf-8").send(tags.join("\n"));
      },
    );
    app.get(
      "/ui/:agent/:file",
      { schema: { hide, params: z.object({ agent: z.string(), file: z.string() }) } },
      async (req, reply) => {
        const { agent, file } = req.params;
        const found = bundles.get(agent)?.find((f) => f.basename === file);
        if (!found) throw notFound(`UI file not found: ${agent}/${file}`);
        const ext = file.slice(file.lastIndexOf("."));
        return reply.type(TYPES[ext] ?? "application/octet-stream").send(Buffer.from(found.contents));
      },
    );
  };
}
