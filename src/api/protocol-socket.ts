// Protocol v2 over WebSocket (`GET /threads/{id}/stream/events` upgraded): the commands of the HTTP transport
// in-band, plus `subscription.subscribe` / `unsubscribe` / `reconnect`. The connection reads the thread's event
// log once and sends each protocol event that matches one of its subscriptions, once.
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import { matchesSubscription } from "@langchain/langgraph/stream";
import { randomUUID } from "node:crypto";
import { PROTOCOL_EVENT } from "../runs/protocol-run.js";
import type { ApiContext } from "./context.js";

type Params = Record<string, unknown>;
interface Cmd {
  id: number;
  method: string;
  params?: Params;
}
interface Filter {
  channels: string[];
  namespaces?: string[][];
  depth?: number;
}

export interface SocketDeps {
  listening: (req: FastifyRequest) => Promise<void>;
  answer: (req: FastifyRequest, threadId: string, cmd: Cmd) => Promise<unknown>;
  parseCommand: (v: unknown) => { success: true; data: Cmd } | { success: false };
}

const error = (id: number | null, code: string, message: string) => ({
  type: "error",
  id,
  error: code,
  message,
});

/** A subscription's filter from its params, or a message saying what is wrong. */
function filterOf(p: Params): Filter | string {
  if (!Array.isArray(p.channels) || !p.channels.length || !p.channels.every((c) => typeof c === "string")) {
    return "channels: a non-empty list of channel names";
  }
  if (
    p.namespaces !== undefined &&
    !(Array.isArray(p.namespaces) && p.namespaces.every((n) => Array.isArray(n)))
  ) {
    return "namespaces: a list of namespaces (lists of strings)";
  }
  if (p.depth !== undefined && !(Number.isInteger(p.depth) && (p.depth as number) >= 0)) {
    return "depth: a non-negative integer";
  }
  return {
    channels: p.channels,
    namespaces: p.namespaces as string[][] | undefined,
    depth: p.depth as number,
  };
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
      /** Reads the thread's log from `from` on, sending what any subscription wants (a new read replaces the last). */
      const read = (from: number | "next") => {
        cursor?.abort();
        const ac = (cursor = new AbortController());
        void (async () => {
          try {
            for await (const ev of ctx.broker.thread(threadId).subscribe(from, ac.signal)) {
              if (ev.event !== PROTOCOL_EVENT) continue;
              const event: Params = {
                ...(JSON.parse(ev.data) as Params),
                seq: ev.id,
                event_id: String(ev.id),
              };
              if ([...subscriptions.values()].some((f) => matchesSubscription(event as never, f as never))) {
                send(event);
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
        const parsed = deps.parseCommand(payload);
        if (!parsed.success) {
          return send(error(null, "invalid_argument", "a command has an integer id and a method"));
        }
        const cmd = parsed.data;
        const p = cmd.params ?? {};
        if (cmd.method === "subscription.subscribe") {
          const filter = filterOf(p);
          if (typeof filter === "string") return send(error(cmd.id, "invalid_argument", filter));
          const id = randomUUID();
          subscriptions.set(id, filter);
          send({ type: "success", id: cmd.id, result: { subscription_id: id } });
          // The first subscription starts the read: after `since`, else what the log holds.
          if (!cursor) read(typeof p.since === "number" ? p.since + 1 : 0);
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
