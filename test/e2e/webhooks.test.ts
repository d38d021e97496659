// End-to-end: run webhooks: the finished run is POSTed to the URL, retried on 5xx, loopback refused by default.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpError } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";
import { BOUND_MS } from "../helpers/wait.ts";

const allowed = useHangar({ env: { HANGAR_WEBHOOK_ALLOW_LOOPBACK: "true" } });
const strict = useHangar();

interface Delivery {
  body: any;
  headers: IncomingMessage["headers"];
}

/** A local receiver: answers each request with the next status of `statuses` (then 200). */
let receiver: Server;
let url = "";
let statuses: number[] = [];
let deliveries: Delivery[] = [];
const waiters: (() => void)[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let text = "";
    req.on("data", (d) => (text += d));
    req.on("end", () => {
      deliveries.push({ body: JSON.parse(text), headers: req.headers });
      res.statusCode = statuses.shift() ?? 200;
      res.end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await new Promise<void>((r) => receiver.close(() => r()));
});

/** Resolves once `n` deliveries arrived; fails with a clear message after a bound. */
async function deliveriesOf(n: number): Promise<Delivery[]> {
  const deadline = Date.now() + BOUND_MS;
  while (deliveries.length < n) {
    if (Date.now() > deadline) throw new Error(`expected ${n} webhook deliveries, got ${deliveries.length}`);
    await new Promise<void>((r) => {
      waiters.push(r);
      setTimeout(r, 500);
    });
  }
  return deliveries;
}

describe("webhooks", () => {
  it("POSTs the finished run with its values", async () => {
    deliveries = [];
    statuses = [];
    const { client } = allowed;
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hook" }] },
      webhook: url,
    });
    const [d] = await deliveriesOf(1);
    expect(d.headers["content-type"]).toMatch(/application\/json/);
    expect(d.body.run_id).toBe(run.run_id);
    expect(d.body.thread_id).toBe(thread.thread_id);
    expect(d.body.status).toBe("success");
    expect(d.body.values.messages.map((m: any) => m.content)).toContain("hook");
  });

  it("retries a delivery that got a 5xx", async () => {
    deliveries = [];
    statuses = [503];
    const { client } = allowed;
    const run = await client.runs.create(null, "research", { input: { topic: "hooks" }, webhook: url });
    const got = await deliveriesOf(2);
    expect(got.map((d) => d.body.run_id)).toEqual([run.run_id, run.run_id]);
    expect(got[1].body.values.summary).toContain("hooks");
  });

  it("refuses a loopback webhook unless HANGAR_WEBHOOK_ALLOW_LOOPBACK is set, storing nothing", async () => {
    const { client } = strict;
    const thread = await client.threads.create();
    const err = await httpError(
      client.runs.create(thread.thread_id, "chat", { input: { messages: [] }, webhook: url }),
    );
    expect(err.status).toBe(422);
    expect(err.body.detail).toMatch(/webhook/);
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    const bad = await httpError(
      client.runs.create(thread.thread_id, "chat", { input: { messages: [] }, webhook: "not a url" }),
    );
    expect(bad.status).toBe(422);
  });
});
