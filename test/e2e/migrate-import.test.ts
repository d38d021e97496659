// Hangar's import route (POST /threads/{id}/history/import, what `hangar migrate` writes checkpoints through) under
// custom auth (test/fixtures/auth-project: bearer tokens of alice and bob, threads filtered by owner): a body it
// cannot take is a 4xx naming the field, another user's thread is a 404 with nothing written; and `hangar migrate`
// between two such servers, where the importing user becomes the owner of what it copies. Its errors: one sentence
// each, no stack trace, a non-zero exit.
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ident, testPg } from "../helpers/backend.ts";
import { expectSameHistory, historyOf, migrate } from "../helpers/migrate.ts";
import { BACKEND, clusterOf, ROOT, useHangar, type HangarProcess } from "../helpers/server.ts";

const CONFIG = join(ROOT, "test/fixtures/auth-project/langgraph.json");
const source = useHangar({ config: CONFIG });
const target = useHangar({ config: CONFIG });
// A target that serves other graphs (no auth): what names the source's graphs is refused there.
const elsewhere = useHangar({ config: join(ROOT, "test/fixtures/cli-reload/langgraph.json") });
// Encryption at rest on (docs/encryption.md): imported checkpoints are written through the same checkpointer.
const encrypted = useHangar({ config: CONFIG, env: { LANGGRAPH_AES_KEY: "0123456789abcdef".repeat(4) } });

/** The server's stored checkpoints as text: its SQLite files, or its PostgreSQL checkpoint tables. */
async function storedCheckpoints(server: HangarProcess): Promise<string> {
  if (BACKEND === "embedded") {
    return readdirSync(server.dataDir)
      .filter((f) => f.startsWith("hangar.sqlite"))
      .map((f) => readFileSync(join(server.dataDir, f)).toString("latin1"))
      .join("\n");
  }
  const { schema, databaseUrl } = clusterOf(server);
  const db = testPg(databaseUrl);
  await db.connect();
  try {
    const texts = await Promise.all(
      ["checkpoints", "checkpoint_blobs", "checkpoint_writes"].map(async (table) => {
        const { rows } = await db.query(`SELECT t::text AS row FROM ${ident(schema)}.${ident(table)} t`);
        return rows.map((r: { row: string }) => r.row).join("\n");
      }),
    );
    return texts.join("\n");
  } finally {
    await db.end();
  }
}

const bearer = (user: string) => ({ authorization: `Bearer token-${user}` });
const as = (url: string, user: string) =>
  new Client({ apiUrl: url, apiKey: null, defaultHeaders: bearer(user), callerOptions: { maxRetries: 0 } });

