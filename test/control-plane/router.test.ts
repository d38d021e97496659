// The deployment router on a real Fastify app: 404/503, path and query passed on, SSE event by event, request
// bodies streamed, hop-by-hop headers dropped, Content-Location under the deployment's URL, target switches.
import { randomUUID } from "node:crypto";
import { request } from "node:http";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeploymentRouter, registerDeploymentRoutes } from "../../src/control-plane/http/router.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request with headers fetch refuses to send (Connection naming other headers). */
function rawRequest(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request(url, { headers }, (r) => {
      let body = "";
      r.on("data", (d) => (body += d));
      r.on("end", () => res({ status: r.statusCode!, body }));
    });
    req.on("error", rej);
    req.end();
  });
}

/** A stand-in Agent Server: echoes requests, streams slow SSE, counts bytes of a streamed body. */
async function upstream(name: string): Promise<{ app: FastifyInstance; url: string }> {
  const app = Fastify();
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", (_req, _payload, done) => done(null));
  app.all("/*", async (req, reply) => {
    if (req.url.startsWith("/sse")) {
      reply.raw.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
      reply.raw.write(`event: first\ndata: {"at": ${Date.now()}}\n\n`);
      await sleep(700);
      reply.raw.write(`event: second\ndata: {"at": ${Date.now()}}\n\n`);
      reply.raw.end();
      return reply;
    }
    if (req.url.startsWith("/count")) {
      let bytes = 0;
      for await (const chunk of req.raw) bytes += (chunk as Buffer).length;
      return { bytes };
    }
    if (req.url.startsWith("/runs")) {
      return reply.header("content-location", "/threads/t1/runs/r1").code(201).send({ ok: true });
    }
    return {
      name,
      method: req.method,
      url: req.url,
      headers: req.headers,
    };
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const addr = app.server.address() as { port: number };
  return { app, url: `http://127.0.0.1:${addr.port}` };
}

let app: FastifyInstance;
let router: DeploymentRouter;
let base: string;
let a: Awaited<ReturnType<typeof upstream>>;
let b: Awaited<ReturnType<typeof upstream>>;
const known = new Set<string>();
const dep = randomUUID();

beforeAll(async () => {
  a = await upstream("a");
  b = await upstream("b");
  app = Fastify();
  // Another route on the same app keeps its own JSON parsing.
  app.post("/v2/echo", async (req) => ({ body: req.body }));
  router = registerDeploymentRoutes(app);
  router.setLookup(async (id) => known.has(id));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const addr = app.server.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
  known.add(dep);
});

afterAll(async () => {
  await app.close();
  await router.close();
  await a.app.close();
  await b.app.close();
});

describe("deployment router", () => {
  it("answers 404 for an unknown deployment and 503 for one with no target", async () => {
    const missing = randomUUID();
    let res = await fetch(`${base}/deployments/${missing}/threads`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: `Deployment ID ${missing} not found.` });
    res = await fetch(`${base}/deployments/${dep}/ok`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ detail: `Deployment ${dep} has no revision serving yet` });
  });

  it("passes method, the rest of the path, the query and end-to-end headers", async () => {
    router.setTarget(dep, a.url);
    const long = `/threads/${randomUUID()}/runs/${randomUUID()}/stream/${"x".repeat(200)}`;
    const res = await fetch(`${base}/deployments/${dep}${long}?a=1&b=%20two`, {
      method: "PATCH",
      headers: { "x-api-key": "k", "content-type": "application/json" },
      body: JSON.stringify({ hello: "world" }),
    });
    expect(res.status).toBe(200);
    const echo = await res.json();
    expect(echo).toMatchObject({ name: "a", method: "PATCH", url: `${long}?a=1&b=%20two` });
    expect(echo.headers["x-api-key"]).toBe("k");
    expect(echo.headers["content-type"]).toBe("application/json");
    expect(echo.headers["x-forwarded-prefix"]).toBe(`/deployments/${dep}`);
    expect(echo.headers.host).toBe(a.url.slice("http://".length));

    const hop = await rawRequest(`${base}/deployments/${dep}/h`, {
      connection: "keep-alive, x-drop",
      "x-drop": "1",
      "x-keep": "2",
    });
    const hopEcho = JSON.parse(hop.body);
    expect(hopEcho.headers["x-drop"]).toBeUndefined();
    expect(hopEcho.headers["x-keep"]).toBe("2");

    const root = await (await fetch(`${base}/deployments/${dep}?q=1`)).json();
    expect(root.url).toBe("/?q=1");
    const head = await fetch(`${base}/deployments/${dep}/ok`, { method: "HEAD" });
    expect(head.status).toBe(200);
    // Routes of the app itself still parse their bodies.
    const own = await fetch(`${base}/v2/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ x: 1 }),
    });
    expect(await own.json()).toEqual({ body: { x: 1 } });
  });

  it("puts Content-Location under the deployment's URL", async () => {
    const res = await fetch(`${base}/deployments/${dep}/runs`, { method: "POST" });
    expect(res.status).toBe(201);
    expect(res.headers.get("content-location")).toBe(`/deployments/${dep}/threads/t1/runs/r1`);
  });

  it("streams SSE event by event", async () => {
    const res = await fetch(`${base}/deployments/${dep}/sse`);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    while (!text.includes("event: first")) text += decoder.decode((await reader.read()).value);
    const firstSeen = Date.now();
    // The second event is written 700 ms after the first: the first must have arrived well before.
    while (!text.includes("event: second")) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    const second = JSON.parse(/event: second\ndata: (.*)/.exec(text)![1]).at as number;
    expect(second - firstSeen).toBeGreaterThan(300);
  });

  it("streams request bodies through", async () => {
    const size = 8 * 1024 * 1024;
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= size) return controller.close();
        const chunk = new Uint8Array(64 * 1024);
        sent += chunk.length;
        controller.enqueue(chunk);
      },
    });
    const res = await fetch(`${base}/deployments/${dep}/count`, {
      method: "POST",
      body,
      duplex: "half",
    } as RequestInit);
    expect(await res.json()).toEqual({ bytes: size });
  });

  it("keeps a request in flight on the old target when the target switches; new ones go to the new one", async () => {
    router.setTarget(dep, a.url);
    const slow = fetch(`${base}/deployments/${dep}/sse`).then((r) => r.text());
    await sleep(100);
    expect(router.inFlight(a.url)).toBe(1);
    router.setTarget(dep, b.url);
    const now = await (await fetch(`${base}/deployments/${dep}/who`)).json();
    expect(now.name).toBe("b");
    expect(await slow).toContain("event: second");
    expect(await router.drain(a.url, 1_000)).toBe(true);
  });

  it("answers 502 when the target does not answer", async () => {
    router.setTarget(dep, "http://127.0.0.1:1");
    const res = await fetch(`${base}/deployments/${dep}/threads`);
    expect(res.status).toBe(502);
    expect((await res.json()).detail).toContain("did not answer");
  });
});
