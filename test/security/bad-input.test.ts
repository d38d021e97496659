// Bad input that was answered 500 (issue 12, item 5), one test per attack: a 422 naming the field and the
// limit, nothing stored. On the project's backend (embedded SQLite, or PostgreSQL in the postgres project).
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { deepJson, rawRequest } from "../helpers/fuzz.ts";

const hangar = useHangar();
const INPUT = { messages: [{ role: "user", content: "hi" }] };

/** POSTs raw JSON text; the status and the parsed body. */
async function post(path: string, json: string, method = "POST"): Promise<{ status: number; body: any }> {
  const res = await fetch(`${hangar.server.url}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: json,
  });
  const text = await res.text();
  expect(res.headers.get("content-type"), text).toContain("application/json");
  return { status: res.status, body: JSON.parse(text) };
}

function expect422(r: { status: number; body: any }, ...parts: string[]): void {
  expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(422);
  expect(typeof r.body.detail).toBe("string");
  for (const p of parts) expect(r.body.detail).toContain(p);
}

describe("JSON nested 10,000 deep", () => {
  // Attack: deeply nested JSON in config, context, metadata (assistant and thread) and a run's input (was 500).
  it("is a 422 naming the field and the depth limit, and creates nothing", async () => {
    const { client } = hangar;
    const deep = deepJson(10_000);
    const before = await client.assistants.count({ graphId: "chat" } as any);
    for (const field of ["config", "context", "metadata"]) {
      const r = await post("/assistants", `{"graph_id":"chat","${field}":${deep}}`);
      expect422(r, `body.${field}.a`, "limit of 100 levels");
    }
    expect(await client.assistants.count({ graphId: "chat" } as any)).toBe(before);
    expect422(await post("/threads", `{"metadata":${deep}}`), "body.metadata", "limit of 100 levels");
    const thread = await client.threads.create();
    const run = await post(
      `/threads/${thread.thread_id}/runs/wait`,
      `{"assistant_id":"chat","input":${deep}}`,
    );
    expect422(run, "body.input", "limit of 100 levels");
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    // Exactly at the limit is accepted: the body is level 1, the 99 objects of the metadata levels 2 to 100.
    const ok = await post("/threads", `{"metadata":${deepJson(99)}}`);
    expect(ok.status, JSON.stringify(ok.body).slice(0, 200)).toBe(200);
    expect422(await post("/threads", `{"metadata":${deepJson(100)}}`), "limit of 100 levels");
  });
});

describe("NUL characters", () => {
  // Attack: a NUL in a metadata filter key (SQLite "bad JSON path", was 500), on every search taking one.
  it("in a filter key is a 422 naming the key", async () => {
    const filter = JSON.stringify({ metadata: { "a\u0000b": 1 } });
    for (const path of ["/threads/search", "/threads/count", "/assistants/search", "/runs/crons/search"]) {
      expect422(await post(path, filter), "body.metadata.a\\u0000b", "NUL");
    }
    const store = JSON.stringify({ namespace_prefix: ["x"], filter: { "k\u0000": "v" } });
    expect422(await post("/store/items/search", store), "body.filter", "NUL");
  });

  // Attack: a NUL anywhere in a stored string (PostgreSQL text/jsonb reject \u0000, was 500): refused on both
  // backends alike, and nothing is stored.
  it("in a stored string or key is a 422 naming the field, and nothing is stored", async () => {
    const { client } = hangar;
    const marker = randomUUID();
    expect422(
      await post("/threads", JSON.stringify({ metadata: { marker, note: "a\u0000b" } })),
      "body.metadata.note",
      "NUL",
    );
    expect(await client.threads.count({ metadata: { marker } })).toBe(0);
    const put = JSON.stringify({ namespace: ["nul", marker], key: "k", value: { text: "x\u0000" } });
    expect422(await post("/store/items", put, "PUT"), "body.value.text", "NUL");
    expect(await client.store.getItem(["nul", marker], "k")).toBeNull();
    const thread = await client.threads.create({ metadata: { marker } });
    const state = JSON.stringify({
      values: { messages: [{ type: "human", content: "\u0000" }] },
      as_node: "agent",
    });
    expect422(
      await post(`/threads/${thread.thread_id}/state`, state),
      "body.values.messages.0.content",
      "NUL",
    );
    expect((await client.threads.getState(thread.thread_id)).values).toEqual({});
    // In a path parameter and a query parameter too.
    const r = await fetch(`${hangar.server.url}/assistants/a%00b`);
    expect422({ status: r.status, body: await r.json() }, "path.assistant_id", "NUL");
    const q = await fetch(`${hangar.server.url}/store/items?namespace=nul&key=k%00`);
    expect422({ status: q.status, body: await q.json() }, "query.key", "NUL");
  });

  // SQLite's JSON path cannot name a key with a backslash: such a filter key matched nothing (now it does).
  it("a filter key no JSON path can name still filters", async () => {
    const { client } = hangar;
    const marker = randomUUID();
    const thread = await client.threads.create({ metadata: { "a\\b": marker } });
    const found = await client.threads.search({ metadata: { "a\\b": marker } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
  });
});

describe("lone surrogates", () => {
  // Attack: a lone surrogate ("\ud800") as assistant_id (was 500), and anywhere else in a body or a path.
  it("are a 422 naming the field", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    const body = JSON.stringify({ assistant_id: "\ud800", input: INPUT });
    expect422(await post("/runs/wait", body), "body.assistant_id", "lone UTF-16 surrogate");
    expect422(await post(`/threads/${thread.thread_id}/runs`, body), "body.assistant_id", "surrogate");
    const cron = JSON.stringify({ assistant_id: "chat", schedule: "0 9 * * *", metadata: { "\udc00": 1 } });
    expect422(await post("/runs/crons", cron), "body.metadata", "surrogate");
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    // Percent-encoded in a path (not valid UTF-8): a 422 {detail}, not Fastify's own 400 shape.
    const r = await rawRequest(hangar.server.url, { method: "GET", path: "/assistants/%ED%A0%80" });
    expect(r.status).toBe(422);
    expect(JSON.parse(r.body).detail).toContain("path");
  });
});

describe("long search strings", () => {
  // Attack: a 100,000-character assistant name filter (SQLite "LIKE or GLOB pattern too complex", was 500).
  it("are a 422 naming the field", async () => {
    for (const path of ["/assistants/search", "/assistants/count"]) {
      expect422(await post(path, JSON.stringify({ name: "x".repeat(100_000) })), "name");
    }
    const ok = await post("/assistants/search", JSON.stringify({ name: "%_\\".repeat(2_500) }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});

describe("wrongly typed config and far TTLs", () => {
  // Attack: config.tags that is not a list (spread into the run's config, was 500) on runs, assistants, crons.
  it("config.tags or config.recursion_limit of the wrong type is a 422 naming it", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    for (const tags of [5, { a: 1 }, "tag"]) {
      const run = JSON.stringify({ assistant_id: "chat", input: INPUT, config: { tags } });
      expect422(await post(`/threads/${thread.thread_id}/runs`, run), "config.tags");
      expect422(await post("/runs/wait", run), "config.tags");
      expect422(
        await post("/assistants", JSON.stringify({ graph_id: "chat", config: { tags } })),
        "config.tags",
      );
      const cron = JSON.stringify({ assistant_id: "chat", schedule: "0 9 * * *", config: { tags } });
      expect422(await post("/runs/crons", cron), "config.tags");
    }
    const limit = JSON.stringify({ assistant_id: "chat", input: INPUT, config: { recursion_limit: "x" } });
    expect422(await post("/runs/wait", limit), "config.recursion_limit");
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    // Well-typed config (and keys the API does not type) still work.
    const ok = await client.runs.wait(thread.thread_id, "chat", {
      input: INPUT,
      config: { tags: ["t"], recursion_limit: 10, configurable: { x: 1 }, other: true } as any,
    });
    expect(ok).toBeTruthy();
  });

  // Attack: a thread or store item TTL so far away its expiry is no date (RangeError, was 500).
  it("a TTL beyond 100 years is a 422 naming it", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    for (const ttl of [1e15, 1e308]) {
      expect422(await post("/threads", JSON.stringify({ ttl: { ttl } })), "ttl.ttl", "at most");
      expect422(
        await post(`/threads/${thread.thread_id}`, JSON.stringify({ ttl: { ttl } }), "PATCH"),
        "ttl.ttl",
      );
      const put = JSON.stringify({ namespace: ["ttl"], key: "k", value: { v: 1 }, ttl });
      expect422(await post("/store/items", put, "PUT"), "ttl", "at most");
    }
    expect(await client.store.getItem(["ttl"], "k")).toBeNull();
  });
});

describe("after_seconds", () => {
  // Attack: after_seconds 1e308 (PostgreSQL interval overflow, was 500) and beyond ~24.8 days (the timer
  // overflowed and the run started at once): a 422 naming the bound; the bound itself is honoured (pending).
  it("above what the server can honour is a 422, and no run is created", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    for (const after of [1e308, 2_147_484, 30 * 24 * 3600]) {
      const r = await post(
        `/threads/${thread.thread_id}/runs`,
        JSON.stringify({ assistant_id: "chat", input: INPUT, after_seconds: after }),
      );
      expect422(r, "after_seconds", "at most 2147483");
    }
    expect(await client.runs.list(thread.thread_id)).toEqual([]);
    const run = await client.runs.create(thread.thread_id, "chat", { input: INPUT, afterSeconds: 2_147_483 });
    expect(run.status).toBe("pending");
    // Still waiting (not started at once by an overflowed timer) after a run on another thread completed.
    const other = await client.threads.create();
    await client.runs.wait(other.thread_id, "chat", { input: INPUT });
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("pending");
    await client.runs.cancel(thread.thread_id, run.run_id);
  });
});

describe("oversized bodies", () => {
  // Attack: a body larger than the limit, declared or sent chunked: a 413 naming the limit.
  it("are a 413 naming the limit", async () => {
    for (const req of [
      { declaredLength: 50 * 1024 * 1024 + 1, body: "{}" },
      { chunked: true, body: `{"metadata":{"x":"${"x".repeat(51 * 1024 * 1024)}"}}` },
    ]) {
      const r = await rawRequest(hangar.server.url, { method: "POST", path: "/threads", ...req });
      expect(r.status, r.body).toBe(413);
      expect(JSON.parse(r.body).detail).toContain("50 MB");
    }
  });
});
