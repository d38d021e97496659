// A2A at /a2a/{assistant_id} (JSON-RPC, A2A v1.0 and the v0.3 method names) and the agent card at
// /.well-known/agent-card.json?assistant_id=: the official A2A SDK parses, validates and answers the protocol
// (and translates v0.3) over the handler of ./a2a-handler.ts. See docs/a2a.md.
import type { FastifyReply } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { ApiContext } from "./context.js";
import { a2aHandler } from "./a2a-handler.js";
import { loadA2aSdk } from "./a2a-parts.js";

export function a2aRoutes(ctx: ApiContext): FastifyPluginAsyncZod {
  return async (app) => {
    const notFound = (reply: FastifyReply, assistantId: string) =>
      reply.code(404).send({ detail: `Assistant ${assistantId} not found` });

    app.post<{ Params: { assistant_id: string } }>(
      "/a2a/:assistant_id",
      { schema: { tags: ["A2A"] } },
      async (req, reply) => {
        const s = await loadA2aSdk();
        const handler = await a2aHandler(ctx, app, req, req.params.assistant_id, s);
        if (!handler) return notFound(reply, req.params.assistant_id);
        const body = req.body as { method?: unknown; id?: unknown } | undefined;
        // v0.3 method names ("message/send") go through the SDK's translation; v1.0 ones ("SendMessage") as they are.
        const legacy = typeof body?.method === "string" && body.method.includes("/");
        const context = s.server.defaultServerCallContextBuilder({
          extensions: undefined,
          user: undefined,
          headers: req.headers,
          requestedVersion: legacy ? "0.3" : "1.0",
        });
        const transport = legacy
          ? new s.legacy.LegacyJsonRpcTransportHandler(handler)
          : new s.server.JsonRpcTransportHandler(handler);
        const answer = await transport.handle(req.body as Record<string, unknown>, context);
        if (typeof (answer as AsyncGenerator)?.[Symbol.asyncIterator] !== "function")
          return reply.send(answer);
        const rpcError = (e: unknown) => ({
          jsonrpc: "2.0",
          id: body?.id ?? null,
          error: legacy
            ? s.legacy.LegacyJsonRpcTransportHandler.mapToLegacyJSONRPCError(e)
            : s.server.JsonRpcTransportHandler.mapToJSONRPCError(e),
        });
        // A stream whose first step fails (an unknown task) is answered as a plain JSON-RPC error.
        const events = (answer as AsyncGenerator<unknown>)[Symbol.asyncIterator]();
        let first: IteratorResult<unknown>;
        try {
          first = await events.next();
        } catch (e) {
          return reply.send(rpcError(e));
        }
        // Else SSE, each JSON-RPC response a `data:` line; an error mid-stream ends it as an `error` event.
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, { ...reply.getHeaders(), ...s.core.SSE_HEADERS } as Record<string, string>);
        try {
          for (let step = first; !step.done; step = await events.next()) {
            res.write(s.core.formatSSEEvent(step.value as never));
          }
        } catch (e) {
          res.write(s.core.formatSSEErrorEvent(rpcError(e) as never));
        }
        res.end();
      },
    );

    app.get<{ Querystring: { assistant_id?: string } }>(
      "/.well-known/agent-card.json",
      { schema: { tags: ["A2A"] } },
      async (req, reply) => {
        const id = req.query.assistant_id;
        if (!id)
          return reply
            .code(422)
            .send({ detail: "assistant_id: required (the assistant whose card to show)" });
        const handler = await a2aHandler(ctx, app, req, id, await loadA2aSdk());
        if (!handler) return notFound(reply, id);
        return reply.send(await handler.getAgentCard());
      },
    );
  };
}
