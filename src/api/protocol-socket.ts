// Protocol v2 over WebSocket (`GET /threads/{id}/stream/events` upgraded): the commands of the HTTP transport
// in-band, plus `subscription.subscribe` / `unsubscribe` / `reconnect`. The connection reads the thread's event
// log once and sends each protocol event that matches one of its subscriptions, once.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { matchesSubscription } from "@langchain/langgraph/stream";
import { randomUUID } from "node:crypto";
import { z } from "zod";
import {
  appliedThroughSeq,
  protocolError as error,
  protocolLog,
  readToHead,
  sequenced,
} from "../runs/protocol-run.js";
import { ForbiddenError } from "../lib/errors.js";
import { streamLimits } from "../streams/limits.js";
import type { ApiContext } from "./context.js";
import { originPolicy, parseCorsConfig } from "./cors.js";

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
  // Browsers apply no CORS to WebSockets: a page of any site may open one to this server, with the cookies it
  // holds for it. An upgrade from a browser origin that `http.cors` does not allow is refused here.
  const allowed = originPolicy(parseCorsConfig(ctx.http?.cors));
  const sameOrigins = async (req: FastifyRequest) => {
    const origin = req.headers.origin;
    if (origin !== undefined && !allowed(origin)) {
      throw new ForbiddenError(`origin ${origin} is not allowed by http.cors`);
    }
  };
  app.get(
    "/threads/:thread_id/stream/events",
    { websocket: true, preHandler: [sameOrigins, deps.listening], schema: { hide: true } },
    (socket: WebSocket, req: FastifyRequest) => {
      const threadId = (req.params as { thread_id: string }).thread_id;
      const subscriptions = new Map<string, Filter>();
      let cursor: AbortController | undefined;
      const send = (msg: unknown) => {
        if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(msg));
      };
      /**
       * Sends an event. Past HANGAR_STREAM_BUFFER_BYTES waiting to go out (a slow client) it waits until this one
       * is written, so a slow reader holds back its own read of the log rather than the server's memory; a client
       * that takes nothing for HANGAR_STREAM_STALL_SECONDS is dropped, as on SSE.
       */
      const sendEvent = (msg: unknown): Promise<void> | void => {
        if (socket.readyState !== socket.OPEN) return;
        const limits = streamLimits();
        if (socket.bufferedAmount < limits.bufferBytes) return socket.send(JSON.stringify(msg));
        return new Promise<void>((resolve) => {
          let waiting = socket.bufferedAmount;
          const watchdog = setInterval(() => {
            if (socket.bufferedAmount >= waiting) socket.terminate();
            waiting = socket.bufferedAmount;
          }, limits.stallMs);
          const done = () => {
            clearInterval(watchdog);
            socket.off("close", done);
            resolve();
          };
          socket.once("close", done);
          socket.send(JSON.stringify(msg), done);
        });
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
      /** What the official server adds to its answers: the thread, and the highest seq of its events so far. */
      const meta = async () => ({
        thread_id: threadId,
        applied_through_seq: await appliedThroughSeq(ctx.broker.thread(threadId)),
      });
      /** How many protocol events of the thread's log, from `from` up to its newest now, match `filter`. */
      const matching = async (from: number, filter: Filter) => {
        let n = 0;
        for await (const ev of readToHead(ctx.broker.thread(threadId), from)) {
          const event = sequenced(ev);
          if (event && matchesSubscription(event as never, filter as never)) n++;
        }
        return n;
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
            const message =
              issue.path[0] === "channels"
                ? "subscription.subscribe requires a non-empty channels array."
                : `${issue.path.join(".")}: ${issue.message}`;
            return send({ ...error(cmd.id, "invalid_argument", message), meta: await meta() });
          }
          // `since` says where the connection's read starts, not what the subscription matches.
          const { since, ...filter } = asked.data;
          const id = randomUUID();
          subscriptions.set(id, filter);
          // The first subscription starts the read: after `since`, else what the log holds. The answer says how
          // many events of the log so far it replays (as the official server's does); a later one shares the read
          // under way, and replays nothing.
          const from = since === undefined ? 0 : since + 1;
          const replayed = cursor ? 0 : await matching(from, filter);
          send({
            type: "success",
            id: cmd.id,
            result: { subscription_id: id, replayed_events: replayed },
            meta: await meta(),
          });
          if (!cursor) read(from);
          return;
        }
        if (cmd.method === "subscription.unsubscribe") {
          const id = String(p.subscription_id ?? "");
          if (!subscriptions.delete(id)) {
            return send({
              ...error(cmd.id, "no_such_subscription", `Unknown subscription: ${id}`),
              meta: await meta(),
            });
          }
          return send({ type: "success", id: cmd.id, result: {}, meta: await meta() });
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
