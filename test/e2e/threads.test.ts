// End-to-end tests of /threads through the official SDK: CRUD, supersteps, search, copy, state, history, status.
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Thread } from "@langchain/langgraph-sdk";
import { getJson, httpError, postJson, unique } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const hangar = useHangar();

/** Small pause so that consecutive writes get distinct timestamps (ordering tests only). */
function tick(): Promise<void> {
  return new Promise((r) => setTimeout(r, 15));
}

function messageSummary(values: any): Array<[string, string]> {
  return (values?.messages ?? []).map((m: any) => [m.type, m.content]);
}

/** Runs the chat graph once on a thread with a human message. */
async function chat(threadId: string, text: string) {
  return hangar.client.runs.wait(threadId, "chat", {
    input: { messages: [{ type: "human", content: text }] },
  });
}

/** Causes a failed run on the thread: the chat graph cannot coerce a message of an unknown type. */
async function failRun(threadId: string) {
  await hangar.client.runs
    .wait(threadId, "chat", {
      input: { messages: [{ type: "not-a-message-type", content: "boom" }] },
      raiseError: false,
    })
    .catch(() => undefined);
}

/** Checks the documented shape of a state snapshot (GET /state, history items). */
function expectStateShape(s: any, threadId: string) {
  expect(s).toHaveProperty("values");
  expect(Array.isArray(s.next)).toBe(true);
  expect(Array.isArray(s.tasks)).toBe(true);
  expect(typeof s.metadata).toBe("object");
  expect(typeof s.metadata.step).toBe("number");
  expect(typeof s.created_at).toBe("string");
  expect(Number.isNaN(Date.parse(s.created_at))).toBe(false);
  expect(s.checkpoint).toMatchObject({ thread_id: threadId, checkpoint_ns: "" });
  expect(typeof s.checkpoint.checkpoint_id).toBe("string");
  expect(s.checkpoint_id).toBe(s.checkpoint.checkpoint_id);
  expect(s).toHaveProperty("parent_checkpoint");
  expect(s).toHaveProperty("parent_checkpoint_id");
  if (s.parent_checkpoint) {
    expect(s.parent_checkpoint).toMatchObject({ thread_id: threadId, checkpoint_ns: "" });
    expect(s.parent_checkpoint_id).toBe(s.parent_checkpoint.checkpoint_id);
  }
}

