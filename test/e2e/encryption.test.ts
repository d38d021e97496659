// Encryption at rest (LANGGRAPH_AES_KEY, LANGGRAPH_AES_JSON_KEYS, HANGAR_AES_PREVIOUS_KEYS), on the backend of the
// run: what a conversation holds is nowhere in the clear in what the backend stores (the raw bytes of the SQLite
// files; every row of every table of the PostgreSQL schema and every Redis key of the deployment), the API serves
// it unchanged, a start with another key or none is refused by name, and keys rotate (lazily on read, and all at
// once with `hangar encryption reencrypt`).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import {
  BACKEND,
  cleanupDir,
  noRetryClient,
  ROOT,
  runHangar,
  startHangar,
  tempDir,
  type HangarProcess,
} from "../helpers/server.ts";
import { clusterEnv, clusterTargetFor, dropCluster, ident, testPg, testRedis } from "../helpers/backend.ts";
import { waitFor } from "../helpers/wait.ts";

/** A key given as its 32 characters (as the official server reads it), and one given as base64. */
const K1 = "hangar-test-key-one-0123456789ab";
const K2 = Buffer.alloc(32, 7).toString("base64");
/** The public id of a key, as the envelope of each value names it (lib/crypto/aes.ts). */
const keyId = (key: Buffer) =>
  createHash("sha256").update("hangar-aes-key-id\0").update(key).digest().subarray(0, 8).toString("hex");
const K1_ID = keyId(Buffer.from(K1));
const K2_ID = keyId(Buffer.from(K2, "base64"));

const SECRET = {
  message: "SECRET-MESSAGE-7f3a9",
  meta: "SECRET-META-91c2e",
  store: "SECRET-STORE-55d0b",
  cron: "SECRET-CRON-2b8e4",
  runMeta: "SECRET-RUNMETA-c1d2",
};
const JSON_KEYS = { LANGGRAPH_AES_JSON_KEYS: "secret_note" };

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) {
    cleanupDir(d);
    if (BACKEND === "postgres") await dropCluster(clusterTargetFor(d));
  }
});

function newDataDir(): string {
  const d = tempDir("hangar-encryption-");
  dirs.push(d);
  return d;
}

/** Everything the backend stores for the deployment of `dataDir`, as text (bytes as latin1). */
async function storedText(dataDir: string): Promise<string> {
  if (BACKEND === "embedded") {
    return readdirSync(dataDir)
      .filter((f) => f.startsWith("hangar.sqlite"))
      .map((f) => readFileSync(join(dataDir, f)).toString("latin1"))
      .join("\n");
  }
  const target = clusterTargetFor(dataDir);
  const parts: string[] = [await tablesText(dataDir)];
  const redis = testRedis(target.redisUrl);
  await redis.connect();
  try {
    const keys = await redis.keys(`${target.redisPrefix}*`);
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === "stream") parts.push(JSON.stringify(await redis.xrange(key, "-", "+")));
      else if (type === "string") parts.push((await redis.get(key)) ?? "");
      else if (type === "hash") parts.push(JSON.stringify(await redis.hgetall(key)));
      else if (type === "list") parts.push(JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === "zset") parts.push(JSON.stringify(await redis.zrange(key, "0", "-1")));
    }
  } finally {
    redis.disconnect();
  }
  return parts.join("\n");
}

/** The secrets found in the clear in what is stored. */
async function inTheClear(dataDir: string, secrets: string[]): Promise<string[]> {
  const text = await storedText(dataDir);
  return secrets.filter((s) => text.includes(s));
}

/** Starts a server on `dataDir` with these encryption settings (none: encryption off). */
function start(dataDir: string, env: Record<string, string | undefined>): Promise<HangarProcess> {
  return startHangar({
    dataDir,
    env: {
      LANGGRAPH_AES_KEY: undefined,
      LANGGRAPH_AES_JSON_KEYS: undefined,
      HANGAR_AES_PREVIOUS_KEYS: undefined,
      ...env,
    },
  });
}

/** A thread with a run, a store item and a cron, each holding secrets. */
async function makeData(client: Client, s: typeof SECRET): Promise<string> {
  const thread = await client.threads.create({ metadata: { secret_note: s.meta, kind: "plain-kind" } });
  await client.runs.wait(thread.thread_id, "chat", {
    input: { messages: [{ role: "user", content: s.message }] },
    metadata: { secret_note: s.runMeta },
  });
  await client.store.putItem(["notes"], "n1", { secret_note: s.store, n: 1 });
  await client.crons.createForThread(thread.thread_id, "chat", {
    schedule: "0 0 1 1 *",
    input: { messages: [{ role: "user", content: s.cron }] },
  });
  return thread.thread_id;
}

