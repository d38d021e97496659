// The Redis broker's publishing when a connection drops between a command and its reply: the client (ioredis)
// sends the command again on the new connection, and the broker must not write its events twice.
//
// A TCP proxy sits between the broker and the machine's Redis; armed, it swallows the next reply Redis sends to the
// broker's publishing connection and closes that connection, the way a network fault or an overloaded process loses
// a reply whose command Redis had already applied.
import { once } from "node:events";
import { createServer, connect, type Server, type Socket } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { RedisBroker } from "../../src/streams/redis.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { REDIS_URL, deleteRedisPrefix, testRedis } from "../helpers/backend.ts";
import { waitFor } from "../helpers/wait.ts";

/** Forwards connections to Redis; `dropNextPublishReply` loses one reply of the `hangar-pub` connection. */
class FaultyProxy {
  readonly server: Server;
  private armed = false;
  dropped = 0;
  connections = 0;

  constructor(target: URL) {
    this.server = createServer((client) => {
      this.connections++;
      const upstream = connect(Number(target.port || 6379), target.hostname);
      let isPub = false;
      // Whether the publishing connection sent a script call whose reply has not come yet.
      let scriptSent = false;
      client.on("data", (chunk: Buffer) => {
        const text = chunk.toString("latin1");
        if (text.includes("hangar-pub")) isPub = true;
        if (isPub && /evalsha|\beval\b/i.test(text)) scriptSent = true;
        upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        if (this.armed && isPub && scriptSent && !chunk.toString("latin1").startsWith("-NOSCRIPT")) {
          // Redis applied the script; its reply never reaches the broker.
          this.armed = false;
          this.dropped++;
          client.destroy();
          upstream.destroy();
          return;
        }
        if (isPub) scriptSent = false;
        client.write(chunk);
      });
      const end = (s: Socket) => () => s.destroy();
      client.on("close", end(upstream));
      upstream.on("close", end(client));
      client.on("error", () => {});
      upstream.on("error", () => {});
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    const { port } = this.server.address() as { port: number };
    return `redis://127.0.0.1:${port}`;
  }

  dropNextPublishReply(): void {
    this.armed = true;
  }
}

describe("Redis broker", () => {
  const prefix = `t_broker_${randomUUID().slice(0, 8)}:`;
  const redis = testRedis();
  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterAll(async () => {
    for (const c of cleanups.reverse()) await c();
    await deleteRedisPrefix(redis, prefix);
    redis.disconnect();
  });

  it("a publish whose reply was lost with its connection is written once, not again when the client resends it", async () => {
    await redis.connect();
    const proxy = new FaultyProxy(new URL(REDIS_URL));
    const url = await proxy.listen();
    cleanups.push(() => new Promise((r) => proxy.server.close(r)));
    const broker = new RedisBroker({
      url,
      prefix,
      resumableTtlMs: 60_000,
      runEnded: async () => false,
      log: createLogger({ level: "error" }),
    });
    await broker.connect();
    cleanups.push(() => broker.close());
    const threadId = randomUUID();
    const log = broker.thread(threadId);
    const key = `${prefix}thread:${threadId}`;
    const entries = async () =>
      ((await redis.xrange(key, "-", "+")) as [string, string[]][]).map(([id, fields]) => ({
        seq: Number(id.split("-")[1]),
        data: fields[fields.indexOf("d") + 1],
      }));

    // The first publish loads the script; the second's reply is lost.
    log.publish("values", { n: 1 });
    await waitFor("the first event in the log", async () => (await entries()).length === 1);
    const before = proxy.connections;
    proxy.dropNextPublishReply();
    log.publish("values", { n: 2 });
    log.publish("values", { n: 3 });
    await waitFor(
      "the publishing connection to be closed and opened again",
      () => proxy.connections > before,
    );
    // A later publish goes out after the resent one on the new connection: once it is in, the resend was handled.
    log.publish("values", { n: 4 });
    await waitFor("the fourth event in the log", async () =>
      (await entries()).some((e) => JSON.parse(e.data).n === 4),
    );

    expect(proxy.dropped).toBe(1);
    const got = await entries();
    expect(got.map((e) => JSON.parse(e.data).n)).toEqual([1, 2, 3, 4]);
    expect(got.every((e, i) => i === 0 || e.seq > got[i - 1].seq)).toBe(true);

    // What a reader of the log from the start gets.
    const read: number[] = [];
    const abort = new AbortController();
    for await (const ev of log.subscribe(0, abort.signal)) {
      read.push(JSON.parse(ev.data).n);
      if (read.length === 4) abort.abort();
    }
    expect(read).toEqual([1, 2, 3, 4]);
  });
});