async function importInto(threadId: string, body: unknown, user = "alice") {
  const res = await fetch(`${target.server.url}/threads/${threadId}/history/import`, {
    method: "POST",
    headers: { "content-type": "application/json", ...bearer(user) },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { detail?: string; imported?: string[]; skipped?: string[] },
  };
}

/** A real history to import: alice's chat thread on the source, one run. */
async function sourceHistory() {
  const alice = as(source.server.url, "alice");
  const t = await alice.threads.create();
  await alice.runs.wait(t.thread_id, "chat", { input: { messages: [{ role: "user", content: "hi" }] } });
  return historyOf(alice, t.thread_id);
}

describe("the import route", () => {
  it("refuses bodies it cannot take with a 4xx naming the field", async () => {
    const alice = as(target.server.url, "alice");
    const t = await alice.threads.create({ graphId: "chat" });
    const [state] = await sourceHistory();
    const cases: [unknown, number, RegExp][] = [
      [{}, 422, /checkpoints/],
      [{ checkpoints: [] }, 422, /checkpoints/],
      [
        { checkpoints: [{ ...state, checkpoint: { checkpoint_id: "nope" } }] },
        422,
        /checkpoints\.0\.checkpoint\.checkpoint_id/,
      ],
      [{ checkpoints: [{ ...state, values: [1, 2] }] }, 422, /checkpoints\.0\.values/],
      [{ checkpoints: [{ ...state, next: "agent" }] }, 422, /checkpoints\.0\.next/],
      [{ checkpoints: [{ ...state, created_at: "yesterday" }] }, 422, /checkpoints\.0\.created_at/],
      [
        { checkpoints: [{ ...state, next: ["no_such_node"] }] },
        422,
        /checkpoints\[0\]\.next: "no_such_node" is not a node of graph "chat"/,
      ],
      [
        { checkpoints: [{ ...state, checkpoint: { ...state.checkpoint, checkpoint_ns: "agent:1" } }] },
        422,
        /checkpoints\[0\]\.checkpoint\.checkpoint_ns/,
      ],
    ];
    for (const [body, status, detail] of cases) {
      const res = await importInto(t.thread_id, body);
      expect(
        { status: res.status, detail: res.body.detail },
        JSON.stringify(body).slice(0, 200),
      ).toMatchObject({
        status,
        detail: expect.stringMatching(detail),
      });
    }
    expect(await historyOf(alice, t.thread_id)).toEqual([]);
    // A thread that is not there, and one bound to no graph.
    expect((await importInto("00000000-0000-4000-8000-000000000000", { checkpoints: [state] })).status).toBe(
      404,
    );
    const unbound = await alice.threads.create();
    const res = await importInto(unbound.thread_id, { checkpoints: [state] });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/metadata\.graph_id/);
  });

  it("imports into the user's own thread, once; another user's thread is a 404 and stays as it was", async () => {
    const history = await sourceHistory();
    const alice = as(target.server.url, "alice");
    const t = await alice.threads.create({ graphId: "chat" });
    const bob = await importInto(t.thread_id, { checkpoints: history }, "bob");
    expect(bob.status).toBe(404);
    expect(await historyOf(alice, t.thread_id)).toEqual([]);
    const first = await importInto(t.thread_id, { checkpoints: history });
    expect(first.status).toBe(200);
    expect(first.body.imported).toHaveLength(history.length);
    const again = await importInto(t.thread_id, { checkpoints: history });
    expect(again.body).toMatchObject({
      imported: [],
      skipped: history.map((s) => s.checkpoint.checkpoint_id).sort(),
    });
    expect((await historyOf(alice, t.thread_id)).map((s) => s.values)).toEqual(history.map((s) => s.values));
  });

  it("writes through the storage's checkpointer: with encryption at rest, imported checkpoints are encrypted", async () => {
    const alice = as(source.server.url, "alice");
    const t = await alice.threads.create();
    const secret = "the-vault-code-is-4711";
    await alice.runs.wait(t.thread_id, "chat", { input: { messages: [{ role: "user", content: secret }] } });
    const history = await historyOf(alice, t.thread_id);
    const there = as(encrypted.server.url, "alice");
    await there.threads.create({ threadId: t.thread_id, graphId: "chat" });
    const res = await fetch(`${encrypted.server.url}/threads/${t.thread_id}/history/import`, {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer("alice") },
      body: JSON.stringify({ checkpoints: history }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    await expectSameHistory(alice, there, t.thread_id);
    const stored = await storedCheckpoints(encrypted.server);
    expect(stored).toContain(t.thread_id); // what is read is where the checkpoints are
    expect(stored).not.toContain(secret);
  });
});

describe("hangar migrate under custom auth", () => {
  it("copies what the source's user sees, owned on the target by the importing user", async () => {
    const alice = as(source.server.url, "alice");
    const t = await alice.threads.create({ metadata: { topic: "owned" } });
    await alice.runs.wait(t.thread_id, "chat", { input: { messages: [{ role: "user", content: "mine" }] } });
    const run = await migrate(source.server.url, target.server.url, [
      "--from-header",
      "Authorization: Bearer token-alice",
      "--to-header",
      "Authorization: Bearer token-bob",
    ]);
    expect(run.code, run.stderr).toBe(0);
    const bobThere = as(target.server.url, "bob");
    const copied = await bobThere.threads.get(t.thread_id);
    expect(copied.metadata).toMatchObject({ topic: "owned", owner: "bob", service_auth_user_id: "bob" });
    await expectSameHistory(alice, bobThere, t.thread_id);
    await expect(as(target.server.url, "alice").threads.get(t.thread_id)).rejects.toMatchObject({
      status: 404,
    });
    // Again: nothing to copy, and the owner stays.
    const again = await migrate(source.server.url, target.server.url, [
      "--from-header",
      "Authorization: Bearer token-alice",
      "--to-header",
      "Authorization: Bearer token-bob",
    ]);
    expect(again.json.threads).toMatchObject({ copied: 0, checkpoints: { copied: 0 } });
    expect((await bobThere.threads.get(t.thread_id)).metadata).toMatchObject({ owner: "bob" });
  });

  it("a target that refuses the records: none counted as copied, no thread left without its history", async () => {
    const alice = as(source.server.url, "alice");
    const t = await alice.threads.create({ metadata: { topic: "refused" } });
    await alice.runs.wait(t.thread_id, "chat", { input: { messages: [{ role: "user", content: "hi" }] } });
    const args = ["--from-header", "Authorization: Bearer token-alice"];
    const run = await migrate(source.server.url, elsewhere.server.url, args);
    expect(run.code, run.stderr + run.stdout).toBe(1);
    // The source's assistants and threads name its graph "chat", which the target does not serve.
    const { assistants, threads } = run.json;
    expect(assistants).toMatchObject({ copied: 0, versions: { copied: 0 } });
    expect(assistants.failures.length).toBe(assistants.source);
    expect(threads).toMatchObject({ copied: 0, present: 0, checkpoints: { copied: 0 } });
    expect(threads.failures.length).toBe(threads.source);
    expect(threads.failures.join("\n")).toContain(t.thread_id);
    expect(run.stdout).not.toMatch(/[1-9]\d* copied/);
    // Nothing half-copied stays: the thread made for the import is gone, so a second run tries it again.
    await expect(elsewhere.client.threads.get(t.thread_id)).rejects.toMatchObject({ status: 404 });
    const again = await migrate(source.server.url, elsewhere.server.url, args);
    expect(again.json.threads).toMatchObject({ copied: 0, present: 0 });
    expect(again.json.threads.failures.length).toBe(threads.source);
  });

  it("says in one sentence what failed, with a non-zero exit and no stack trace", async () => {
    const noKey = await migrate(source.server.url, target.server.url, [
      "--from-header",
      "Authorization: Bearer token-alice",
    ]);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toMatch(/hangar migrate: .*target .*HTTP 401.*--to-header/);
    const unreachable = await migrate("http://127.0.0.1:9", target.server.url);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/the source http:\/\/127\.0\.0\.1:9 cannot be reached/);
    const badHeader = await migrate(source.server.url, target.server.url, ["--to-header", "no colon"]);
    expect(badHeader.code).toBe(2);
    expect(badHeader.stderr).toMatch(/--to-header: expected 'Name: value'/);
    for (const r of [noKey, unreachable, badHeader]) expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