/** Reads the data back through the API and checks every secret is there, unchanged. */
async function expectReadable(client: Client, threadId: string, s: typeof SECRET): Promise<void> {
  const thread = await client.threads.get(threadId);
  expect(thread.metadata).toMatchObject({ secret_note: s.meta, kind: "plain-kind" });
  expect(JSON.stringify(thread.values)).toContain(s.message);
  const state = await client.threads.getState(threadId);
  expect(JSON.stringify(state.values)).toContain(s.message);
  const history = await client.threads.getHistory(threadId);
  expect(history.length).toBeGreaterThanOrEqual(3);
  expect(history[0]!.metadata).toMatchObject({ source: "loop", secret_note: s.runMeta });
  const runs = await client.runs.list(threadId);
  expect(runs[0]!.metadata).toMatchObject({ secret_note: s.runMeta });
  const item = await client.store.getItem(["notes"], "n1");
  expect(item?.value).toEqual({ secret_note: s.store, n: 1 });
  const crons = await client.crons.search({ threadId });
  expect(JSON.stringify(crons[0]!.payload)).toContain(s.cron);
}

describe(`encryption at rest (${BACKEND})`, () => {
  it("stores a conversation nowhere in the clear, serves it unchanged, and refuses a start without its key", async () => {
    const dataDir = newDataDir();
    let server = await start(dataDir, { LANGGRAPH_AES_KEY: K1, ...JSON_KEYS });
    const client = noRetryClient(server.url);
    const threadId = await makeData(client, SECRET);
    await expectReadable(client, threadId, SECRET);

    // The state history filters on the identifiers kept in the clear, and refuses a sealed key by name.
    expect(
      (await client.threads.getHistory(threadId, { metadata: { source: "loop" } })).length,
    ).toBeGreaterThan(0);
    const refusals = [
      ["/threads/search", { metadata: { secret_note: SECRET.meta } }],
      ["/threads/search", { values: { messages: [] } }],
      ["/store/items/search", { namespace_prefix: ["notes"], filter: { secret_note: SECRET.store } }],
      [`/threads/${threadId}/history`, { metadata: { secret_note: SECRET.runMeta } }],
    ] as const;
    for (const [path, body] of refusals) {
      const res = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(await res.text()).toMatch(/encrypt/);
    }
    // The thread's storage figures are still measured (its checkpoints are sealed blobs).
    const stats = await fetch(`${server.url}/threads/${threadId}/storage`);
    expect(stats.status).toBe(200);
    expect(((await stats.json()) as { checkpoints: { count: number } }).checkpoints.count).toBeGreaterThan(0);
    // A plain key still filters.
    const found = await client.threads.search({ metadata: { kind: "plain-kind" } });
    expect(found.map((t) => t.thread_id)).toContain(threadId);
    await server.stop();

    expect(await inTheClear(dataDir, Object.values(SECRET))).toEqual([]);

    // The same key again: everything reads.
    server = await start(dataDir, { LANGGRAPH_AES_KEY: K1, ...JSON_KEYS });
    await expectReadable(noRetryClient(server.url), threadId, SECRET);
    await server.stop();

    // Another key, or none: the start is refused, naming the key the data needs.
    await expect(start(dataDir, { LANGGRAPH_AES_KEY: K2 })).rejects.toThrow(
      new RegExp(`encrypted with the key of id ${K1_ID}.*HANGAR_AES_PREVIOUS_KEYS`),
    );
    await expect(start(dataDir, {})).rejects.toThrow(/is encrypted .*LANGGRAPH_AES_KEY is not set/);
    await expect(start(dataDir, { LANGGRAPH_AES_KEY: "too-short" })).rejects.toThrow(/16, 24 or 32 bytes/);
  });

  it("rotates keys: data under the old key reads under [new, old], is sealed again when read, and all at once by the command", async () => {
    const dataDir = newDataDir();
    const s = { ...SECRET, message: "ROTATE-MESSAGE-41aa", meta: "ROTATE-META-0b7c" };
    let server = await start(dataDir, { LANGGRAPH_AES_KEY: K1, ...JSON_KEYS });
    const threadId = await makeData(noRetryClient(server.url), s);
    await server.stop();
    expect(await storedText(dataDir)).toContain(`$hgenc1:${K1_ID}:`);

    const rotated = { LANGGRAPH_AES_KEY: K2, HANGAR_AES_PREVIOUS_KEYS: K1, ...JSON_KEYS };
    server = await start(dataDir, rotated);
    const client = noRetryClient(server.url);
    await expectReadable(client, threadId, s);
    // Read under the old key, the thread's row and its checkpoints are sealed again with the new one.
    await waitFor("the thread read to be sealed with the new key", async () => {
      await client.threads.get(threadId);
      const text = await storedText(dataDir);
      return (
        text.includes(`$hgenc1:${K2_ID}:`) &&
        (await threadRowKeyIds(dataDir, threadId)).every((id) => id === K2_ID)
      );
    });
    await server.stop();

    // The command seals the rest (store items, crons, runs) with the new key; then the old key is not needed.
    const env = {
      ...rotated,
      ...(BACKEND === "postgres" ? clusterEnv(clusterTargetFor(dataDir)) : {}),
    };
    const done = await runHangar(["encryption", "reencrypt", "--data-dir", dataDir], env);
    expect(done.output).toContain(`encrypted with the key of id ${K2_ID}`);
    expect(done.code).toBe(0);
    // Redis event logs included.
    expect(await storedText(dataDir)).not.toContain(`$hgenc1:${K1_ID}:`);
    server = await start(dataDir, { LANGGRAPH_AES_KEY: K2, ...JSON_KEYS });
    await expectReadable(noRetryClient(server.url), threadId, s);
    await server.stop();
  });

  it("a key set on a plain-text database: old values stay readable, and the command encrypts them", async () => {
    const dataDir = newDataDir();
    const s = {
      ...SECRET,
      message: "PLAIN-MESSAGE-99e1",
      meta: "PLAIN-META-3c3c",
      store: "PLAIN-STORE-77aa",
    };
    let server = await start(dataDir, {});
    const threadId = await makeData(noRetryClient(server.url), s);
    await server.stop();
    expect(await inTheClear(dataDir, [s.message])).toEqual([s.message]);

    server = await start(dataDir, { LANGGRAPH_AES_KEY: K1, ...JSON_KEYS });
    await expectReadable(noRetryClient(server.url), threadId, s);
    await server.stop();
    const env = {
      LANGGRAPH_AES_KEY: K1,
      ...JSON_KEYS,
      ...(BACKEND === "postgres" ? clusterEnv(clusterTargetFor(dataDir)) : {}),
    };
    const done = await runHangar(["encryption", "reencrypt", "--data-dir", dataDir], env);
    expect(done.code, done.output).toBe(0);
    // Redis event logs of the runs made in the clear included.
    expect(await inTheClear(dataDir, Object.values(s))).toEqual([]);
    server = await start(dataDir, { LANGGRAPH_AES_KEY: K1, ...JSON_KEYS });
    await expectReadable(noRetryClient(server.url), threadId, s);
    await server.stop();
  });

  it("custom encryption: each user's data is encrypted with that user's key, through the project's handlers", async () => {
    const dataDir = newDataDir();
    const config = join(ROOT, "test/fixtures/encryption-project/langgraph.json");
    let server = await startHangar({ config, dataDir });
    const as = (token: string) =>
      new Client({
        apiUrl: server.url,
        defaultHeaders: { authorization: `Bearer ${token}` },
        callerOptions: { maxRetries: 0 },
      });
    const tenants = {
      alice: { client: as("token-alice"), message: "ALICE-MESSAGE-5e1f", note: "ALICE-NOTE-88a0" },
      bob: { client: as("token-bob"), message: "BOB-MESSAGE-c4d2", note: "BOB-NOTE-1b9e" },
    };
    const threads: Record<string, string> = {};
    for (const [name, t] of Object.entries(tenants)) {
      const thread = await t.client.threads.create({ metadata: { secret_note: t.note } });
      threads[name] = thread.thread_id;
      await t.client.runs.wait(thread.thread_id, "chat", {
        input: { messages: [{ role: "user", content: t.message }] },
      });
      const read = await t.client.threads.get(thread.thread_id);
      expect(read.metadata).toMatchObject({ secret_note: t.note, owner: name });
      expect(JSON.stringify(read.values)).toContain(t.message);
      expect(JSON.stringify((await t.client.threads.getState(thread.thread_id)).values)).toContain(t.message);
      // A background run (the worker writes for the run's owner) reads back too.
      const run = await t.client.runs.create(thread.thread_id, "chat", {
        input: { messages: [{ role: "user", content: `${t.message}-again` }] },
      });
      await t.client.runs.join(thread.thread_id, run.run_id);
      expect(JSON.stringify((await t.client.threads.getState(thread.thread_id)).values)).toContain(
        `${t.message}-again`,
      );
    }
    await server.stop();
    const all = Object.values(tenants).flatMap((t) => [t.message, t.note]);
    expect(await inTheClear(dataDir, all)).toEqual([]);

    // Each thread's stored values name their tenant and open with that tenant's key only.
    const { decryptFor } = await import("../fixtures/encryption-project/encryption.ts");
    for (const [name, t] of Object.entries(tenants)) {
      const row = await threadRow(dataDir, threads[name]!);
      const sealed = /\$hgcus1:([A-Za-z0-9_-]+):([A-Za-z0-9_-]+)/.exec(String(row.values))!;
      expect(JSON.parse(Buffer.from(sealed[1]!, "base64url").toString())).toEqual({ tenant: name });
      const data = Buffer.from(sealed[2]!, "base64url");
      expect(decryptFor(name, data).toString()).toContain(t.message);
      const other = name === "alice" ? "bob" : "alice";
      expect(() => decryptFor(other, data)).toThrow();
      expect(JSON.stringify(row.metadata)).toContain('"tenant":"' + name + '"');
    }

    server = await startHangar({ config, dataDir });
    const alice = as("token-alice");
    expect((await alice.threads.get(threads.alice!)).metadata).toMatchObject({
      secret_note: tenants.alice.note,
    });
    await server.stop();
  });

  it("refuses LANGGRAPH_AES_JSON_KEYS without a key", async () => {
    await expect(start(newDataDir(), JSON_KEYS)).rejects.toThrow(
      /LANGGRAPH_AES_JSON_KEYS is set but LANGGRAPH_AES_KEY is not/,
    );
  });
});