describe("create", () => {
  it("with {} gives an idle thread with empty values", async () => {
    const t = await hangar.client.threads.create();
    expect(t.thread_id).toMatch(UUID_RE);
    expect(t.status).toBe("idle");
    expect(t.values).toEqual({});
    expect(typeof t.metadata).toBe("object");
    expect(Number.isNaN(Date.parse(t.created_at))).toBe(false);
    expect(Number.isNaN(Date.parse(t.updated_at))).toBe(false);

    const raw = await postJson(hangar.server.url, "/threads", {});
    expect(raw.status).toBe(200);
    expect(raw.body.status).toBe("idle");
    expect(raw.body.values).toEqual({});
    expect(raw.body.thread_id).toMatch(UUID_RE);
  });

  it("with thread_id and metadata stores both", async () => {
    const threadId = randomUUID();
    const tag = unique("create");
    const t = await hangar.client.threads.create({ threadId, metadata: { tag, n: 1 } });
    expect(t.thread_id).toBe(threadId);
    expect(t.metadata).toMatchObject({ tag, n: 1 });
    const got = await hangar.client.threads.get(threadId);
    expect(got.thread_id).toBe(threadId);
    expect(got.metadata).toMatchObject({ tag, n: 1 });
    expect(got.status).toBe("idle");
  });

  it("if_exists raise answers 409; do_nothing returns the existing thread", async () => {
    const threadId = randomUUID();
    const tag = unique("exists");
    await hangar.client.threads.create({ threadId, metadata: { tag, which: "first" } });
    const err = await httpError(hangar.client.threads.create({ threadId, metadata: { which: "second" } }));
    expect(err.status).toBe(409);
    expect(err.body.detail).toBeTruthy();
    const err2 = await httpError(hangar.client.threads.create({ threadId, ifExists: "raise" }));
    expect(err2.status).toBe(409);

    const same = await hangar.client.threads.create({
      threadId,
      metadata: { which: "third" },
      ifExists: "do_nothing",
    });
    expect(same.thread_id).toBe(threadId);
    expect(same.metadata).toMatchObject({ tag, which: "first" });
    expect((await hangar.client.threads.get(threadId)).metadata).toMatchObject({ which: "first" });
  });

  it("applies supersteps in order (__input__, __start__, node)", async () => {
    const t = await hangar.client.threads.create({
      graphId: "chat",
      metadata: { tag: unique("supersteps") },
      supersteps: [
        { updates: [{ values: { messages: [{ type: "human", content: "hi" }] }, asNode: "__input__" }] },
        { updates: [{ values: { messages: [{ type: "human", content: "hi" }] }, asNode: "__start__" }] },
        { updates: [{ values: { messages: [{ type: "ai", content: "hello" }] }, asNode: "agent" }] },
      ],
    });
    expect(t.status).toBe("idle");
    expect(messageSummary(t.values)).toEqual([
      ["human", "hi"],
      ["ai", "hello"],
    ]);
    expect(t.metadata).toMatchObject({ graph_id: "chat" });

    const state = await hangar.client.threads.getState(t.thread_id);
    expect(messageSummary(state.values)).toEqual([
      ["human", "hi"],
      ["ai", "hello"],
    ]);
    expect(state.next).toEqual([]);
    expectStateShape(state, t.thread_id);

    // One checkpoint per superstep, newest first.
    const history = await hangar.client.threads.getHistory(t.thread_id);
    expect(history).toHaveLength(3);
    expect(history.map((s) => s.metadata?.step)).toEqual([1, 0, -1]);
    expect(messageSummary(history[0].values)).toEqual([
      ["human", "hi"],
      ["ai", "hello"],
    ]);
    expect(messageSummary(history[1].values)).toEqual([["human", "hi"]]);
    expect(history[1].next).toEqual(["agent"]);

    // The prepopulated thread continues like any other.
    await chat(t.thread_id, "again");
    const after = await hangar.client.threads.getState(t.thread_id);
    expect(messageSummary(after.values).slice(0, 3)).toEqual([
      ["human", "hi"],
      ["ai", "hello"],
      ["human", "again"],
    ]);
    expect(messageSummary(after.values)).toHaveLength(4);
  });

  it("supersteps can set values of a plain-state graph through a node", async () => {
    const topic = unique("owls");
    const t = await hangar.client.threads.create({
      graphId: "research",
      supersteps: [{ updates: [{ values: { topic }, asNode: "plan" }] }],
    });
    expect(t.values).toMatchObject({ topic });
    const state = await hangar.client.threads.getState(t.thread_id);
    expect(state.values).toMatchObject({ topic });
    expect(state.next).toEqual(["research"]);
    expect(state.metadata?.source).toBe("update");
  });
});

