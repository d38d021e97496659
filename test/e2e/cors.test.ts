// End-to-end: browsers as clients. CORS on by default as in the official server (preflights, Private Network
// Access, exposed headers, streamed responses), `http.cors` narrowing it, /info without credentials under
// custom auth, and agent-chat-ui's resume (`input: {}` beside `command`).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, startHangar, useHangar } from "../helpers/server.ts";
import { parseSse } from "../helpers/sse.ts";

const ORIGIN = "http://localhost:5173";

/** A browser's preflight for a POST with JSON and an API key. */
const preflight = (url: string, origin: string, extra: Record<string, string> = {}) =>
  fetch(url, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type,x-api-key,x-tenant",
      ...extra,
    },
  });

const listOf = (h: string | null) => (h ?? "").split(",").map((s) => s.trim().toLowerCase());

describe("CORS by default (no http.cors)", () => {
  const hangar = useHangar();

  it("answers preflights for any origin, echoing the requested headers", async () => {
    const res = await preflight(`${hangar.server.url}/threads/${crypto.randomUUID()}/runs/stream`, ORIGIN);
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(listOf(res.headers.get("access-control-allow-headers"))).toEqual([
      "content-type",
      "x-api-key",
      "x-tenant",
    ]);
    expect(listOf(res.headers.get("access-control-allow-methods"))).toEqual(
      expect.arrayContaining(["get", "post", "put", "patch", "delete", "options"]),
    );
    expect(res.headers.get("access-control-max-age")).toBeNull();
    expect(listOf(res.headers.get("vary"))).toContain("origin");
    expect(res.headers.get("access-control-allow-private-network")).toBeNull();
  });

  it("answers Private Network Access preflights", async () => {
    const res = await preflight(`${hangar.server.url}/threads`, "https://public.example", {
      "access-control-request-private-network": "true",
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe("https://public.example");
    expect(res.headers.get("access-control-allow-private-network")).toBe("true");
  });

  it("exposes content-location and x-pagination-total on responses", async () => {
    const res = await fetch(`${hangar.server.url}/threads/search`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(listOf(res.headers.get("access-control-expose-headers"))).toEqual(
      expect.arrayContaining(["content-location", "x-pagination-total"]),
    );
    // A request without Origin (curl, a server) gets no CORS headers.
    const plain = await fetch(`${hangar.server.url}/ok`);
    expect(plain.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("puts the CORS headers on run streams, joins and thread streams", async () => {
    const url = hangar.server.url;
    const thread = await hangar.client.threads.create();
    const headers = { origin: ORIGIN, "content-type": "application/json", accept: "text/event-stream" };

    // The thread stream stays open: read its head, then leave.
    const leave = new AbortController();
    const threadStream = await fetch(`${url}/threads/${thread.thread_id}/stream`, {
      headers: { origin: ORIGIN, accept: "text/event-stream" },
      signal: leave.signal,
    });
    expect(threadStream.status).toBe(200);
    expect(threadStream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(threadStream.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    leave.abort();
    await threadStream.body?.cancel().catch(() => {});

    const run = await fetch(`${url}/threads/${thread.thread_id}/runs/stream`, {
      method: "POST",
      headers,
      body: JSON.stringify({ assistant_id: "chat", input: { messages: [{ role: "user", content: "hi" }] } }),
    });
    expect(run.status).toBe(200);
    expect(run.headers.get("content-type")).toMatch(/^text\/event-stream/);
    expect(run.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(listOf(run.headers.get("access-control-expose-headers"))).toContain("content-location");
    const location = run.headers.get("content-location");
    expect(location).toMatch(new RegExp(`^/threads/${thread.thread_id}/runs/[0-9a-f-]{36}$`));
    const events = parseSse(await run.text());
    expect(events[0].event).toBe("metadata");

    // Joining the finished run's stream (a stateless stream too) carries them as well.
    const join = await fetch(`${url}${location}/stream`, { headers: { origin: ORIGIN } });
    expect(join.status).toBe(200);
    expect(join.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    await join.text();

    const stateless = await fetch(`${url}/runs/stream`, {
      method: "POST",
      headers,
      body: JSON.stringify({ assistant_id: "chat", input: { messages: [{ role: "user", content: "hi" }] } }),
    });
    expect(stateless.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(parseSse(await stateless.text()).length).toBeGreaterThan(1);
  });

  it("accepts any input ({}, null, or the graph's keys, as AG-UI sends) beside a resume command and uses the command", async () => {
    const client = hangar.client;
    for (const input of [{}, null, { request: "ignored" }]) {
      const thread = await client.threads.create();
      await client.runs.wait(thread.thread_id, "approval", { input: { request: "a new roof" } });
      expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
      const out = (await client.runs.wait(thread.thread_id, "approval", {
        input: input as Record<string, never>,
        command: { resume: "approved" },
      })) as Record<string, unknown>;
      expect(out.decision).toBe("approved");
      expect(out.request).toBe("a new roof");
      expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    }
  });
});

describe("http.cors narrows the origins", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/cors-project/langgraph.json") });

  it("answers listed and matching origins only, still echoing the requested headers", async () => {
    const url = `${hangar.server.url}/threads`;
    for (const origin of ["https://app.example", "https://pr-12.preview.example"]) {
      const res = await preflight(url, origin);
      expect(res.status).toBe(204);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(listOf(res.headers.get("access-control-allow-headers"))).toEqual([
        "content-type",
        "x-api-key",
        "x-tenant",
      ]);
      expect(res.headers.get("access-control-max-age")).toBeNull();
    }
    for (const origin of ["https://evil.example", "https://pr-12.preview.example.evil.net"]) {
      const res = await preflight(url, origin, { "access-control-request-private-network": "true" });
      expect(res.headers.get("access-control-allow-origin")).toBeNull();
      expect(res.headers.get("access-control-allow-private-network")).toBeNull();
    }
    const ok = await fetch(`${hangar.server.url}/threads/search`, {
      method: "POST",
      headers: { origin: "https://app.example", "content-type": "application/json" },
      body: "{}",
    });
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example");
    expect(listOf(ok.headers.get("access-control-expose-headers"))).toEqual(
      expect.arrayContaining(["content-location", "x-pagination-total"]),
    );
  });

  it("refuses to start on a malformed http.cors, naming the field", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hangar-cors-bad-"));
    try {
      const config = join(dir, "langgraph.json");
      writeFileSync(
        config,
        JSON.stringify({
          graphs: { chat: join(ROOT, "examples/src/chat.ts:graph") },
          http: { cors: { allow_origins: "https://app.example" } },
        }),
      );
      // A server that starts anyway is stopped at once (and the test fails).
      const outcome = await startHangar({ config, dataDir: join(dir, "data") }).then(
        async (server) => {
          await server.stop();
          return new Error("started");
        },
        (e: Error) => e,
      );
      expect(outcome.message).toMatch(/http\.cors\.allow_origins/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("CORS under custom auth", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/auth-project/langgraph.json") });

  it("answers preflights and /info without credentials; refusals carry CORS headers", async () => {
    const url = hangar.server.url;
    const pre = await preflight(`${url}/threads`, ORIGIN, {
      "access-control-request-headers": "authorization",
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(pre.headers.get("access-control-allow-headers")).toBe("authorization");

    const info = await fetch(`${url}/info`, { headers: { origin: ORIGIN } });
    expect(info.status).toBe(200);
    expect((await info.json()).version).toEqual(expect.any(String));
    expect(info.headers.get("access-control-allow-origin")).toBe(ORIGIN);

    // The browser must be able to read a 401 to show it.
    const refused = await fetch(`${url}/threads/search`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json" },
      body: "{}",
    });
    expect(refused.status).toBe(401);
    expect(refused.headers.get("access-control-allow-origin")).toBe(ORIGIN);
  });
});