/** Every row of every table of the deployment's PostgreSQL schema, as text. */
async function tablesText(dataDir: string): Promise<string> {
  const target = clusterTargetFor(dataDir);
  const db = testPg(target.databaseUrl);
  await db.connect();
  try {
    const { rows: tables } = await db.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
      [target.schema],
    );
    let text = "";
    for (const { table_name } of tables) {
      const { rows } = await db.query(`SELECT * FROM ${ident(target.schema)}.${ident(table_name)}`);
      for (const row of rows) {
        for (const v of Object.values(row))
          text += Buffer.isBuffer(v) ? v.toString("latin1") : JSON.stringify(v);
      }
    }
    return text;
  } finally {
    await db.end();
  }
}

/** The key ids of the sealed values of the thread's row (values, interrupts, metadata keys). */
async function threadRowKeyIds(dataDir: string, threadId: string): Promise<string[]> {
  const row = JSON.stringify(await threadRow(dataDir, threadId));
  return [...row.matchAll(/\$hgenc1:([0-9a-f]{16}):/g)].map((m) => m[1]!);
}

/** The thread's row as stored, its JSON columns parsed (SQLite's text, PostgreSQL's jsonb). */
async function threadRow(dataDir: string, threadId: string): Promise<Record<string, unknown>> {
  let row: Record<string, unknown>;
  if (BACKEND === "embedded") {
    const { default: Database } = await import("better-sqlite3");
    const db = new Database(join(dataDir, "hangar.sqlite"), { readonly: true });
    try {
      row = db.prepare("SELECT * FROM threads WHERE thread_id = ?").get(threadId) as Record<string, unknown>;
    } finally {
      db.close();
    }
    for (const k of ["values", "metadata", "interrupts", "config"]) row[k] = JSON.parse(row[k] as string);
    return row;
  }
  const target = clusterTargetFor(dataDir);
  const db = testPg(target.databaseUrl);
  await db.connect();
  try {
    const { rows } = await db.query(`SELECT * FROM ${ident(target.schema)}.threads WHERE thread_id = $1`, [
      threadId,
    ]);
    return rows[0] as Record<string, unknown>;
  } finally {
    await db.end();
  }
}