describe("get, patch, delete", () => {
  it("PATCH merges metadata and keeps the rest", async () => {
    const tag = unique("patch");
    const t = await hangar.client.threads.create({ metadata: { tag, a: 1, b: "keep" } });
    const patched = await hangar.client.threads.update(t.thread_id, { metadata: { a: 2, c: true } });
    expect(patched.thread_id).toBe(t.thread_id);
    expect(patched.metadata).toMatchObject({ tag, a: 2, b: "keep", c: true });
    expect(patched.created_at).toBe(t.created_at);
    expect(Date.parse(patched.updated_at)).toBeGreaterThanOrEqual(Date.parse(t.updated_at));
    const got = await hangar.client.threads.get(t.thread_id);
    expect(got.metadata).toMatchObject({ tag, a: 2, b: "keep", c: true });
  });

  it("PATCH merges metadata at the top level: null and objects replace a key's value (as the official server)", async () => {
    const t = await hangar.client.threads.create({ metadata: { e: 1, tags: ["x", "y"], b: { c: 2 } } });
    const patched = await hangar.client.threads.update(t.thread_id, {
      metadata: { e: null, tags: ["z"], b: {} },
    });
    expect(patched.metadata).toEqual({ e: null, tags: ["z"], b: {} });
    expect((await hangar.client.threads.get(t.thread_id)).metadata).toEqual({ e: null, tags: ["z"], b: {} });
    // Search sees the stored null and the replaced object.
    const found = await hangar.client.threads.search({ metadata: { e: null, b: {} }, limit: 100 });
    expect(found.map((x) => x.thread_id)).toContain(t.thread_id);
  });

  it("DELETE removes the thread, its state and history", async () => {
    const t = await hangar.client.threads.create({ metadata: { tag: unique("delete") } });
    await chat(t.thread_id, "to be deleted");
    await hangar.client.threads.delete(t.thread_id);
    // Thunks: each request starts only when awaited, so no rejection goes unobserved.
    for (const call of [
      () => hangar.client.threads.get(t.thread_id),
      () => hangar.client.threads.getState(t.thread_id),
      () => hangar.client.threads.getHistory(t.thread_id),
      () => hangar.client.threads.delete(t.thread_id),
      () => hangar.client.threads.update(t.thread_id, { metadata: { x: 1 } }),
    ]) {
      const err = await httpError(call());
      expect(err.status).toBe(404);
      expect(typeof err.body.detail).toBe("string");
    }
  });

  it("GET of an unknown thread is 404 with a detail", async () => {
    const err = await httpError(hangar.client.threads.get(randomUUID()));
    expect(err.status).toBe(404);
    expect(typeof err.body.detail).toBe("string");
  });
});

