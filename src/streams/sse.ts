// Server-Sent Events framing over a raw Node response: event/data/id lines and comment heartbeats.
import type { ServerResponse } from "node:http";
import type { StreamEvent } from "./channel.js";

const HEARTBEAT_MS = 10_000;

export class SseWriter {
  private heartbeat: NodeJS.Timeout;
  closed = false;

  constructor(
    private res: ServerResponse,
    headers: Record<string, string> = {},
  ) {
    res.writeHead(200, {
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
      ...headers,
    });
    res.flushHeaders();
    this.heartbeat = setInterval(() => this.raw(": heartbeat\n\n"), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on("close", () => this.stop());
  }

  private raw(text: string): void {
    if (!this.closed) this.res.write(text);
  }

  send(ev: StreamEvent): void {
    this.raw(`event: ${ev.event}\ndata: ${ev.data}\nid: ${ev.id}\n\n`);
  }

  private stop(): void {
    this.closed = true;
    clearInterval(this.heartbeat);
  }

  end(): void {
    if (this.closed) return;
    this.stop();
    this.res.end();
  }
}
