// End-to-end: thread TTL with its sweeper (delete and keep_latest), POST /threads/prune, and
// GET /threads/{id}/storage.
import { describe, expect, it } from "vitest";
import { httpError, postJson } from "../helpers/http.ts";
import { join } from "node:path";
import { ROOT, useHangar } from "../helpers/server.ts";
import { waitFor as eventually } from "../helpers/wait.ts";

const hangar = useHangar({ env: { HANGAR_SWEEP_INTERVAL_MS: "100" } });
const withDefault = useHangar({
  config: join(ROOT, "test/fixtures/ttl-project/langgraph.json"),
  env: { HANGAR_SWEEP_INTERVAL_MS: "100" },
});
const INPUT = { messages: [{ role: "user", content: "hi" }] };

async function threadWithRuns(n: number, ttl?: { ttl: number; strategy: "delete" | "keep_latest" }) {
  const { server, client } = hangar;
  const res = await postJson(server.url, "/threads", ttl ? { ttl } : {});
  expect(res.status).toBe(200);
  for (let i = 0; i < n; i++) await client.runs.wait(res.body.thread_id, "chat", { input: INPUT });
  return res.body.thread_id as string;
}

describe("thread TTL", () => {
  it("strategy delete: the sweeper removes the thread and its checkpoints after the TTL", async () => {
    const id = await threadWithRuns(1, { ttl: 0.005, strategy: "delete" });
    await eventually("the thread to be swept", async () =>
      (await fetch(`${hangar.server.url}/threads/${id}`)).status === 404 ? true : undefined,
    );
    expect((await httpError(hangar.client.threads.getHistory(id))).status).toBe(404);
  });

  it("strategy keep_latest: the thread stays with only its latest state", async () => {
    const { client } = hangar;
    const id = await threadWithRuns(2);
    const before = await client.threads.getState(id);
    expect((await client.threads.getHistory(id, { limit: 100 })).length).toBeGreaterThan(1);
    await fetch(`${hangar.server.url}/threads/${id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ttl: { ttl: 0.005, strategy: "keep_latest" } }),
    });
    await eventually("old checkpoints to be swept", async () =>
      (await client.threads.getHistory(id, { limit: 100 })).length === 1 ? true : undefined,
    );
    const after = await client.threads.getState(id);
    expect(after.values).toEqual(before.values);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
  });
});

describe("checkpointer.ttl in langgraph.json", () => {
  it("gives threads created without a ttl the default one", async () => {
    const { client } = withDefault;
    const t = await client.threads.create();
    await eventually("the default TTL to expire the thread", async () =>
      (await fetch(`${withDefault.server.url}/threads/${t.thread_id}`)).status === 404 ? true : undefined,
    );
  });
});

describe("prune and storage", () => {
  it("reports the bytes a thread's checkpoints take, by section and channel", async () => {
    const { client, server } = hangar;
    const id = await threadWithRuns(2);
    const history = await client.threads.getHistory(id, { limit: 100 });
    const res = await fetch(`${server.url}/threads/${id}/storage`);
    expect(res.status).toBe(200);
    const s = await res.json();
    expect(s.thread_id).toBe(id);
    expect(s.checkpoints.count).toBe(history.length);
    expect(s.channel_values.by_channel.messages.bytes).toBeGreaterThan(0);
    expect(s.total_bytes).toBe(s.checkpoints.bytes + s.channel_values.bytes + s.pending_writes.bytes);
    expect((await fetch(`${server.url}/threads/00000000-0000-4000-8000-000000000000/storage`)).status).toBe(
      404,
    );
  });

  it("prune keep_latest keeps threads with their latest state; prune delete removes them", async () => {
    const { client, server } = hangar;
    const a = await threadWithRuns(2);
    const b = await threadWithRuns(1);
    const stateA = await client.threads.getState(a);
    const bytes = async (id: string) =>
      (await (await fetch(`${server.url}/threads/${id}/storage`)).json()).total_bytes;
    const before = await bytes(a);
    const kept = await postJson(server.url, "/threads/prune", {
      thread_ids: [a, b],
      strategy: "keep_latest",
    });
    expect(kept.body).toEqual({ pruned_count: 2 });
    expect(await client.threads.getHistory(a, { limit: 100 })).toHaveLength(1);
    expect((await client.threads.getState(a)).values).toEqual(stateA.values);
    expect(await bytes(a)).toBeLessThan(before);
    const deleted = await postJson(server.url, "/threads/prune", { thread_ids: [a, b] });
    expect(deleted.body).toEqual({ pruned_count: 2 });
    for (const id of [a, b]) expect((await httpError(client.threads.get(id))).status).toBe(404);
    const bad = await postJson(server.url, "/threads/prune", { thread_ids: ["nope"] });
    expect(bad.status).toBe(422);
  });
});