describe("search and count", () => {
  const tag = unique("search");
  const ids: string[] = [];
  let errorThread = "";
  let topic = "";

  beforeAll(async () => {
    topic = unique("topic");
    for (let i = 0; i < 5; i++) {
      const t = await hangar.client.threads.create({ metadata: { tag, i, even: i % 2 === 0 } });
      ids.push(t.thread_id);
      await tick();
    }
    // Thread 0 gets values through a run; thread 4 ends in error.
    await hangar.client.runs.wait(ids[0], "research", { input: { topic } });
    errorThread = ids[4];
    await failRun(errorThread);
  });

  it("filters by ids", async () => {
    const res = await hangar.client.threads.search({ ids: [ids[1], ids[3]] });
    expect(new Set(res.map((t) => t.thread_id))).toEqual(new Set([ids[1], ids[3]]));
  });

  it("filters by metadata containment", async () => {
    const all = await hangar.client.threads.search({ metadata: { tag }, limit: 100 });
    expect(new Set(all.map((t) => t.thread_id))).toEqual(new Set(ids));
    const even = await hangar.client.threads.search({ metadata: { tag, even: true }, limit: 100 });
    expect(new Set(even.map((t) => t.thread_id))).toEqual(new Set([ids[0], ids[2], ids[4]]));
    const none = await hangar.client.threads.search({ metadata: { tag, even: "true" }, limit: 100 });
    expect(none).toEqual([]);
  });

  it("filters by values", async () => {
    const res = await hangar.client.threads.search({ values: { topic }, limit: 100 });
    expect(res.map((t) => t.thread_id)).toEqual([ids[0]]);
  });

  it("filters by status", async () => {
    const errored = await hangar.client.threads.search({ metadata: { tag }, status: "error", limit: 100 });
    expect(errored.map((t) => t.thread_id)).toEqual([errorThread]);
    const idle = await hangar.client.threads.search({ metadata: { tag }, status: "idle", limit: 100 });
    expect(new Set(idle.map((t) => t.thread_id))).toEqual(new Set(ids.slice(0, 4)));
  });

  it("sorts by thread_id both ways", async () => {
    const asc = await hangar.client.threads.search({
      metadata: { tag },
      sortBy: "thread_id",
      sortOrder: "asc",
    });
    expect(asc.map((t) => t.thread_id)).toEqual([...ids].sort());
    const desc = await hangar.client.threads.search({
      metadata: { tag },
      sortBy: "thread_id",
      sortOrder: "desc",
    });
    expect(desc.map((t) => t.thread_id)).toEqual([...ids].sort().reverse());
  });

  it("sorts by created_at both ways", async () => {
    const asc = await hangar.client.threads.search({
      metadata: { tag },
      sortBy: "created_at",
      sortOrder: "asc",
    });
    expect(asc.map((t) => t.thread_id)).toEqual(ids);
    const desc = await hangar.client.threads.search({
      metadata: { tag },
      sortBy: "created_at",
      sortOrder: "desc",
    });
    expect(desc.map((t) => t.thread_id)).toEqual([...ids].reverse());
  });

  it("sorts by status both ways", async () => {
    const asc = await hangar.client.threads.search({ metadata: { tag }, sortBy: "status", sortOrder: "asc" });
    expect(asc.map((t) => t.status)).toEqual(["error", "idle", "idle", "idle", "idle"]);
    const desc = await hangar.client.threads.search({
      metadata: { tag },
      sortBy: "status",
      sortOrder: "desc",
    });
    expect(desc.map((t) => t.status)).toEqual(["idle", "idle", "idle", "idle", "error"]);
  });

  it("sorts by updated_at both ways", async () => {
    const tag2 = unique("updated");
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      made.push((await hangar.client.threads.create({ metadata: { tag: tag2 } })).thread_id);
      await tick();
    }
    // Touch the oldest thread last: it becomes the most recently updated.
    await hangar.client.threads.update(made[0], { metadata: { touched: true } });
    const desc = await hangar.client.threads.search({
      metadata: { tag: tag2 },
      sortBy: "updated_at",
      sortOrder: "desc",
    });
    expect(desc.map((t) => t.thread_id)).toEqual([made[0], made[2], made[1]]);
    const asc = await hangar.client.threads.search({
      metadata: { tag: tag2 },
      sortBy: "updated_at",
      sortOrder: "asc",
    });
    expect(asc.map((t) => t.thread_id)).toEqual([made[1], made[2], made[0]]);
  });

  it("pages with limit/offset without overlap", async () => {
    const pages: string[][] = [];
    for (const offset of [0, 2, 4]) {
      const page = await hangar.client.threads.search({
        metadata: { tag },
        sortBy: "created_at",
        sortOrder: "asc",
        limit: 2,
        offset,
      });
      pages.push(page.map((t) => t.thread_id));
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(ids);
    const beyond = await hangar.client.threads.search({ metadata: { tag }, limit: 2, offset: 5 });
    expect(beyond).toEqual([]);
  });

  it("select returns only the chosen fields", async () => {
    const res = await hangar.client.threads.search({
      metadata: { tag },
      select: ["thread_id", "status"],
      limit: 100,
    });
    expect(res).toHaveLength(5);
    for (const t of res) expect(Object.keys(t).sort()).toEqual(["status", "thread_id"]);
  });

  it("results carry the thread fields", async () => {
    const [t] = await hangar.client.threads.search({ ids: [ids[0]] });
    for (const key of ["thread_id", "created_at", "updated_at", "metadata", "status", "config"]) {
      expect(t).toHaveProperty(key);
    }
    expect(t.values).toMatchObject({ topic });
  });

  it("counts with metadata and status", async () => {
    expect(await hangar.client.threads.count({ metadata: { tag } })).toBe(5);
    expect(await hangar.client.threads.count({ metadata: { tag, even: false } })).toBe(2);
    expect(await hangar.client.threads.count({ metadata: { tag }, status: "error" })).toBe(1);
    expect(await hangar.client.threads.count({ metadata: { tag }, status: "idle" })).toBe(4);
    expect(await hangar.client.threads.count({ metadata: { tag }, status: "interrupted" })).toBe(0);
    expect(await hangar.client.threads.count({ metadata: { tag: unique("none") } })).toBe(0);
  });
});

