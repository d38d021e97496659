// Walks every path and method of the official Agent Server OpenAPI document with valid input, and checks each
// answers with a success status the document lists for it (an operation documented with no success status, such
// as GET /mcp/, with one of the statuses it lists). Streams that stay open (a thread's) are read to their status.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar();
// The official document, copied into the repository (test/fixtures/openapi, shared with test/security/fuzz).
const REFERENCE = join(ROOT, "test/fixtures/openapi/agent-server-openapi.json");

interface Operation {
  method: string;
  path: string;
  codes: string[];
}

function operations(): Operation[] {
  const doc = JSON.parse(readFileSync(REFERENCE, "utf8")) as {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  };
  const ops: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (method === "parameters") continue;
      ops.push({ method: method.toUpperCase(), path, codes: Object.keys(op.responses) });
    }
  }
  return ops;
}

const INPUT = { messages: [{ role: "user", content: "walk" }] };

/** A request body that is valid for each operation that takes one. */
function bodyFor(op: Operation, ids: Record<string, string>): unknown {
  const key = `${op.method} ${op.path}`;
  const bodies: Record<string, unknown> = {
    "POST /assistants": { graph_id: "chat", name: "walker" },
    "PATCH /assistants/{assistant_id}": { metadata: { walked: true } },
    "POST /assistants/{assistant_id}/latest": { version: 1 },
    "POST /threads/{thread_id}/state": {
      values: { messages: [{ type: "ai", content: "edited" }] },
      as_node: "agent",
    },
    "POST /threads/{thread_id}/state/checkpoint": { checkpoint: { checkpoint_id: ids.checkpoint_id } },
    "PATCH /threads/{thread_id}": { metadata: { walked: true } },
    "POST /threads/prune": { thread_ids: [ids.prunable] },
    "POST /threads/{thread_id}/runs": { assistant_id: "chat", input: INPUT },
    "POST /threads/{thread_id}/runs/stream": { assistant_id: "chat", input: INPUT },
    "POST /threads/{thread_id}/runs/wait": { assistant_id: "chat", input: INPUT },
    "POST /threads/{thread_id}/runs/crons": { assistant_id: "chat", schedule: "0 9 * * *" },
    "POST /runs/crons": { assistant_id: "chat", schedule: "0 9 * * *" },
    "PATCH /runs/crons/{cron_id}": { enabled: false },
    "POST /runs/stream": { assistant_id: "chat", input: INPUT },
    "POST /runs/wait": { assistant_id: "chat", input: INPUT },
    "POST /runs": { assistant_id: "chat", input: INPUT },
    "POST /runs/batch": [{ assistant_id: "chat", input: INPUT }],
    "POST /runs/cancel": { run_ids: [ids.run_id] },
    "PUT /store/items": { namespace: ["walk"], key: "k", value: { v: 1 } },
    "DELETE /store/items": { namespace: ["walk"], key: "gone" },
    "POST /store/items/search": { namespace_prefix: ["walk"] },
    "POST /threads/{thread_id}/commands": { id: 1, method: "state.get" },
    "POST /threads/{thread_id}/stream/events": { channels: ["values", "lifecycle"] },
    "POST /a2a/{assistant_id}": {
      jsonrpc: "2.0",
      id: 1,
      method: "message/send",
      params: {
        message: {
          kind: "message",
          messageId: "walk",
          role: "user",
          parts: [{ kind: "text", text: "walk" }],
        },
      },
    },
    "POST /mcp/": {
      jsonrpc: "2.0",
      id: "1",
      method: "initialize",
      params: {
        clientInfo: { name: "walk", version: "1.0.0" },
        protocolVersion: "2024-11-05",
        capabilities: {},
      },
    },
  };
  if (key in bodies) return bodies[key];
  return op.method === "GET" || op.method === "DELETE" ? undefined : {};
}

describe("every path of the reference OpenAPI document", () => {
  it("answers each operation with a success status the document lists", async () => {
    const { client, server } = hangar;
    const thread = await client.threads.create();
    let runId = "";
    await client.runs.wait(thread.thread_id, "chat", {
      input: INPUT,
      onRunCreated: (m) => (runId = m.run_id),
    });
    const state = await client.threads.getState(thread.thread_id);
    const assistant = await client.assistants.create({ graphId: "research" });
    const cron = await client.crons.create("chat", { schedule: "0 9 * * *" } as any);
    await client.store.putItem(["walk"], "gone", { v: 0 });
    const prunable = await client.threads.create();
    const ids: Record<string, string> = {
      thread_id: thread.thread_id,
      run_id: runId,
      assistant_id: assistant.assistant_id,
      cron_id: cron.cron_id,
      checkpoint_id: state.checkpoint.checkpoint_id!,
      namespace: "research",
      prunable: prunable.thread_id,
    };
    // Deletes last (the longest paths first, so a run goes before its thread), so the resources the other
    // operations use still exist.
    const isDelete = (o: Operation) => Number(o.method === "DELETE");
    const ops = operations().sort(
      (a, b) => isDelete(a) - isDelete(b) || (isDelete(a) ? b.path.length - a.path.length : 0),
    );
    expect(ops.length).toBeGreaterThan(50);
    const failures: string[] = [];
    for (const op of ops) {
      const url = new URL(server.url + op.path.replace(/\{(\w+)\}/g, (_, name) => ids[name]));
      if (op.path === "/store/items" && op.method === "GET") url.search = "namespace=walk&key=k";
      const body = bodyFor(op, ids);
      const ac = new AbortController();
      const res = await fetch(url, {
        method: op.method,
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(op.path.startsWith("/mcp") || op.path.startsWith("/a2a")
            ? { accept: "application/json, text/event-stream" }
            : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: ac.signal,
      });
      // Thread streams (v1 and protocol v2) never end by themselves: their status is all this walk needs.
      if ((op.path.endsWith("/stream") && op.method === "GET") || op.path.endsWith("/stream/events"))
        ac.abort();
      else await res.arrayBuffer();
      const success = (code: string) => code.startsWith("2");
      const ok = op.codes.some(success)
        ? success(String(res.status)) && op.codes.includes(String(res.status))
        : op.codes.includes(String(res.status));
      if (!ok) failures.push(`${op.method} ${op.path} -> ${res.status} (documented: ${op.codes.join(", ")})`);
    }
    expect(failures).toEqual([]);
  });
});
