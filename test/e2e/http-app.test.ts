// End-to-end: the project's own Hono app (http.app) mounted as the official server mounts it: its middleware
// runs before Hangar's routes and may answer, add response headers, fix request headers and rewrite run bodies;
// its routes add or shadow paths; unmatched paths answer Hangar's 404; the SDK's `new Client()` inside a custom
// route reaches the server; a relative webhook URL is delivered to a custom route (also with HANGAR_API_KEYS).
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/http-app-project/langgraph.json") });

/** A client whose every request carries the tenant header the app's middleware turns into run fields. */
const tenantClient = (tenant: string) =>
  new Client({
    apiUrl: hangar.server.url,
    defaultHeaders: { "x-tenant": tenant },
    callerOptions: { maxRetries: 0 },
  });

describe("http.app", () => {
  it("serves custom routes, with the app's middleware around them", async () => {
    const res = await fetch(`${hangar.server.url}/custom/hello`, { headers: { "x-from": "test" } });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ hello: "world", from: "test" });
    expect(res.headers.get("x-app-middleware")).toBe("true");
  });

  it("runs the middleware before Hangar's routes: it may answer, and it wraps their responses", async () => {
    const url = hangar.server.url;
    const intercepted = await fetch(`${url}/info?intercept`);
    expect(await intercepted.json()).toEqual({ intercepted: "/info" });
    const info = await fetch(`${url}/info`);
    expect(info.status).toBe(200);
    expect((await info.json()).graphs).toEqual(["echo"]);
    expect(info.headers.get("x-app-middleware")).toBe("true");
  });

  it("lets a custom route shadow a path Hangar would answer", async () => {
    const res = await fetch(`${hangar.server.url}/assistants/app-defined`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ shadowed: true });
    // The rest of the API is still Hangar's.
    expect((await hangar.client.assistants.search({ graphId: "echo" })).length).toBe(1);
  });

  it("answers Hangar's own 404 for paths neither serves (not the app's notFound)", async () => {
    const res = await fetch(`${hangar.server.url}/does/not/exist`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: "Not found: GET /does/not/exist" });
    expect(res.headers.get("x-app-middleware")).toBe("true");
  });

  it("hands on a request header the middleware rewrote", async () => {
    // Sent as text/plain (as browsers do to skip a preflight); the middleware makes it JSON for Hangar.
    const res = await fetch(`${hangar.server.url}/threads`, {
      method: "POST",
      headers: { "content-type": "text/plain;charset=UTF-8" },
      body: JSON.stringify({ metadata: { sent_as: "text/plain" } }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).metadata).toEqual({ sent_as: "text/plain" });
  });

  it("hands on a run body the middleware rewrote, for streamed and waited runs", async () => {
    const client = tenantClient("acme");
    const thread = await client.threads.create();
    const events = [];
    for await (const ev of client.runs.stream(thread.thread_id, "echo", {
      input: { text: "hi" },
      metadata: { own: 1 },
    })) {
      events.push(ev);
    }
    expect(events[0].event).toBe("metadata");
    expect(events.at(-1)!.data).toEqual({
      text: "hi",
      seen: { text: "hi", configurable_tenant: "acme", metadata_tenant: "acme" },
    });
    const [run] = await client.runs.list(thread.thread_id);
    // The run's metadata as the official server records it: the assistant's, the thread's, then the run's own
    // (with what the middleware added).
    expect(run.metadata).toMatchObject({ own: 1, tenant: "acme", graph_id: "echo", created_by: "system" });

    const waited = await tenantClient("globex").runs.wait(thread.thread_id, "echo", {
      input: { text: "again" },
    });
    expect((waited as any).seen).toEqual({
      text: "again",
      configurable_tenant: "globex",
      metadata_tenant: "globex",
    });
    // Without the header the middleware leaves the body alone (on a new thread: a run on the same thread gets
    // the configurable of its earlier runs, as on the official server).
    const fresh = await hangar.client.threads.create();
    const plain = await hangar.client.runs.wait(fresh.thread_id, "echo", { input: { text: "plain" } });
    expect((plain as any).seen).toEqual({ text: "plain", configurable_tenant: null, metadata_tenant: null });
  });

  it("keeps SSE, Content-Location and CORS on a streamed run through the app", async () => {
    const thread = await hangar.client.threads.create();
    const res = await fetch(`${hangar.server.url}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", origin: "http://page.example", "x-tenant": "acme" },
      body: JSON.stringify({ assistant_id: "echo", input: { text: "sse" } }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(res.headers.get("content-location")).toMatch(
      new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`),
    );
    expect(res.headers.get("access-control-allow-origin")).toBe("http://page.example");
    expect(res.headers.get("x-app-middleware")).toBe("true");
    const text = await res.text();
    expect(text).toContain("event: metadata");
    expect(text).toContain('"metadata_tenant":"acme"');
  });

  it("cancels an on_disconnect=cancel run when the client leaves the stream", async () => {
    const thread = await hangar.client.threads.create();
    const ac = new AbortController();
    const stream = hangar.client.runs.stream(thread.thread_id, "echo", {
      input: { text: "slow", sleep: 60_000 },
      onDisconnect: "cancel",
      signal: ac.signal,
    });
    for await (const ev of stream) {
      if (ev.event === "values") break; // the run is under way
    }
    ac.abort();
    await expect
      .poll(async () => (await hangar.client.runs.list(thread.thread_id))[0]?.status, { timeout: 60_000 })
      .toBe("interrupted");
  });

  it("streams a custom route's own streamed response", async () => {
    const res = await fetch(`${hangar.server.url}/custom/stream`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("line 0\nline 1\nline 2\n");
  });

  it("gives `new Client()` without apiUrl inside a custom route this server", async () => {
    const res = await fetch(`${hangar.server.url}/custom/threads`);
    expect(res.status).toBe(200);
    const { created, found } = await res.json();
    expect(found).toContain(created);
    const thread = await hangar.client.threads.get(created);
    expect(thread.metadata).toEqual({ via: "loopback" });
  });

  it("delivers a relative webhook URL to the app's route on this server", async () => {
    const thread = await hangar.client.threads.create();
    const run = await hangar.client.runs.create(thread.thread_id, "echo", {
      input: { text: "hooked" },
      webhook: "/custom/hook",
    });
    await expect
      .poll(
        async () => {
          const hooks = (await (await fetch(`${hangar.server.url}/custom/hooks`)).json()) as any[];
          return hooks.find((h) => h.run_id === run.run_id);
        },
        { timeout: 60_000 },
      )
      .toMatchObject({ run_id: run.run_id, status: "success", values: { text: "hooked" } });
  });
});