describe("copy", () => {
  it("copies state and history; the copy then diverges independently", async () => {
    const original = await hangar.client.threads.create({ metadata: { tag: unique("copy") } });
    await chat(original.thread_id, "first question");
    const stateBefore = await hangar.client.threads.getState(original.thread_id);
    const historyBefore = await hangar.client.threads.getHistory(original.thread_id, { limit: 100 });

    const copy = await hangar.client.threads.copy(original.thread_id);
    expect(copy.thread_id).toMatch(UUID_RE);
    expect(copy.thread_id).not.toBe(original.thread_id);

    const copyState = await hangar.client.threads.getState(copy.thread_id);
    expect(copyState.values).toEqual(stateBefore.values);
    expect(copyState.checkpoint.thread_id).toBe(copy.thread_id);

    const project = (h: any[]) =>
      h.map((s) => ({
        checkpoint_id: s.checkpoint.checkpoint_id,
        values: s.values,
        next: s.next,
        step: s.metadata?.step,
        source: s.metadata?.source,
      }));
    const copyHistory = await hangar.client.threads.getHistory(copy.thread_id, { limit: 100 });
    expect(project(copyHistory)).toEqual(project(historyBefore));

    // Diverge: a run on the copy leaves the original untouched.
    await chat(copy.thread_id, "only on the copy");
    const copyAfter = await hangar.client.threads.getState(copy.thread_id);
    expect(messageSummary(copyAfter.values)).toHaveLength(4);
    expect(messageSummary(copyAfter.values)[2]).toEqual(["human", "only on the copy"]);

    expect(await hangar.client.threads.getState(original.thread_id)).toEqual(stateBefore);
    expect(await hangar.client.threads.getHistory(original.thread_id, { limit: 100 })).toEqual(historyBefore);

    // And a run on the original leaves the copy untouched.
    const copyHistoryAfter = await hangar.client.threads.getHistory(copy.thread_id, { limit: 100 });
    await chat(original.thread_id, "only on the original");
    expect(await hangar.client.threads.getHistory(copy.thread_id, { limit: 100 })).toEqual(copyHistoryAfter);
  });

  it("a copy is a new thread row as the official copy makes it: idle, no config or values of its own", async () => {
    const original = await hangar.client.threads.create({ metadata: { tag: unique("copy-row") } });
    await chat(original.thread_id, "first question");
    const source = await hangar.client.threads.get(original.thread_id);
    expect(source.values).not.toEqual({});
    expect(source.config).not.toEqual({});

    const copy = await hangar.client.threads.copy(original.thread_id);
    const row = (t: Thread) => ({
      status: t.status,
      config: t.config,
      values: t.values,
      metadata: t.metadata,
    });
    const expected = {
      status: "idle",
      config: {},
      values: {},
      metadata: { ...source.metadata, thread_id: copy.thread_id },
    };
    expect(row(copy)).toEqual(expected);
    expect(row(await hangar.client.threads.get(copy.thread_id))).toEqual(expected);
    // Its state comes from the copied checkpoints.
    const state = await hangar.client.threads.getState(copy.thread_id);
    expect(state.values).toEqual((await hangar.client.threads.getState(original.thread_id)).values);
  });

  it("copy of a missing thread is 404", async () => {
    const err = await httpError(hangar.client.threads.copy(randomUUID()));
    expect(err.status).toBe(404);
    expect(err.body.detail).toBeTruthy();
  });
});

