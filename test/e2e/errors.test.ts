// End-to-end tests of error responses (raw fetch): status codes, JSON {detail} bodies, nothing changed on rejection.
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { unique } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar();

interface Reply {
  status: number;
  contentType: string;
  text: string;
  body: any;
}

/** Sends a request with a raw body (string) or a JSON-encoded value, and reads the reply. */
async function send(method: string, path: string, body?: unknown, raw = false): Promise<Reply> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.headers = { "content-type": "application/json" };
    init.body = raw ? (body as string) : JSON.stringify(body);
  }
  const res = await fetch(`${hangar.server.url}${path}`, init);
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text, body: parsed };
}

/** Every error of the Agent Server is JSON with a `detail`, and never a 5xx. */
function expectErrorBody(r: Reply) {
  expect(r.status, `unexpected status, body: ${r.text}`).toBeGreaterThanOrEqual(400);
  expect(r.status, `server error for bad input, body: ${r.text}`).toBeLessThan(500);
  expect(r.contentType).toMatch(/application\/json/);
  expect(r.body, `body is not JSON: ${r.text}`).toBeTypeOf("object");
  expect(r.body).toHaveProperty("detail");
  expect(r.body.detail).toBeTruthy();
  expect(r.text).not.toMatch(/\n\s+at .+\(.+:\d+:\d+\)/); // no stack trace
}

/** A 422 whose detail mentions the offending field. */
function expectValidationError(r: Reply, field: string) {
  expectErrorBody(r);
  expect(r.status).toBe(422);
  expect(JSON.stringify(r.body.detail)).toContain(field);
}

describe("malformed bodies", () => {
  it("malformed JSON is rejected with 422 (or 400) and a JSON detail", async () => {
    for (const path of ["/threads", "/threads/search", "/assistants", "/assistants/search", "/runs/wait"]) {
      const r = await send("POST", path, '{"metadata": {"a": 1', true);
      expectErrorBody(r);
      expect([400, 422]).toContain(r.status);
    }
  });

  it("a body that is not an object is rejected", async () => {
    const r = await send("POST", "/threads", [1, 2, 3]);
    expectErrorBody(r);
    expect([400, 422]).toContain(r.status);
    const s = await send("POST", "/assistants/search", "just a string");
    expectErrorBody(s);
    expect([400, 422]).toContain(s.status);
  });
});

