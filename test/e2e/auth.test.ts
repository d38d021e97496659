// End-to-end: custom auth (auth.path in langgraph.json): authentication on every request, per-user threads
// through handler filters, service_auth_user_id, and a handler that refuses.
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { httpError, unique } from "../helpers/http.ts";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/auth-project/langgraph.json") });

const as = (token: string) =>
  new Client({
    apiUrl: hangar.server.url,
    defaultHeaders: { authorization: `Bearer ${token}` },
    callerOptions: { maxRetries: 0 },
  });

const INPUT = { messages: [{ role: "user", content: "hi" }] };

describe("custom auth", () => {
  it("refuses requests without valid credentials (401), but /ok and /docs stay open", async () => {
    const url = hangar.server.url;
    expect((await fetch(`${url}/ok`)).status).toBe(200);
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
    const none = await fetch(`${url}/threads`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json" },
    });
    expect(none.status).toBe(401);
    expect((await none.json()).detail).toMatch(/token/);
    expect((await httpError(as("wrong").threads.create())).status).toBe(401);
  });

  it("records the owner: the handler's metadata and service_auth_user_id", async () => {
    const t = await as("token-alice").threads.create({ metadata: { tag: unique("own") } });
    expect(t.metadata?.owner).toBe("alice");
    expect(t.metadata?.service_auth_user_id).toBe("alice");
  });

  it("user B cannot read, search, stream, copy, run on, update or delete user A's threads", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const t = await alice.threads.create();
    await alice.runs.wait(t.thread_id, "chat", { input: INPUT });
    const id = t.thread_id;
    const denied = [
      () => bob.threads.get(id),
      () => bob.threads.getState(id),
      () => bob.threads.getHistory(id),
      () => bob.threads.copy(id),
      () => bob.threads.update(id, { metadata: { x: 1 } }),
      () => bob.runs.wait(id, "chat", { input: INPUT }),
      () => bob.runs.create(id, "chat", { input: INPUT }),
      () => bob.runs.list(id),
      () => bob.threads.delete(id),
    ];
    for (const call of denied) expect((await httpError(call())).status).toBe(404);
    const stream = await fetch(`${hangar.server.url}/threads/${id}/runs/stream`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer token-bob" },
      body: JSON.stringify({ assistant_id: "chat", input: INPUT }),
    });
    expect(stream.status).toBe(404);
    const threadStream = await fetch(`${hangar.server.url}/threads/${id}/stream`, {
      headers: { authorization: "Bearer token-bob" },
    });
    expect(threadStream.status).toBe(404);
    // Nothing of the above changed alice's thread.
    const state = await alice.threads.getState<{ messages: unknown[] }>(id);
    expect(state.values.messages).toHaveLength(2);
    expect((await alice.runs.list(id)).length).toBe(1);
  });

  it("a handler's filter limits search and count to the user's own threads, in the query", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const tag = unique("shared");
    const a1 = await alice.threads.create({ metadata: { tag } });
    const a2 = await alice.threads.create({ metadata: { tag } });
    const b1 = await bob.threads.create({ metadata: { tag } });
    const seenByAlice = await alice.threads.search({ metadata: { tag }, limit: 2 });
    expect(seenByAlice.map((t) => t.thread_id).sort()).toEqual([a1.thread_id, a2.thread_id].sort());
    expect((await bob.threads.search({ metadata: { tag } })).map((t) => t.thread_id)).toEqual([b1.thread_id]);
    expect(await alice.threads.count({ metadata: { tag } })).toBe(2);
    // Even asking for another owner explicitly finds nothing.
    expect(await alice.threads.search({ metadata: { tag, owner: "bob" } })).toEqual([]);
  });

  it("cron handlers: the owner is recorded on create, and filters limit search, count, get, patch, delete", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const tag = unique("crons");
    const a = await alice.crons.create("chat", { schedule: "0 9 * * *", metadata: { tag } } as any);
    const b = await bob.crons.create("chat", { schedule: "0 10 * * *", metadata: { tag } } as any);
    expect((a as any).metadata).toEqual({ tag, owner: "alice" });
    expect((a as any).user_id).toBe("alice");
    const seen = await alice.crons.search({ metadata: { tag }, limit: 10 });
    expect(seen.map((c) => c.cron_id)).toEqual([a.cron_id]);
    expect(await alice.crons.count({ metadata: { tag } })).toBe(1);
    // Bob's cron does not exist for Alice: every action on it is 404, and it stays as it was.
    for (const attempt of [
      () => alice.crons.update(b.cron_id, { schedule: "0 11 * * *" }),
      () => alice.crons.delete(b.cron_id),
    ]) {
      expect((await httpError(attempt())).status).toBe(404);
    }
    const got = await fetch(`${hangar.server.url}/runs/crons/${b.cron_id}`, {
      headers: { authorization: "Bearer token-alice" },
    });
    expect(got.status).toBe(404);
    const bobs = await bob.crons.search({ metadata: { tag } });
    expect(bobs.map((c) => [c.cron_id, c.schedule])).toEqual([[b.cron_id, "0 10 * * *"]]);
    // A cron on someone else's thread is refused like a run on it.
    const bt = await bob.threads.create();
    expect(
      (await httpError(alice.crons.createForThread(bt.thread_id, "chat", { schedule: "0 9 * * *" }))).status,
    ).toBe(404);
  });

  it("a handler that returns false refuses the action with 403", async () => {
    const err = await httpError(as("token-alice").store.deleteItem(["x"], "k"));
    expect(err.status).toBe(403);
  });

  it("store handlers can scope each user's items under their own namespace", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const ns = unique("notes");
    await alice.store.putItem([ns], "k", { secret: "alice's" });
    expect((await alice.store.getItem([ns], "k"))?.value).toEqual({ secret: "alice's" });
    expect(await bob.store.getItem([ns], "k")).toBeNull();
    expect((await alice.store.searchItems([ns])).items.map((i) => i.namespace)).toEqual([["alice", ns]]);
    expect((await bob.store.searchItems([ns])).items).toEqual([]);
    const names = await bob.store.listNamespaces({ prefix: [ns] });
    expect(names.namespaces).toEqual([]);
    expect((await alice.store.listNamespaces({ prefix: [ns] })).namespaces).toEqual([["alice", ns]]);
  });
});

describe("HANGAR_API_KEYS beside custom auth", () => {
  const keyed = useHangar({
    config: join(ROOT, "test/fixtures/auth-project/langgraph.json"),
    env: { HANGAR_API_KEYS: "a-key" },
  });

  it("is ignored, and the start says so: the auth handler decides alone", async () => {
    expect(keyed.server.output()).toMatch(
      /HANGAR_API_KEYS is ignored: langgraph.json's auth.path authenticates/,
    );
    expect(hangar.server.output()).not.toMatch(/HANGAR_API_KEYS is ignored/);
    const withKey = await fetch(`${keyed.server.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "a-key" },
      body: "{}",
    });
    expect(withKey.status).toBe(401);
    const withToken = await fetch(`${keyed.server.url}/threads/search`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "Bearer token-alice" },
      body: "{}",
    });
    expect(withToken.status).toBe(200);
  });
});