describe("state", () => {
  it("GET /state has the documented shape", async () => {
    const t = await hangar.client.threads.create();
    await chat(t.thread_id, "shape please");
    const s = (await hangar.client.threads.getState(t.thread_id)) as any;
    expectStateShape(s, t.thread_id);
    expect(s.next).toEqual([]);
    expect(s.tasks).toEqual([]);
    expect(typeof s.parent_checkpoint_id).toBe("string");
    expect(messageSummary(s.values)[0]).toEqual(["human", "shape please"]);
    expect(messageSummary(s.values)[1][0]).toBe("ai");
  });

  it("GET /state/{checkpoint_id} and POST /state/checkpoint return an older state as it was", async () => {
    const t = await hangar.client.threads.create();
    await chat(t.thread_id, "one");
    const afterFirst = await hangar.client.threads.getState(t.thread_id);
    await chat(t.thread_id, "two");
    const latest = await hangar.client.threads.getState(t.thread_id);
    expect(messageSummary(latest.values)).toHaveLength(4);

    const old = await hangar.client.threads.getState(t.thread_id, afterFirst.checkpoint.checkpoint_id!);
    expect(old.checkpoint.checkpoint_id).toBe(afterFirst.checkpoint.checkpoint_id);
    expect(old.values).toEqual(afterFirst.values);
    expect(messageSummary(old.values)).toHaveLength(2);
    expectStateShape(old, t.thread_id);

    const viaPost = await hangar.client.threads.getState(t.thread_id, {
      thread_id: t.thread_id,
      checkpoint_id: afterFirst.checkpoint.checkpoint_id,
      checkpoint_ns: "",
      checkpoint_map: null,
    });
    expect(viaPost.checkpoint.checkpoint_id).toBe(afterFirst.checkpoint.checkpoint_id);
    expect(viaPost.values).toEqual(afterFirst.values);
  });

  it("GET /state of an unknown checkpoint is 404", async () => {
    const t = await hangar.client.threads.create();
    await chat(t.thread_id, "x");
    const err = await httpError(hangar.client.threads.getState(t.thread_id, randomUUID()));
    expect(err.status).toBe(404);
    expect(err.body.detail).toBeTruthy();
  });

  it("POST /state with as_node updates the state; metadata.source is update", async () => {
    const t = await hangar.client.threads.create();
    await chat(t.thread_id, "before the edit");
    const res = (await hangar.client.threads.updateState(t.thread_id, {
      values: { messages: [{ type: "ai", content: "edited by hand" }] },
      asNode: "agent",
    })) as any;
    expect(typeof res.checkpoint?.checkpoint_id).toBe("string");

    const s = await hangar.client.threads.getState(t.thread_id);
    expect(s.checkpoint.checkpoint_id).toBe(res.checkpoint.checkpoint_id);
    expect(s.metadata?.source).toBe("update");
    expect(s.next).toEqual([]);
    const msgs = messageSummary(s.values);
    expect(msgs).toHaveLength(3);
    expect(msgs[2]).toEqual(["ai", "edited by hand"]);

    const [newest] = await hangar.client.threads.getHistory(t.thread_id, { limit: 1 });
    expect(newest.checkpoint.checkpoint_id).toBe(res.checkpoint.checkpoint_id);
    expect(newest.metadata?.source).toBe("update");
  });

  it("POST /state as a node schedules the following node", async () => {
    const t = await hangar.client.threads.create({ metadata: { graph_id: "research" } });
    await hangar.client.runs.wait(t.thread_id, "research", { input: { topic: "bees" } });
    await hangar.client.threads.updateState(t.thread_id, { values: { topic: "wasps" }, asNode: "plan" });
    const s = await hangar.client.threads.getState(t.thread_id);
    expect(s.values).toMatchObject({ topic: "wasps" });
    expect(s.next).toEqual(["research"]);
    expect(s.metadata?.source).toBe("update");
  });
});