/** Sends a request with no body and no Content-Type as curl does (`curl -X POST`: no Content-Length either). */
async function sendBare(method: string, path: string, contentLength?: string): Promise<Reply> {
  const { hostname, port } = new URL(hangar.server.url);
  const head = [`${method} ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, "Connection: close"];
  if (contentLength !== undefined) head.push(`Content-Length: ${contentLength}`);
  const raw = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(Number(port), hostname, () => socket.write(`${head.join("\r\n")}\r\n\r\n`));
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    socket.on("error", reject);
  });
  const [headers, ...rest] = raw.split("\r\n\r\n");
  let text = rest.join("\r\n\r\n");
  // A chunked reply: the one data chunk between its size line and the terminating chunk.
  if (/^transfer-encoding: chunked/im.test(headers)) text = text.split("\r\n").slice(1, -3).join("\r\n");
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const contentType = /^content-type: (.*)$/im.exec(headers)?.[1] ?? "";
  return { status: Number(headers.split(" ")[1]), contentType, text, body: parsed };
}

describe("absent bodies", () => {
  const routes = ["/threads", "/threads/search", "/threads/count", "/assistants/search", "/store/namespaces"];

  it("a POST with no body and no Content-Type reads as {} (curl -X POST), as on the official server", async () => {
    for (const contentLength of [undefined, "0"]) {
      for (const path of routes) {
        const r = await sendBare("POST", path, contentLength);
        expect(r.status, `POST ${path} (Content-Length: ${contentLength}): ${r.text}`).toBe(200);
        expect(r.body, `POST ${path}: ${r.text}`).toBeDefined();
      }
    }
    // fetch with no body sends Content-Length: 0 and no Content-Type.
    const created = await fetch(`${hangar.server.url}/threads`, { method: "POST" });
    expect(created.status).toBe(200);
    const thread = await created.json();
    expect(thread.metadata).toEqual({});
    const count = await fetch(`${hangar.server.url}/threads/count`, { method: "POST" });
    expect(count.status).toBe(200);
    expect(typeof (await count.json())).toBe("number");
  });

  it("a PATCH with no body changes nothing; a body that is not an object is still a 422 naming the body", async () => {
    const t = await hangar.client.threads.create({ metadata: { kept: 1 } });
    const r = await sendBare("PATCH", `/threads/${t.thread_id}`);
    expect(r.status, r.text).toBe(200);
    expect(r.body.metadata).toEqual({ kept: 1 });
    for (const raw of ["[]", '"x"', "null"]) {
      const bad = await send("POST", "/threads", raw, true);
      expectValidationError(bad, "body");
    }
  });
});

describe("wrong types name the field", () => {
  it("thread create: metadata must be an object", async () => {
    expectValidationError(await send("POST", "/threads", { metadata: "x" }), "metadata");
  });

  it("thread create: thread_id must be a UUID", async () => {
    expectValidationError(await send("POST", "/threads", { thread_id: "not-a-uuid" }), "thread_id");
  });

  it("thread create: if_exists must be raise or do_nothing", async () => {
    expectValidationError(await send("POST", "/threads", { if_exists: "overwrite" }), "if_exists");
  });

  it("thread search: limit must be an integer", async () => {
    expectValidationError(await send("POST", "/threads/search", { limit: "ten" }), "limit");
  });

  it("thread search: status and sort_by must be known values", async () => {
    expectValidationError(await send("POST", "/threads/search", { status: "sleeping" }), "status");
    expectValidationError(await send("POST", "/threads/search", { sort_by: "colour" }), "sort_by");
    expectValidationError(await send("POST", "/threads/search", { sort_order: "sideways" }), "sort_order");
  });

  it("thread search: limit below the minimum", async () => {
    expectValidationError(await send("POST", "/threads/search", { limit: 0 }), "limit");
    expectValidationError(await send("POST", "/threads/search", { offset: -1 }), "offset");
  });

  it("assistant create: graph_id is required and must be a string", async () => {
    expectValidationError(await send("POST", "/assistants", { metadata: {} }), "graph_id");
    expectValidationError(await send("POST", "/assistants", { graph_id: 42 }), "graph_id");
  });

  it("assistant create: config and metadata must be objects", async () => {
    expectValidationError(await send("POST", "/assistants", { graph_id: "chat", config: "x" }), "config");
    expectValidationError(await send("POST", "/assistants", { graph_id: "chat", metadata: [1] }), "metadata");
  });

  it("assistant search: limit must be an integer", async () => {
    expectValidationError(await send("POST", "/assistants/search", { limit: "ten" }), "limit");
  });

  it("history: limit must be an integer", async () => {
    const t = await hangar.client.threads.create();
    expectValidationError(await send("POST", `/threads/${t.thread_id}/history`, { limit: "ten" }), "limit");
  });

  it("run create: metadata must be an object, assistant_id is required", async () => {
    const t = await hangar.client.threads.create();
    expectValidationError(
      await send("POST", `/threads/${t.thread_id}/runs/wait`, {
        assistant_id: "chat",
        input: {},
        metadata: "x",
      }),
      "metadata",
    );
    expectValidationError(
      await send("POST", `/threads/${t.thread_id}/runs/wait`, { input: {} }),
      "assistant_id",
    );
    expect(await hangar.client.runs.list(t.thread_id)).toEqual([]);
  });
});

describe("unknown stream_mode", () => {
  it("is a 422 naming stream_mode, and creates no run", async () => {
    const t = await hangar.client.threads.create();
    for (const stream_mode of ["bogus", ["values", "bogus"]]) {
      const r = await send("POST", `/threads/${t.thread_id}/runs/stream`, {
        assistant_id: "chat",
        input: { messages: [{ type: "human", content: "hi" }] },
        stream_mode,
      });
      expectValidationError(r, "stream_mode");
    }
    const stateless = await send("POST", "/runs/stream", {
      assistant_id: "chat",
      input: { messages: [{ type: "human", content: "hi" }] },
      stream_mode: "bogus",
    });
    expectValidationError(stateless, "stream_mode");
    const background = await send("POST", `/threads/${t.thread_id}/runs`, {
      assistant_id: "chat",
      input: { messages: [{ type: "human", content: "hi" }] },
      stream_mode: ["nope"],
    });
    expectValidationError(background, "stream_mode");

    expect(await hangar.client.runs.list(t.thread_id)).toEqual([]);
    const thread = await hangar.client.threads.get(t.thread_id);
    expect(thread.status).toBe("idle");
    expect(await hangar.client.threads.getHistory(t.thread_id)).toEqual([]);
  });
});

describe("bad UUIDs in paths", () => {
  it("are 422", async () => {
    const cases: Array<[string, string, unknown?]> = [
      ["GET", "/threads/not-a-uuid"],
      ["PATCH", "/threads/not-a-uuid", { metadata: {} }],
      ["DELETE", "/threads/not-a-uuid"],
      ["GET", "/threads/not-a-uuid/state"],
      ["POST", "/threads/not-a-uuid/history", {}],
      ["GET", "/threads/not-a-uuid/history"],
      ["POST", "/threads/not-a-uuid/copy", {}],
      ["GET", "/threads/not-a-uuid/runs"],
      ["GET", `/threads/${randomUUID()}/state/not-a-uuid`],
    ];
    for (const [method, path, body] of cases) {
      const r = await send(method, path, body);
      expectErrorBody(r);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(422);
    }
  });
});

describe("missing resources", () => {
  it("are 404 with a detail", async () => {
    const t = await hangar.client.threads.create();
    const id = randomUUID();
    const cases: Array<[string, string, unknown?]> = [
      ["GET", `/threads/${id}`],
      ["PATCH", `/threads/${id}`, { metadata: { a: 1 } }],
      ["DELETE", `/threads/${id}`],
      ["GET", `/threads/${id}/state`],
      ["POST", `/threads/${id}/state`, { values: {} }],
      ["POST", `/threads/${id}/history`, {}],
      ["GET", `/threads/${id}/history`],
      ["POST", `/threads/${id}/copy`, {}],
      ["POST", `/threads/${id}/runs/wait`, { assistant_id: "chat", input: {} }],
      ["GET", `/assistants/${id}`],
      ["PATCH", `/assistants/${id}`, { name: "x" }],
      ["DELETE", `/assistants/${id}`],
      ["GET", `/assistants/${id}/graph`],
      ["GET", `/assistants/${id}/schemas`],
      ["POST", `/assistants/${id}/versions`, {}],
      ["GET", `/assistants/no_such_graph`],
      ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: randomUUID(), input: {} }],
      ["POST", `/threads/${t.thread_id}/runs/wait`, { assistant_id: "no_such_graph", input: {} }],
    ];
    for (const [method, path, body] of cases) {
      const r = await send(method, path, body);
      expectErrorBody(r);
      expect(r.status, `${method} ${path}: ${r.text}`).toBe(404);
    }
  });

  it("a missing checkpoint is 404", async () => {
    const t = await hangar.client.threads.create();
    await hangar.client.runs.wait(t.thread_id, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
    });
    const r = await send("GET", `/threads/${t.thread_id}/state/${randomUUID()}`);
    expectErrorBody(r);
    expect(r.status).toBe(404);
    const p = await send("POST", `/threads/${t.thread_id}/state/checkpoint`, {
      checkpoint: { checkpoint_id: randomUUID(), checkpoint_ns: "" },
    });
    expectErrorBody(p);
    expect(p.status).toBe(404);
  });

  it("an unknown route is 404 with a JSON detail", async () => {
    const r = await send("GET", "/no/such/route");
    expectErrorBody(r);
    expect(r.status).toBe(404);
  });
});

describe("rejected requests change nothing", () => {
  it("a bad PATCH leaves thread metadata as it was", async () => {
    const tag = unique("nochange");
    const t = await hangar.client.threads.create({ metadata: { tag, k: 1 } });
    const before = await hangar.client.threads.get(t.thread_id);
    const r = await send("PATCH", `/threads/${t.thread_id}`, { metadata: "x" });
    expectValidationError(r, "metadata");
    expect(await hangar.client.threads.get(t.thread_id)).toEqual(before);
  });

  it("a rejected thread create stores no thread", async () => {
    const threadId = randomUUID();
    const tag = unique("nocreate");
    const r = await send("POST", "/threads", {
      thread_id: threadId,
      metadata: { tag },
      if_exists: "sometimes",
    });
    expectValidationError(r, "if_exists");
    const get = await send("GET", `/threads/${threadId}`);
    expect(get.status).toBe(404);
    expect(await hangar.client.threads.count({ metadata: { tag } })).toBe(0);
  });

  it("a rejected assistant create or update stores nothing", async () => {
    const tag = unique("noassistant");
    const r = await send("POST", "/assistants", { graph_id: "chat", metadata: { tag }, config: 7 });
    expectValidationError(r, "config");
    expect(await hangar.client.assistants.count({ metadata: { tag } })).toBe(0);

    const a = await hangar.client.assistants.create({ graphId: "chat", metadata: { tag }, name: "kept" });
    const u = await send("PATCH", `/assistants/${a.assistant_id}`, { name: "changed", config: "x" });
    expectValidationError(u, "config");
    const after = await hangar.client.assistants.get(a.assistant_id);
    expect(after).toEqual(a);
    expect(await hangar.client.assistants.getVersions(a.assistant_id)).toHaveLength(1);
  });

  it("a rejected state update leaves the state as it was", async () => {
    const t = await hangar.client.threads.create();
    await hangar.client.runs.wait(t.thread_id, "chat", {
      input: { messages: [{ type: "human", content: "hi" }] },
    });
    const before = await hangar.client.threads.getHistory(t.thread_id, { limit: 100 });
    const r = await send("POST", `/threads/${t.thread_id}/state`, { values: {}, as_node: 12 });
    expectValidationError(r, "as_node");
    expect(await hangar.client.threads.getHistory(t.thread_id, { limit: 100 })).toEqual(before);
  });

  it("a 409 on duplicate create leaves the existing thread as it was", async () => {
    const threadId = randomUUID();
    await hangar.client.threads.create({ threadId, metadata: { v: "original" } });
    const before = await hangar.client.threads.get(threadId);
    const r = await send("POST", "/threads", { thread_id: threadId, metadata: { v: "new" } });
    expectErrorBody(r);
    expect(r.status).toBe(409);
    expect(await hangar.client.threads.get(threadId)).toEqual(before);
  });
});