describe("http.app with HANGAR_API_KEYS", () => {
  const keyed = useHangar({
    config: join(ROOT, "test/fixtures/http-app-project/langgraph.json"),
    env: { HANGAR_API_KEYS: "first-key,second-key" },
  });
  const withKey = { headers: { "x-api-key": "second-key" } };

  it("lets `new Client()` without apiUrl inside a custom route reach the server without a key of its own", async () => {
    expect((await fetch(`${keyed.server.url}/custom/threads`)).status).toBe(401);
    const res = await fetch(`${keyed.server.url}/custom/threads`, withKey);
    expect(res.status).toBe(200);
    const { created, found } = await res.json();
    expect(found).toContain(created);
  });

  it("delivers a relative webhook URL to the app's route, which the keys guard too", async () => {
    const client = new Client({ apiUrl: keyed.server.url, apiKey: "first-key" });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", {
      input: { text: "hooked with keys" },
      webhook: "/custom/hook",
    });
    await expect
      .poll(
        async () => {
          const hooks = (await (await fetch(`${keyed.server.url}/custom/hooks`, withKey)).json()) as any[];
          return hooks.find((h) => h.run_id === run.run_id);
        },
        { timeout: 60_000 },
      )
      .toMatchObject({ run_id: run.run_id, status: "success", values: { text: "hooked with keys" } });
    // The server's own key is not one a client can guess: a made-up one is refused.
    expect(
      (await fetch(`${keyed.server.url}/custom/hooks`, { headers: { "x-api-key": "loopback" } })).status,
    ).toBe(401);
  });
});

describe("http.app under custom auth", () => {
  const secured = useHangar({ config: join(ROOT, "test/fixtures/http-app-project/langgraph.auth.json") });
  const as = (token: string) => ({ authorization: `Bearer ${token}` });

  it("authenticates before the app, as the official server does", async () => {
    const url = secured.server.url;
    const anonymous = await fetch(`${url}/custom/hello`);
    expect(anonymous.status).toBe(401);
    const alice = await fetch(`${url}/custom/hello`, { headers: as("token-alice") });
    expect(alice.status).toBe(200);
    expect(await alice.json()).toEqual({ hello: "world", from: null });
  });

  it("keeps the caller's identity on a request the app handed on", async () => {
    const url = secured.server.url;
    const res = await fetch(`${url}/threads`, {
      method: "POST",
      headers: { ...as("token-alice"), "content-type": "text/plain" },
      body: JSON.stringify({ metadata: { via: "app" } }),
    });
    expect(res.status).toBe(200);
    const thread = await res.json();
    expect(thread.metadata).toMatchObject({ via: "app", owner: "alice" });
    expect((await fetch(`${url}/threads/${thread.thread_id}`, { headers: as("token-alice") })).status).toBe(
      200,
    );
    expect((await fetch(`${url}/threads/${thread.thread_id}`, { headers: as("token-bob") })).status).toBe(
      404,
    );
  });

  it("does not let a client pass itself off as a handed-on request", async () => {
    const res = await fetch(`${secured.server.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-hangar-forwarded": "guess:guess" },
      body: "{}",
    });
    expect(res.status).toBe(401);
  });
});
