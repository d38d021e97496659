// Protocol v2 over WebSocket (`GET /threads/{id}/stream/events` upgraded): the commands of the HTTP transport
// in-band, plus `subscription.subscribe` / `unsubscribe` / `reconnect`. The connection reads the thread's event
// log once and sends each protocol event that matches one of its subscriptions, once.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { matchesSubscription } from "@langchain/langgraph/stream";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { protocolError as error, protocolLog } from "../runs/protocol-run.js";
import type { ApiContext } from "./context.js";

/** Bytes queued on a socket past which the connection's log read waits for the client. */
const SOCKET_HIGH_WATER = 1024 * 1024;

/** A command, on either transport. */
export const Command = z.object({
  id: z.number().int().nonnegative(),
  method: z.string().min(1),
  params: z.record(z.string(), z.unknown()).optional(),
});
type Cmd = z.infer<typeof Command>;

/** What a subscription (or an SSE event stream) asks for. */
export const Subscription = z.object({
  channels: z.array(z.string().min(1)).min(1),
  namespaces: z.array(z.array(z.string())).optional(),
  depth: z.number().int().nonnegative().optional(),
  since: z.number().int().nonnegative().optional(),
});
type Filter = Omit<z.infer<typeof Subscription>, "since">;

export interface SocketDeps {
  listening: (req: FastifyRequest) => Promise<void>;
  answer: (req: FastifyRequest, threadId: string, cmd: Cmd) => Promise<unknown>;
}

export function registerProtocolSocket(app: FastifyInstance, ctx: ApiContext, deps: SocketDeps): void {
  app.get(
    "/threads/:thread_id/stream/events",
    { websocket: true, preHandler: deps.listening, schema: { hide: true } },
    (socket: WebSocket, req: FastifyRequest) => {
      const threadId = (req.params as { thread_id: string }).thread_id;
      const subscriptions = new Map<string, Filter>();
      let cursor: AbortController | undefined;
      const send = (msg: unknown) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(msg));
      };
      /**
       * Sends an event; once more than a high-water mark waits to go out (a slow client), waits until this one
       * is written, so a slow reader holds back its own read of the log rather than the server's memory.
       */
      const sendEvent = (msg: unknown): Promise<void> | void => {
        if (socket.readyState !== socket.OPEN) return;
        if (socket.bufferedAmount < SOCKET_HIGH_WATER) return socket.send(JSON.stringify(msg));
        return new Promise((resolve) => socket.send(JSON.stringify(msg), () => resolve()));
      };
      /** Reads the thread's log from `from` on, sending what any subscription wants (a new read replaces the last). */
      const read = (from: number | "next") => {
        cursor?.abort();
        const ac = (cursor = new AbortController());
        void (async () => {
          try {
            for await (const event of protocolLog(ctx.broker.thread(threadId), from, ac.signal)) {
              if ([...subscriptions.values()].some((f) => matchesSubscription(event as never, f as never))) {
                await sendEvent(event);
              }
            }
          } catch {
            // the connection went away
          }
        })();
      };
      ctx.metrics.streamClients.inc();
      socket.on("close", () => {
        cursor?.abort();
        ctx.metrics.streamClients.dec();
      });
      socket.on("message", async (raw) => {
        let payload: unknown;
        try {
          payload = JSON.parse(String(raw));
        } catch {
          return send(error(null, "invalid_argument", "commands are JSON objects"));
        }
        const parsed = Command.safeParse(payload);
        if (!parsed.success) {
          return send(error(null, "invalid_argument", "a command has an integer id and a method"));
        }
        const cmd = parsed.data;
        const p = cmd.params ?? {};
        if (cmd.method === "subscription.subscribe") {
          const asked = Subscription.safeParse(p);
          if (!asked.success) {
            const issue = asked.error.issues[0];
            return send(error(cmd.id, "invalid_argument", `${issue.path.join(".")}: ${issue.message}`));
          }
          // `since` says where the connection's read starts, not what the subscription matches.
          const { since, ...filter } = asked.data;
          const id = randomUUID();
          subscriptions.set(id, filter);
          send({ type: "success", id: cmd.id, result: { subscription_id: id } });
          // The first subscription starts the read: after `since`, else what the log holds.
          if (!cursor) read(since === undefined ? 0 : since + 1);
          return;
        }
        if (cmd.method === "subscription.unsubscribe") {
          const id = String(p.subscription_id ?? "");
          if (!subscriptions.delete(id))
            return send(error(cmd.id, "no_such_subscription", `no subscription ${id}`));
          return send({ type: "success", id: cmd.id, result: {} });
        }
        if (cmd.method === "subscription.reconnect") {
          send({ type: "success", id: cmd.id, result: {} });
          read(typeof p.since === "number" ? p.since + 1 : 0);
          return;
        }
        send(
          await deps
            .answer(req, threadId, cmd)
            .catch((e: Error) => error(cmd.id, "unknown_error", e.message)),
        );
      });
    },
  );
}