describe("history", () => {
  let threadId = "";
  let all: any[] = [];
  const runs = 4;

  beforeAll(async () => {
    threadId = (await hangar.client.threads.create()).thread_id;
    for (let i = 0; i < runs; i++) await chat(threadId, `turn ${i}`);
    all = await hangar.client.threads.getHistory(threadId, { limit: 1000 });
  });

  it("POST lists checkpoints newest first, each with checkpoint_id and metadata.step", async () => {
    expect(all.length).toBeGreaterThan(10);
    const steps = all.map((s) => s.metadata.step);
    for (let i = 1; i < steps.length; i++) expect(steps[i]).toBeLessThan(steps[i - 1]);
    expect(new Set(all.map((s) => s.checkpoint_id)).size).toBe(all.length);
    for (const s of all) expectStateShape(s, threadId);
    expect(all[0]).toEqual(await hangar.client.threads.getState(threadId));
    expect(all[all.length - 1].parent_checkpoint ?? null).toBeNull();
    // Each item's parent is the next (older) item.
    for (let i = 0; i < all.length - 1; i++)
      expect(all[i].parent_checkpoint_id).toBe(all[i + 1].checkpoint_id);
  });

  it("honours limit, default 10 (POST and GET)", async () => {
    expect(await hangar.client.threads.getHistory(threadId, { limit: 3 })).toEqual(all.slice(0, 3));
    const postDefault = await postJson(hangar.server.url, `/threads/${threadId}/history`, {});
    expect(postDefault.status).toBe(200);
    expect(postDefault.body).toHaveLength(10);
    expect(postDefault.body).toEqual(all.slice(0, 10));

    const getDefault = await getJson(hangar.server.url, `/threads/${threadId}/history`);
    expect(getDefault.status).toBe(200);
    expect(getDefault.body).toEqual(all.slice(0, 10));
    const getLimited = await getJson(hangar.server.url, `/threads/${threadId}/history?limit=2`);
    expect(getLimited.body).toEqual(all.slice(0, 2));
  });

  it("before (as the SDK sends it, a config) returns only older checkpoints", async () => {
    const pivot = all[3];
    const older = await hangar.client.threads.getHistory(threadId, {
      limit: 1000,
      before: { configurable: { checkpoint_id: pivot.checkpoint_id } },
    });
    expect(older).toEqual(all.slice(4));
  });

  it("before as a GET query string returns only older checkpoints", async () => {
    const pivot = all[3];
    const viaGet = await getJson(
      hangar.server.url,
      `/threads/${threadId}/history?before=${pivot.checkpoint_id}&limit=2`,
    );
    expect(viaGet.status).toBe(200);
    expect(viaGet.body).toEqual(all.slice(4, 6));
  });

  it("before also accepts a checkpoint object (OpenAPI CheckpointConfig)", async () => {
    const pivot = all[5];
    const res = await postJson(hangar.server.url, `/threads/${threadId}/history`, {
      limit: 3,
      before: { checkpoint_id: pivot.checkpoint_id },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(all.slice(6, 9));
  });

  it("filters by metadata", async () => {
    const inputs = await hangar.client.threads.getHistory(threadId, {
      limit: 1000,
      metadata: { source: "input" },
    });
    expect(inputs).toHaveLength(runs);
    for (const s of inputs) expect(s.metadata?.source).toBe("input");
    expect(inputs).toEqual(all.filter((s) => s.metadata.source === "input"));
  });

  it("history of an empty thread is empty", async () => {
    const t = await hangar.client.threads.create();
    expect(await hangar.client.threads.getHistory(t.thread_id)).toEqual([]);
  });
});

describe("thread status", () => {
  it("is idle after a successful run", async () => {
    const t = await hangar.client.threads.create();
    await chat(t.thread_id, "hello");
    const got = await hangar.client.threads.get(t.thread_id);
    expect(got.status).toBe("idle");
    expect(messageSummary(got.values)).toHaveLength(2);
  });

  it("is error after a failed run", async () => {
    const t = await hangar.client.threads.create();
    await failRun(t.thread_id);
    expect((await hangar.client.threads.get(t.thread_id)).status).toBe("error");
  });

  it("is interrupted at interrupt() and idle again after resume", async () => {
    const tag = unique("approval");
    const t = await hangar.client.threads.create({ metadata: { tag } });
    const first = (await hangar.client.runs.wait(t.thread_id, "approval", {
      input: { request: "a new laptop" },
    })) as any;
    expect(first).toBeTruthy();

    const interrupted = await hangar.client.threads.get(t.thread_id);
    expect(interrupted.status).toBe("interrupted");
    expect(
      (await hangar.client.threads.search({ metadata: { tag }, status: "interrupted" })).map(
        (x) => x.thread_id,
      ),
    ).toEqual([t.thread_id]);

    const paused = await hangar.client.threads.getState(t.thread_id);
    expect(paused.next).toEqual(["review"]);
    expect(paused.values).toMatchObject({ request: "a new laptop", draft: "Proposal: a new laptop" });
    const reviewTask = paused.tasks.find((x: any) => x.name === "review") as any;
    expect(reviewTask).toBeDefined();
    expect(reviewTask.interrupts[0].value).toMatchObject({ question: "Approve this draft?" });

    const resumed = (await hangar.client.runs.wait(t.thread_id, "approval", {
      command: { resume: "yes" },
    })) as any;
    expect(resumed.decision).toBe("yes");
    const done = await hangar.client.threads.get(t.thread_id);
    expect(done.status).toBe("idle");
    expect((done.values as any).decision).toBe("yes");
    const finalState = await hangar.client.threads.getState(t.thread_id);
    expect(finalState.next).toEqual([]);
  });
});

describe("state and history reads follow every change (they are served from a cache)", () => {
  it("a repeated read is identical, and a run, a state update, a copy or a delete shows at once", async () => {
    const t = await hangar.client.threads.create();
    await chat(t.thread_id, "first");
    const h1 = await hangar.client.threads.getHistory(t.thread_id, { limit: 50 });
    expect(await hangar.client.threads.getHistory(t.thread_id, { limit: 50 })).toEqual(h1);
    const s1 = await hangar.client.threads.getState(t.thread_id);
    expect(await hangar.client.threads.getState(t.thread_id)).toEqual(s1);

    await chat(t.thread_id, "second");
    const h2 = await hangar.client.threads.getHistory(t.thread_id, { limit: 50 });
    expect(h2.length).toBeGreaterThan(h1.length);
    const s2 = await hangar.client.threads.getState(t.thread_id);
    const texts = (s: typeof s2) => (s.values as any).messages.map((m: any) => m.content);
    expect(texts(s2)).toContain("second");
    expect(s2.checkpoint.checkpoint_id).not.toBe(s1.checkpoint.checkpoint_id);

    await hangar.client.threads.updateState(t.thread_id, {
      values: { messages: [{ type: "ai", content: "edited" }] },
      asNode: "agent",
    });
    const s3 = await hangar.client.threads.getState(t.thread_id);
    expect(texts(s3)).toContain("edited");
    expect(s3.metadata?.source).toBe("update");
    expect((await hangar.client.threads.getHistory(t.thread_id, { limit: 50 })).length).toBe(h2.length + 1);

    const copy = await hangar.client.threads.copy(t.thread_id);
    expect((await hangar.client.threads.getState(copy.thread_id)).values).toEqual(s3.values);

    await hangar.client.threads.delete(t.thread_id);
    expect((await httpError(hangar.client.threads.getState(t.thread_id))).status).toBe(404);
    expect((await httpError(hangar.client.threads.getHistory(t.thread_id))).status).toBe(404);
  });
});
