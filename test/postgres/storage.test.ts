// PostgreSQL backend only: the Storage implementation on the machine's real PostgreSQL (DATABASE_URL,
// default postgres://postgres@127.0.0.1:5432/postgres), in fresh schemas dropped afterwards. Covers each
// store, parity with the SQLite storage on the same operations, a real LangGraph graph's checkpoints
// (copy, delete, rollback, keep-latest, stats), concurrent start-up, and recovery from lost connections.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Annotation,
  Command,
  END,
  START,
  StateGraph,
  interrupt,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PgRunQueue } from "../../src/runs/postgres-queue.ts";
import { ident } from "../../src/storage/postgres/migrate.ts";
import { openPostgresStorage, type PostgresStorage } from "../../src/storage/postgres/index.ts";
import { openSqliteStorage } from "../../src/storage/sqlite/index.ts";
import type { StoreIndex } from "../../src/storage/store-index.ts";
import type { Cron, Storage } from "../../src/storage/types.ts";
import { waitFor } from "../helpers/wait.ts";

const URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const tag = randomUUID().replace(/-/g, "").slice(0, 12);
const schema = `hangar_test_${tag}`;
const schemas = [schema];
const newSchema = () => {
  const s = `hangar_test_${tag}_${schemas.length}`;
  schemas.push(s);
  return s;
};
const appName = `hangar_storage_test_${tag}`;
const admin = new pg.Pool({ connectionString: URL, max: 2 });
const opened: PostgresStorage[] = [];
const poolErrors: Error[] = [];
let storage: PostgresStorage;

async function open(opts: Partial<Parameters<typeof openPostgresStorage>[0]> = {}) {
  const s = await openPostgresStorage({ url: URL, schema, ...opts });
  opened.push(s);
  return s;
}

beforeAll(async () => {
  storage = await open({ applicationName: appName, poolSize: 4, onError: (e) => poolErrors.push(e) });
});

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${ident(s)} CASCADE`);
  await admin.end();
});

const id = () => randomUUID();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

async function countRows(table: string, threadId: string, s = schema): Promise<number> {
  const { rows } = await admin.query(
    `SELECT count(*)::int AS n FROM ${ident(s)}.${table} WHERE thread_id = $1`,
    [threadId],
  );
  return rows[0].n;
}

const checkpointRows = async (threadId: string) => ({
  checkpoints: await countRows("checkpoints", threadId),
  blobs: await countRows("checkpoint_blobs", threadId),
  writes: await countRows("checkpoint_writes", threadId),
});

describe("opening", () => {
  it("two processes opening the same fresh schema at once both succeed, migrating it once", async () => {
    const s = newSchema();
    const [a, b] = await Promise.all([open({ schema: s }), open({ schema: s })]);
    expect(a.schema).toBe(s);
    const migrations = await admin.query(
      `SELECT version FROM ${ident(s)}.schema_migrations ORDER BY version`,
    );
    expect(migrations.rows.map((r) => r.version)).toEqual([1, 2, 3, 4, 5]);
    const saver = await admin.query(`SELECT v FROM ${ident(s)}.checkpoint_migrations ORDER BY v`);
    expect(saver.rows.map((r) => r.v)).toEqual([0, 1, 2, 3, 4]);
    const tid = id();
    await a.threads.create({ thread_id: tid, metadata: { by: "a" } });
    expect((await b.threads.get(tid))?.metadata).toEqual({ by: "a" });
    // Opening again is a no-op on an up-to-date schema.
    const c = await open({ schema: s });
    expect(await c.threads.count({})).toBe(1);
    await c.close();
    await c.close(); // closing twice is harmless
  });

  it("an unreachable server fails in one line naming it, without the password", async () => {
    const err = await openPostgresStorage({
      url: "postgres://hangar:s3cret-pw@127.0.0.1:5999/hangar",
      schema: newSchema(),
    }).then(
      () => null,
      (e: Error) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err!.message).toBe("cannot reach PostgreSQL at 127.0.0.1:5999: connect ECONNREFUSED");
    expect(err!.message).not.toContain("s3cret");
  });

  it("refuses a schema name the checkpointer cannot quote", async () => {
    await expect(openPostgresStorage({ url: URL, schema: 'a"b' })).rejects.toThrow(
      /invalid PostgreSQL schema/,
    );
  });

  it("is durable per statement: sync resolves at once", async () => {
    await expect(storage.sync()).resolves.toBeUndefined();
    expect(storage.pool).toBeInstanceOf(pg.Pool);
    expect(storage.schema).toBe(schema);
  });
});

describe("assistants", () => {
  const graph = `g_${tag}`;
  const input = (over: Record<string, unknown> = {}) => ({
    assistant_id: id(),
    graph_id: graph,
    config: { configurable: { model: "a" } },
    context: { lang: "en" },
    metadata: { owner: "ann", tier: { level: 1 } },
    name: "Alpha",
    description: null,
    ...over,
  });

  it("create, get, duplicate and missing ids", async () => {
    const inp = input();
    const a = await storage.assistants.create(inp);
    expect(a).toMatchObject({ ...inp, version: 1 });
    expect(a!.created_at).toMatch(ISO);
    expect(a!.updated_at).toBe(a!.created_at);
    expect(await storage.assistants.get(inp.assistant_id)).toEqual(a);
    expect(await storage.assistants.create({ ...inp, name: "other" })).toBeNull();
    expect((await storage.assistants.get(inp.assistant_id))!.name).toBe("Alpha");
    expect(await storage.assistants.get(id())).toBeNull();
    expect(await storage.assistants.get("not-a-uuid")).toBeNull();
    expect(await storage.assistants.patch(id(), { name: "x" })).toBeNull();
    expect(await storage.assistants.delete("not-a-uuid")).toBe(false);
  });

  it("patch writes versions; versions list and filter them; setLatest restores one", async () => {
    const inp = input();
    const a = (await storage.assistants.create(inp))!;
    await sleep(2);
    const p = (await storage.assistants.patch(a.assistant_id, {
      metadata: { tier: { level: 2 }, extra: true },
      config: { configurable: { model: "b" } },
      description: "second",
    }))!;
    expect(p.version).toBe(2);
    expect(p.metadata).toEqual({ owner: "ann", tier: { level: 2 }, extra: true });
    expect(p.config).toEqual({ configurable: { model: "b" } });
    expect(p.context).toEqual({ lang: "en" });
    expect(p.description).toBe("second");
    expect(p.created_at).toBe(a.created_at);
    expect(p.updated_at > a.updated_at).toBe(true);
    expect(await storage.assistants.get(a.assistant_id)).toEqual(p);

    const versions = await storage.assistants.versions(a.assistant_id, { limit: 10, offset: 0 });
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    expect(versions[1]).toMatchObject({ name: "Alpha", config: inp.config, description: null });
    expect(versions[0].updated_at).toBe(versions[0].created_at);
    const filtered = await storage.assistants.versions(a.assistant_id, {
      metadata: { extra: true },
      limit: 10,
      offset: 0,
    });
    expect(filtered.map((v) => v.version)).toEqual([2]);
    expect(
      (await storage.assistants.versions(a.assistant_id, { limit: 1, offset: 1 })).map((v) => v.version),
    ).toEqual([1]);

    const back = (await storage.assistants.setLatest(a.assistant_id, 1))!;
    expect(back).toMatchObject({
      version: 1,
      config: inp.config,
      metadata: inp.metadata,
      created_at: a.created_at,
    });
    expect(await storage.assistants.get(a.assistant_id)).toEqual(back);
    expect(await storage.assistants.setLatest(a.assistant_id, 7)).toBeNull();
    expect(await storage.assistants.setLatest(id(), 1)).toBeNull();
    // A patch after setLatest still takes the next unused version number.
    expect((await storage.assistants.patch(a.assistant_id, { name: "Beta" }))!.version).toBe(3);

    expect(await storage.assistants.delete(a.assistant_id)).toBe(true);
    expect(await storage.assistants.get(a.assistant_id)).toBeNull();
    expect(await storage.assistants.versions(a.assistant_id, { limit: 10, offset: 0 })).toEqual([]);
    expect(await storage.assistants.delete(a.assistant_id)).toBe(false);
  });

  it("concurrent patches each get their own version", async () => {
    const a = (await storage.assistants.create(input()))!;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => storage.assistants.patch(a.assistant_id, { metadata: { i } })),
    );
    expect(results.map((r) => r!.version).sort((x, y) => x - y)).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("search and count filter by graph, name (case-insensitive, literal % and _) and metadata", async () => {
    const g = `gs_${tag}`;
    const mk = (name: string, metadata: Record<string, unknown>) =>
      storage.assistants.create(input({ graph_id: g, name, metadata }));
    const a = (await mk("Zeta one", { team: "x", tags: ["a", "b"], n: 1 }))!;
    const b = (await mk("zeta_two", { team: "y", nested: { deep: { k: 1 } } }))!;
    const c = (await mk("100% eta", { team: "x", nothing: null }))!;
    const ids = (xs: { assistant_id: string }[]) => xs.map((x) => x.assistant_id);
    const q = { graph_id: g, limit: 10, offset: 0 };
    expect(ids(await storage.assistants.search(q))).toEqual([c, b, a].map((x) => x.assistant_id));
    expect(ids(await storage.assistants.search({ ...q, sort_order: "asc" }))).toEqual(ids([a, b, c]));
    expect(ids(await storage.assistants.search({ ...q, name: "ZETA" }))).toEqual(ids([b, a]));
    expect(ids(await storage.assistants.search({ ...q, name: "a_t" }))).toEqual(ids([b]));
    expect(ids(await storage.assistants.search({ ...q, name: "0%" }))).toEqual(ids([c]));
    expect(ids(await storage.assistants.search({ ...q, metadata: { team: "x" } }))).toEqual(ids([c, a]));
    expect(ids(await storage.assistants.search({ ...q, metadata: { tags: ["b"] } }))).toEqual(ids([a]));
    expect(ids(await storage.assistants.search({ ...q, metadata: { nested: { deep: { k: 1 } } } }))).toEqual(
      ids([b]),
    );
    expect(ids(await storage.assistants.search({ ...q, metadata: { nothing: null } }))).toEqual(ids([c]));
    expect(ids(await storage.assistants.search({ ...q, metadata: { n: "1" } }))).toEqual([]);
    expect(
      ids(await storage.assistants.search({ ...q, metadata: { team: "x" }, authMetadata: { n: 1 } })),
    ).toEqual(ids([a]));
    // Names sort byte-wise (capitals first), as SQLite's BINARY collation.
    expect(ids(await storage.assistants.search({ ...q, sort_by: "name", sort_order: "asc" }))).toEqual(
      ids([c, a, b]),
    );
    expect(ids(await storage.assistants.search({ ...q, sort_by: "bogus; DROP", sort_order: "asc" }))).toEqual(
      ids([a, b, c]),
    );
    expect(ids(await storage.assistants.search({ ...q, limit: 1, offset: 1 }))).toEqual(ids([b]));
    expect(await storage.assistants.count({ graph_id: g })).toBe(3);
    expect(await storage.assistants.count({ graph_id: g, metadata: { team: "x" } })).toBe(2);
    expect(await storage.assistants.count({ graph_id: g, name: "nope" })).toBe(0);
  });

  it("metadata containment is served by the GIN index", async () => {
    const client = await admin.connect();
    try {
      await client.query("SET enable_seqscan = off");
      const { rows } = await client.query(
        `EXPLAIN SELECT * FROM ${ident(schema)}.assistants WHERE metadata @> '{"team":"x"}'::jsonb`,
      );
      expect(rows.map((r) => r["QUERY PLAN"]).join("\n")).toMatch(/assistants_metadata/);
    } finally {
      client.release();
    }
  });
});

describe("threads", () => {
  it("create, get, duplicate, TTL on create", async () => {
    const tid = id();
    const t = (await storage.threads.create({ thread_id: tid, metadata: { a: 1 }, config: { c: 2 } }))!;
    expect(t).toEqual({
      thread_id: tid,
      created_at: t.created_at,
      updated_at: t.created_at,
      state_updated_at: t.created_at,
      metadata: { a: 1 },
      status: "idle",
      config: { c: 2 },
      values: null,
      interrupts: {},
    });
    expect(t.created_at).toMatch(ISO);
    expect(await storage.threads.get(tid)).toEqual(t);
    expect(await storage.threads.create({ thread_id: tid, metadata: {} })).toBeNull();
    expect(await storage.threads.get(id())).toBeNull();
    expect(await storage.threads.get("nope")).toBeNull();

    const withTtl = id();
    await storage.threads.create({
      thread_id: withTtl,
      metadata: {},
      ttl: { ttl: 1, strategy: "keep_latest" },
    });
    const soon = new Date(Date.now() + 2 * 60_000).toISOString();
    expect(await storage.threads.expired(soon, 1000)).toContainEqual({
      thread_id: withTtl,
      strategy: "keep_latest",
    });
    expect(
      (await storage.threads.expired(new Date().toISOString(), 1000)).map((e) => e.thread_id),
    ).not.toContain(withTtl);
  });

  it("patchMetadata and setState merge metadata at the top level (null and objects replace the value)", async () => {
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: { a: { b: 1, c: 2 }, d: 1, keep: "k" } });
    await sleep(2);
    const p = (await storage.threads.patchMetadata(tid, { a: { b: null, e: 3 }, d: null, f: [1] }))!;
    expect(p.metadata).toEqual({ a: { b: null, e: 3 }, d: null, keep: "k", f: [1] });
    expect(p.updated_at > p.created_at).toBe(true);
    expect(p.state_updated_at).toBe(p.created_at);
    expect(await storage.threads.patchMetadata(id(), { a: 1 })).toBeNull();
    await storage.threads.setState(tid, { metadata: { a: 5, g: { h: 1 } } });
    expect((await storage.threads.get(tid))!.metadata).toEqual({
      a: 5,
      d: null,
      keep: "k",
      f: [1],
      g: { h: 1 },
    });
  });

  it("setState records status, values, interrupts and error", async () => {
    const tid = id();
    const t = (await storage.threads.create({ thread_id: tid, metadata: {} }))!;
    await sleep(2);
    await storage.threads.setState(tid, { status: "busy" });
    let g = (await storage.threads.get(tid))!;
    expect(g.status).toBe("busy");
    expect(g.state_updated_at).toBe(t.state_updated_at);
    expect(g.updated_at > t.updated_at).toBe(true);
    await sleep(2);
    await storage.threads.setState(tid, {
      status: "error",
      values: { messages: ["hi"], n: 1.5 },
      interrupts: { task: [{ value: "q" }] },
      error: { message: "boom" },
    });
    g = (await storage.threads.get(tid))!;
    expect(g).toMatchObject({
      status: "error",
      values: { messages: ["hi"], n: 1.5 },
      interrupts: { task: [{ value: "q" }] },
      error: { message: "boom" },
    });
    expect(g.state_updated_at > t.state_updated_at).toBe(true);
    await storage.threads.setState(tid, { status: "idle", values: null, error: null });
    g = (await storage.threads.get(tid))!;
    expect(g.values).toBeNull();
    expect("error" in g).toBe(false);
    await storage.threads.setState(tid, { error: "plain string" });
    expect((await storage.threads.get(tid))!.error).toBe("plain string");
    // U+0000 cannot be in JSONB: it is dropped instead of failing the write.
    await storage.threads.setState(tid, { values: { s: "a\u0000b", lit: "\\u0000" } });
    expect((await storage.threads.get(tid))!.values).toEqual({ s: "ab", lit: "\\u0000" });
  });

  it("search and count by ids, status, metadata, values; sorting and paging", async () => {
    const kind = `k_${randomUUID()}`;
    const made: string[] = [];
    for (let i = 0; i < 4; i++) {
      const tid = id();
      made.push(tid);
      await storage.threads.create({ thread_id: tid, metadata: { kind, i, even: i % 2 === 0 } });
    }
    await sleep(2);
    await storage.threads.setState(made[1], { status: "busy", values: { x: { y: 1 }, list: [1, 2] } });
    await sleep(2);
    await storage.threads.setState(made[2], { status: "interrupted", values: { x: { y: 2 } } });
    const q = { metadata: { kind }, limit: 10, offset: 0 };
    const ids = (xs: { thread_id: string }[]) => xs.map((x) => x.thread_id);
    expect(ids(await storage.threads.search(q))).toEqual([...made].reverse());
    expect(ids(await storage.threads.search({ ...q, sort_order: "asc" }))).toEqual(made);
    expect(ids(await storage.threads.search({ ...q, sort_by: "updated_at" }))).toEqual([
      made[2],
      made[1],
      made[3],
      made[0],
    ]);
    expect(ids(await storage.threads.search({ ...q, sort_by: "status", sort_order: "asc" }))).toEqual([
      made[1],
      made[0],
      made[3],
      made[2],
    ]);
    expect(ids(await storage.threads.search({ ...q, sort_by: "thread_id", sort_order: "asc" }))).toEqual(
      [...made].sort(),
    );
    expect(ids(await storage.threads.search({ ...q, status: "busy" }))).toEqual([made[1]]);
    expect(ids(await storage.threads.search({ ...q, values: { x: { y: 2 } } }))).toEqual([made[2]]);
    expect(ids(await storage.threads.search({ ...q, values: { list: [2] } }))).toEqual([made[1]]);
    expect(ids(await storage.threads.search({ ...q, metadata: { kind, even: true } }))).toEqual([
      made[2],
      made[0],
    ]);
    expect(ids(await storage.threads.search({ ...q, authMetadata: { i: 3 } }))).toEqual([made[3]]);
    expect(ids(await storage.threads.search({ ...q, ids: [made[0], made[3], "nope", id()] }))).toEqual([
      made[3],
      made[0],
    ]);
    expect(ids(await storage.threads.search({ ...q, ids: ["nope"] }))).toEqual([]);
    expect(ids(await storage.threads.search({ ...q, limit: 2, offset: 1 }))).toEqual([made[2], made[1]]);
    expect(await storage.threads.count({ metadata: { kind } })).toBe(4);
    expect(await storage.threads.count({ metadata: { kind }, status: "idle" })).toBe(2);
    expect(await storage.threads.count({ metadata: { kind }, ids: [made[0]] })).toBe(1);
  });

  it("setTtl, runStarting (busy, metadata, TTL restarted) and expired", async () => {
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    const expiresAt = async () =>
      (await admin.query(`SELECT expires_at FROM ${ident(schema)}.threads WHERE thread_id = $1`, [tid]))
        .rows[0].expires_at as Date | null;
    expect(await storage.threads.runStarting(id(), { graph_id: "g" })).toBeNull(); // no such thread
    expect(await storage.threads.runStarting(tid, { graph_id: "g" })).toEqual({ mark: expect.anything() });
    expect(await expiresAt()).toBeNull(); // no TTL: nothing to restart
    const started = await storage.threads.get(tid);
    expect(started).toMatchObject({ status: "busy", metadata: { graph_id: "g" } });
    await storage.threads.setState(tid, { status: "idle" }); // the run ended (a busy thread is never swept)
    await storage.threads.setTtl(tid, { ttl: 10, strategy: "delete" });
    const first = (await expiresAt())!.getTime();
    expect(Math.abs(first - (Date.now() + 10 * 60_000))).toBeLessThan(5_000);
    await admin.query(
      `UPDATE ${ident(schema)}.threads SET expires_at = now() - interval '1 second' WHERE thread_id = $1`,
      [tid],
    );
    const now = new Date().toISOString();
    expect(await storage.threads.expired(now, 1000)).toContainEqual({ thread_id: tid, strategy: "delete" });
    await storage.threads.runStarting(tid, { assistant_id: "a" });
    expect(Math.abs((await expiresAt())!.getTime() - (Date.now() + 10 * 60_000))).toBeLessThan(5_000);
    expect((await storage.threads.get(tid))?.metadata).toEqual({ graph_id: "g", assistant_id: "a" });
    expect((await storage.threads.expired(now, 1000)).map((e) => e.thread_id)).not.toContain(tid);
    await storage.threads.setTtl(tid, null);
    expect(await expiresAt()).toBeNull();
  });

  it("delete removes the thread and its runs", async () => {
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    const run = await storage.runs.create({
      run_id: id(),
      thread_id: tid,
      assistant_id: id(),
      status: "success",
      metadata: {},
      kwargs: {},
      multitask_strategy: "reject",
    });
    expect(await storage.threads.delete(tid)).toBe(true);
    expect(await storage.threads.get(tid)).toBeNull();
    expect(await storage.runs.get(tid, run.run_id)).toBeNull();
    expect(await storage.threads.delete(tid)).toBe(false);
    expect(await storage.threads.delete("nope")).toBe(false);
  });

  it("copy of a missing thread is null", async () => {
    expect(await storage.threads.copy(id(), id(), {})).toBeNull();
  });
});

describe("runs", () => {
  const run = (threadId: string | null, over: Record<string, unknown> = {}) => ({
    run_id: id(),
    thread_id: threadId,
    assistant_id: id(),
    status: "pending" as const,
    metadata: { m: 1 },
    kwargs: { input: { x: 1 } },
    multitask_strategy: "enqueue" as const,
    ...over,
  });

  it("create, get, list with status and paging, setStatus, delete", async () => {
    const tid = id();
    const inputs = [run(tid), run(tid, { status: "success" }), run(tid)];
    const created = [];
    for (const r of inputs) created.push(await storage.runs.create(r));
    expect(created[0]).toEqual({
      ...inputs[0],
      created_at: created[0].created_at,
      updated_at: created[0].created_at,
    });
    expect(created[0].created_at).toMatch(ISO);
    expect(await storage.runs.get(tid, inputs[0].run_id)).toEqual(created[0]);
    expect(await storage.runs.get(id(), inputs[0].run_id)).toBeNull();
    expect(await storage.runs.get(tid, "nope")).toBeNull();
    const ids = (xs: { run_id: string }[]) => xs.map((x) => x.run_id);
    expect(ids(await storage.runs.list(tid, { limit: 10, offset: 0 }))).toEqual(ids([...inputs].reverse()));
    expect(ids(await storage.runs.list(tid, { limit: 10, offset: 0, status: "success" }))).toEqual([
      inputs[1].run_id,
    ]);
    expect(ids(await storage.runs.list(tid, { limit: 1, offset: 1 }))).toEqual([inputs[1].run_id]);
    await sleep(2);
    await storage.runs.setStatus(inputs[0].run_id, "error");
    const got = (await storage.runs.get(tid, inputs[0].run_id))!;
    expect(got.status).toBe("error");
    expect(got.updated_at > got.created_at).toBe(true);
    expect(await storage.runs.delete(inputs[0].run_id)).toBe(true);
    expect(await storage.runs.delete(inputs[0].run_id)).toBe(false);
    expect(ids(await storage.runs.list(tid, { limit: 10, offset: 0 }))).toEqual([
      inputs[2].run_id,
      inputs[1].run_id,
    ]);
  });

  it("a pending run cancelled as the running one ends: the thread's lock orders them, so it is not left busy", async () => {
    // Found by a clean-clone run: cancelMany of a running and a pending run left the thread busy forever. The
    // worker's end (status idle unless a run is pending) and the API's cancel of the pending run (then: settle
    // the thread if nothing else is active) each missed the other's uncommitted write.
    const queue = new PgRunQueue(storage.pool, schema, storage.runs);
    const thread = await storage.threads.create({ thread_id: id(), metadata: {} });
    const tid = thread!.thread_id;
    await storage.threads.setState(tid, { status: "busy" });
    const running = await storage.runs.create(run(tid));
    expect(await storage.runs.start(running.run_id)).toBe(1);
    const pending = await storage.runs.create(run(tid));
    // Both wait behind a lock of the thread's row held here, then go in whichever order PostgreSQL gives.
    const holder = await admin.connect();
    const waiting = async (n: number, orDone: () => boolean = () => false) =>
      waitFor(`${n} statement(s) waiting for the thread's lock`, async () => {
        const { rows } = await admin.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`,
          [schema],
        );
        return rows[0].n >= n || orDone();
      });
    try {
      await holder.query("BEGIN");
      await holder.query(`SELECT 1 FROM ${ident(schema)}.threads WHERE thread_id = $1 FOR UPDATE`, [tid]);
      const ended = storage.threads.setState(
        tid,
        { status: "idle", busyWhilePending: true },
        { runId: running.run_id, attempt: 1, runStatus: "success" },
      );
      await waiting(1);
      const cancelled = queue.requestCancel(pending.run_id, "interrupt").then(async (r) => ({
        r,
        // What the canceller sees once its cancel is committed: the service settles the thread when this is empty.
        activeAfter: await queue.active(tid),
      }));
      let done = false;
      void cancelled.finally(() => (done = true));
      await waiting(2, () => done);
      await holder.query("COMMIT");
      const [, { r, activeAfter }] = await Promise.all([ended, cancelled]);
      expect(r?.was).toBe("pending");
      const status = (await storage.threads.get(tid))!.status;
      expect(
        status === "idle" || activeAfter.length === 0,
        `thread ${status}, active ${activeAfter.length}`,
      ).toBe(true);
    } finally {
      holder.release();
    }
  });

  it("start counts attempts; inFlight and idsByStatus list oldest first", async () => {
    const tid = id();
    const a = await storage.runs.create(run(tid));
    const b = await storage.runs.create(run(null));
    const c = await storage.runs.create(run(tid, { status: "success" }));
    expect(await storage.runs.start(a.run_id)).toBe(1);
    expect((await storage.runs.get(tid, a.run_id))!.status).toBe("running");
    // Started again while marked running: it was in flight when a process stopped.
    expect(await storage.runs.start(a.run_id)).toBe(2);
    const inFlight = (await storage.runs.inFlight()).filter((r) =>
      [a.run_id, b.run_id, c.run_id].includes(r.run_id),
    );
    expect(inFlight.map((r) => [r.run_id, r.status, r.attempt])).toEqual([
      [a.run_id, "running", 2],
      [b.run_id, "pending", 1],
    ]);
    expect(inFlight[1].thread_id).toBeNull();
    expect(await storage.runs.idsByStatus(tid, ["running", "success"])).toEqual([
      { run_id: a.run_id, thread_id: tid },
      { run_id: c.run_id, thread_id: tid },
    ]);
    const all = await storage.runs.idsByStatus(null, ["pending"]);
    expect(all).toContainEqual({ run_id: b.run_id, thread_id: null });
    expect(all.map((r) => r.run_id)).not.toContain(a.run_id);
    expect(await storage.runs.idsByStatus("nope", ["pending"])).toEqual([]);
  });

  it("admit: of concurrent reject admissions on an idle thread exactly one is recorded", async () => {
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        storage.runs.admit({ ...run(tid, { multitask_strategy: "reject" }), thread_id: tid }),
      ),
    );
    const admitted = results.filter((r) => r.run);
    expect(admitted).toHaveLength(1);
    for (const r of results.filter((x) => !x.run)) expect(r.current).toBe(admitted[0].run!.run_id);
    expect(await storage.runs.list(tid, { limit: 100, offset: 0 })).toHaveLength(1);
  });

  it("admit: a delayed run does not hold the thread but makes it busy for reject; interrupt goes first in line", async () => {
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    const admit = (over: Record<string, unknown>) =>
      storage.runs.admit({ ...run(tid, over), thread_id: tid });
    const delayed = await admit({ delay_seconds: 3600 });
    expect(await admit({ multitask_strategy: "reject" })).toEqual({
      run: null,
      current: delayed.run!.run_id,
    });
    const first = await admit({});
    expect(first.current).toBeNull();
    expect(first.run && first.delayed).toEqual([delayed.run!.run_id]);
    const queued = await admit({});
    expect(queued.current).toBe(first.run!.run_id);
    const interrupting = await admit({ multitask_strategy: "interrupt" });
    expect(interrupting.current).toBe(first.run!.run_id);
    const { rows } = await admin.query(
      `SELECT run_id FROM ${ident(schema)}.runs WHERE thread_id = $1 AND status = 'pending'
       ORDER BY priority DESC, seq`,
      [tid],
    );
    expect(rows.map((r) => r.run_id)).toEqual([
      interrupting.run!.run_id,
      delayed.run!.run_id,
      first.run!.run_id,
      queued.run!.run_id,
    ]);
  });
});

describe("crons", () => {
  const cron = (over: Partial<Cron> = {}): Omit<Cron, "created_at" | "updated_at"> => ({
    cron_id: id(),
    assistant_id: id(),
    thread_id: null,
    user_id: null,
    schedule: "*/5 * * * *",
    timezone: null,
    end_time: null,
    enabled: true,
    on_run_completed: "delete",
    payload: { input: { x: 1 } },
    metadata: { team: "t" },
    next_run_date: new Date(Date.now() + 60_000).toISOString(),
    ...over,
  });

  it("create, get, update, delete", async () => {
    const c = cron({ user_id: "u1", timezone: "Europe/Paris", end_time: "2099-01-01T00:00:00.000Z" });
    const made = await storage.crons.create(c);
    expect(made).toEqual({ ...c, created_at: made.created_at, updated_at: made.created_at });
    expect(await storage.crons.get(c.cron_id)).toEqual(made);
    await sleep(2);
    const up = (await storage.crons.update(c.cron_id, {
      enabled: false,
      payload: { input: 2 },
      end_time: null,
    }))!;
    expect(up).toMatchObject({ enabled: false, payload: { input: 2 }, end_time: null, schedule: c.schedule });
    expect(up.updated_at > made.updated_at).toBe(true);
    expect(await storage.crons.get(c.cron_id)).toEqual(up);
    expect(await storage.crons.update(id(), { enabled: true })).toBeNull();
    expect(await storage.crons.delete(c.cron_id)).toBe(true);
    expect(await storage.crons.delete(c.cron_id)).toBe(false);
    expect(await storage.crons.get(c.cron_id)).toBeNull();
    expect(await storage.crons.get("nope")).toBeNull();
  });

  it("search, count, sorting with NULLs lowest as on SQLite", async () => {
    const assistant = id();
    const tid = id();
    const t0 = Date.now();
    const a = await storage.crons.create(cron({ assistant_id: assistant, next_run_date: null }));
    const b = await storage.crons.create(
      cron({ assistant_id: assistant, thread_id: tid, next_run_date: new Date(t0 + 1000).toISOString() }),
    );
    const c = await storage.crons.create(
      cron({
        assistant_id: assistant,
        enabled: false,
        metadata: { team: "u" },
        next_run_date: new Date(t0 + 500).toISOString(),
      }),
    );
    const q = { assistant_id: assistant, limit: 10, offset: 0 };
    const ids = (xs: { cron_id: string }[]) => xs.map((x) => x.cron_id);
    expect(ids(await storage.crons.search(q))).toEqual(ids([c, b, a]));
    expect(ids(await storage.crons.search({ ...q, sort_by: "next_run_date", sort_order: "asc" }))).toEqual(
      ids([a, c, b]),
    );
    expect(ids(await storage.crons.search({ ...q, sort_by: "next_run_date", sort_order: "desc" }))).toEqual(
      ids([b, c, a]),
    );
    expect(ids(await storage.crons.search({ ...q, sort_by: "thread_id", sort_order: "asc" }))).toEqual(
      ids([a, c, b]),
    );
    expect(ids(await storage.crons.search({ ...q, enabled: false }))).toEqual(ids([c]));
    expect(ids(await storage.crons.search({ ...q, thread_id: tid }))).toEqual(ids([b]));
    expect(ids(await storage.crons.search({ ...q, metadata: { team: "u" } }))).toEqual(ids([c]));
    expect(ids(await storage.crons.search({ ...q, assistant_id: "not-a-uuid" }))).toEqual([]);
    expect(await storage.crons.count({ assistant_id: assistant })).toBe(3);
    expect(await storage.crons.count({ assistant_id: assistant, metadata: { team: "t" } })).toBe(2);
  });

  it("due lists enabled crons whose date passed; claim lets exactly one caller fire a date", async () => {
    const past = new Date(Date.now() - 1000).toISOString();
    const due = await storage.crons.create(cron({ next_run_date: past }));
    const disabled = await storage.crons.create(cron({ next_run_date: past, enabled: false }));
    const later = await storage.crons.create(cron());
    const dueIds = (await storage.crons.due(new Date().toISOString())).map((c) => c.cron_id);
    expect(dueIds).toContain(due.cron_id);
    expect(dueIds).not.toContain(disabled.cron_id);
    expect(dueIds).not.toContain(later.cron_id);

    const other = await open(); // a second process: its own pool
    const next = new Date(Date.now() + 300_000).toISOString();
    const claims = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? other : storage).crons.claim(due.cron_id, past, next)),
    );
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect((await storage.crons.get(due.cron_id))!.next_run_date).toBe(next);
    expect(await storage.crons.claim(due.cron_id, past, null)).toBe(false);
    expect(await storage.crons.claim(due.cron_id, next, null)).toBe(true);
    expect((await storage.crons.get(due.cron_id))!.next_run_date).toBeNull();
    // A cron disabled after the scheduler read it as due: its date is not claimed.
    expect(await storage.crons.claim(disabled.cron_id, past, next)).toBe(false);
    expect((await storage.crons.get(disabled.cron_id))!.next_run_date).toBe(past);
  });
});

describe("store", () => {
  const root = `r${tag}`;

  it("put, get, overwrite, delete; namespaces are validated", async () => {
    const s = storage.store;
    await s.putItem([root, "u"], "k", { name: "Ada", langs: ["ts"] }, {});
    const got = (await s.getItem([root, "u"], "k", {}))!;
    expect(got).toMatchObject({ namespace: [root, "u"], key: "k", value: { name: "Ada", langs: ["ts"] } });
    expect(got.createdAt).toBeInstanceOf(Date);
    await sleep(2);
    await s.putItem([root, "u"], "k", { name: "Ada L." }, {});
    const again = (await s.getItem([root, "u"], "k", {}))!;
    expect(again.value).toEqual({ name: "Ada L." });
    expect(again.createdAt).toEqual(got.createdAt);
    expect(again.updatedAt.getTime()).toBeGreaterThan(got.updatedAt.getTime());
    await s.putItem([root, "u"], "k", null, {});
    expect(await s.getItem([root, "u"], "k", {})).toBeNull();
    await expect(s.putItem([], "k", {}, {})).rejects.toThrow(/cannot be empty/);
    await expect(s.putItem([root, "a.b"], "k", {}, {})).rejects.toThrow(/cannot contain/);
    await expect(s.putItem([root, ""], "k", {}, {})).rejects.toThrow(/non-empty/);
    await expect(s.putItem(["langgraph"], "k", {}, {})).rejects.toThrow(/reserved/);
  });

  it("search by prefix with filters, order and paging; an empty prefix searches everything", async () => {
    const s = storage.store;
    const base = `${root}s`;
    for (let i = 0; i < 5; i++) {
      await s.putItem(
        [base, i % 2 ? "odd" : "even"],
        `d${i}`,
        { i, kind: i % 2 ? "odd" : "even", o: { n: i } },
        {},
      );
      await sleep(2);
    }
    await s.putItem([`${base}x`], "other", { i: 99 }, {});
    const keys = (xs: { key: string }[]) => xs.map((x) => x.key);
    const search = (op: Record<string, unknown>) =>
      s.searchItems({ namespacePrefix: [base], limit: 100, ...op } as never, {});
    expect(keys(await search({}))).toEqual(["d4", "d3", "d2", "d1", "d0"]);
    expect(keys(await search({ namespacePrefix: [base, "odd"] }))).toEqual(["d3", "d1"]);
    expect(keys(await search({ namespacePrefix: [base, "odd", "deeper"] }))).toEqual([]);
    expect(keys(await search({ filter: { kind: "even" } }))).toEqual(["d4", "d2", "d0"]);
    expect(keys(await search({ filter: { i: { $gte: 1, $lt: 3 } } }))).toEqual(["d2", "d1"]);
    expect(keys(await search({ filter: { "o.n": { $in: [0, 4] } } }))).toEqual(["d4", "d0"]);
    expect(keys(await search({ limit: 2, offset: 1 }))).toEqual(["d3", "d2"]);
    expect(keys(await search({ filter: { kind: "even" }, limit: 1, offset: 1 }))).toEqual(["d2"]);
    const everything = await s.searchItems({ namespacePrefix: [], limit: 1000 } as never, {});
    expect(keys(everything)).toEqual(expect.arrayContaining(["d0", "d4", "other"]));
    // Without store.index a query is ignored: the items as without one, no score.
    const queried = await search({ query: "hello" });
    expect(keys(queried)).toEqual(["d4", "d3", "d2", "d1", "d0"]);
    expect(queried.every((i) => (i as { score?: number }).score === undefined)).toBe(true);
  });

  it("lists namespaces with prefix, suffix, wildcards, depth and paging", async () => {
    const s = storage.store;
    const t = `${root}t`;
    for (const ns of [
      [t, "a", "x"],
      [t, "b", "x"],
      [t, "b", "y"],
      [t, "b", "y", "z"],
    ])
      await s.putItem(ns, "k", { v: 1 }, {});
    const list = (q: Record<string, unknown>) =>
      s.listNamespacesPage({ prefix: [t], limit: 100, offset: 0, ...q } as never);
    expect(await list({})).toEqual([
      [t, "a", "x"],
      [t, "b", "x"],
      [t, "b", "y"],
      [t, "b", "y", "z"],
    ]);
    expect(await list({ suffix: ["x"] })).toEqual([
      [t, "a", "x"],
      [t, "b", "x"],
    ]);
    expect(await list({ prefix: [t, "*", "y"] })).toEqual([
      [t, "b", "y"],
      [t, "b", "y", "z"],
    ]);
    expect(await list({ maxDepth: 2 })).toEqual([
      [t, "a"],
      [t, "b"],
    ]);
    expect(await list({ limit: 2, offset: 1 })).toEqual([
      [t, "b", "x"],
      [t, "b", "y"],
    ]);
  });

  it("is LangGraph's BaseStore (put, get, search, listNamespaces, delete)", async () => {
    const s = storage.store;
    const ns = [`${root}b`, "mem"];
    await s.put(ns, "m1", { text: "hello" });
    expect((await s.get(ns, "m1"))?.value).toEqual({ text: "hello" });
    expect((await s.search([`${root}b`])).map((i) => i.key)).toEqual(["m1"]);
    expect(await s.listNamespaces({ prefix: [`${root}b`] })).toEqual([ns]);
    await s.delete(ns, "m1");
    expect(await s.get(ns, "m1")).toBeNull();
  });

  it("TTL: expired items vanish at once, sweep deletes them; reads restart the TTL unless told not to", async () => {
    const s = storage.store;
    const ns = [`${root}ttl`];
    await s.putItem(ns, "short", { v: 1 }, { ttl: 0.001 }); // 60 ms
    await s.putItem(ns, "long", { v: 2 }, { ttl: 10 });
    await s.putItem(ns, "forever", { v: 3 }, {});
    await sleep(150);
    expect(await s.getItem(ns, "short", {})).toBeNull();
    expect(
      (await s.searchItems({ namespacePrefix: ns, limit: 10 } as never, {})).map((i) => i.key).sort(),
    ).toEqual(["forever", "long"]);
    const swept = await s.sweep();
    expect(swept).toBeGreaterThanOrEqual(1);
    const left = await admin.query(
      `SELECT key FROM ${ident(schema)}.store_items WHERE namespace = $1 ORDER BY key`,
      [ns],
    );
    expect(left.rows.map((r) => r.key)).toEqual(["forever", "long"]);

    const expiresAt = async () =>
      (
        await admin.query(
          `SELECT expires_at FROM ${ident(schema)}.store_items WHERE namespace = $1 AND key = 'long'`,
          [ns],
        )
      ).rows[0].expires_at as Date;
    await admin.query(
      `UPDATE ${ident(schema)}.store_items SET expires_at = now() + interval '1 minute' WHERE namespace = $1 AND key = 'long'`,
      [ns],
    );
    await s.getItem(ns, "long", { refreshTtl: false });
    expect((await expiresAt()).getTime()).toBeLessThan(Date.now() + 2 * 60_000);
    await s.getItem(ns, "long", {});
    expect((await expiresAt()).getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    await admin.query(
      `UPDATE ${ident(schema)}.store_items SET expires_at = now() + interval '1 minute' WHERE namespace = $1 AND key = 'long'`,
      [ns],
    );
    await s.searchItems({ namespacePrefix: ns, limit: 10 } as never, { refreshTtl: false });
    expect((await expiresAt()).getTime()).toBeLessThan(Date.now() + 2 * 60_000);
    await s.searchItems({ namespacePrefix: ns, limit: 10 } as never, {});
    expect((await expiresAt()).getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    // What the store routes call under an auth filter, for the items a user may see (one statement).
    await admin.query(
      `UPDATE ${ident(schema)}.store_items SET expires_at = now() + interval '1 minute' WHERE namespace = $1 AND key = 'long'`,
      [ns],
    );
    await s.refreshTtl([
      { namespace: ns, key: "long" },
      { namespace: ns, key: "forever" },
    ]);
    expect((await expiresAt()).getTime()).toBeGreaterThan(Date.now() + 9 * 60_000);
    const forever = await admin.query(
      `SELECT expires_at FROM ${ident(schema)}.store_items WHERE namespace = $1 AND key = 'forever'`,
      [ns],
    );
    expect(forever.rows[0].expires_at).toBeNull();
  });

  it("semantic search ranks by the store index's embeddings", async () => {
    const words = ["cat", "dog", "fish"];
    const index: StoreIndex = {
      dims: 3,
      fields: ["text"],
      embed: async (texts) => texts.map((t) => words.map((w) => (t.includes(w) ? 1 : 0) + 0.01)),
    };
    const s = (await open({ storeIndex: index })).store;
    const ns = [`${root}sem`];
    await s.putItem(ns, "c", { text: "a cat" }, {});
    await s.putItem(ns, "d", { text: "a dog" }, {});
    await s.putItem(ns, "f", { text: "a fish", other: "cat fish" }, { index: ["other"] });
    await s.putItem(ns, "n", { text: "cat" }, { index: false });
    const res = await s.searchItems({ namespacePrefix: ns, query: "cat", limit: 10 } as never, {});
    expect(res.map((r) => r.key)).toEqual(["c", "f", "d", "n"]);
    expect(res[0].score).toBeCloseTo(1, 2);
    expect(res[3].score).toBeUndefined();
    const dog = await s.searchItems({ namespacePrefix: ns, query: "dog", limit: 1, offset: 0 } as never, {});
    expect(dog.map((r) => r.key)).toEqual(["d"]);
  });
});

// A graph that appends to a log; a subgraph gives it checkpoints in a second namespace.
const State = Annotation.Root({
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

function buildGraph(storageFor: Storage) {
  const sub = new StateGraph(State)
    .addNode("inner", () => ({ log: ["inner"] }))
    .addEdge(START, "inner")
    .addEdge("inner", END)
    .compile();
  return new StateGraph(State)
    .addNode("a", () => ({ log: ["a"] }))
    .addNode("sub", async (_: typeof State.State, config: LangGraphRunnableConfig) => ({
      log: (await sub.invoke({ log: [] }, config)).log,
    }))
    .addEdge(START, "a")
    .addEdge("a", "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: storageFor.checkpointer });
}

function buildInterruptGraph(storageFor: Storage) {
  return new StateGraph(State)
    .addNode("ask", () => ({ log: [`answer:${interrupt("which?") as string}`] }))
    .addNode("done", () => ({ log: ["done"] }))
    .addEdge(START, "ask")
    .addEdge("ask", "done")
    .addEdge("done", END)
    .compile({ checkpointer: storageFor.checkpointer });
}

describe("checkpoints of a real graph", () => {
  const cfg = (thread_id: string) => ({ configurable: { thread_id } });

  it("the checkpoint token changes with every checkpoint write, rollback and deletion, and only then", async () => {
    const graph = buildInterruptGraph(storage);
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    const t0 = await storage.checkpointToken(tid);
    expect(t0).not.toBeNull();
    expect(await storage.checkpointToken(tid)).toBe(t0);
    await graph.invoke({ log: [] }, cfg(tid));
    const t1 = await storage.checkpointToken(tid);
    expect(t1).not.toBe(t0);
    expect(await storage.checkpointToken(tid)).toBe(t1);
    const mark = await storage.threads.checkpointMark(tid);
    await graph.invoke(new Command({ resume: "x" }), cfg(tid));
    const t2 = await storage.checkpointToken(tid);
    expect(t2).not.toBe(t1);
    await storage.threads.rollbackCheckpoints(tid, mark);
    const t3 = await storage.checkpointToken(tid);
    expect(t3).not.toBe(t2);
    await storage.threads.keepLatest(tid);
    expect(await storage.checkpointToken(tid)).not.toBe(t3);
    await storage.threads.delete(tid);
    expect(await storage.checkpointToken(tid)).toBe(t0);
  });

  async function history(graph: ReturnType<typeof buildGraph>, threadId: string) {
    const out = [];
    for await (const s of graph.getStateHistory(cfg(threadId))) out.push(s);
    return out;
  }

  it("runs on a thread; metadata records the thread; storageStats measures it", async () => {
    const graph = buildGraph(storage);
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    expect(await graph.invoke({ log: ["in"] }, cfg(tid))).toEqual({ log: ["in", "a", "inner"] });
    const state = await graph.getState(cfg(tid));
    expect(state.values).toEqual({ log: ["in", "a", "inner"] });
    expect(state.metadata).toMatchObject({ thread_id: tid });
    const namespaces = await admin.query(
      `SELECT DISTINCT checkpoint_ns FROM ${ident(schema)}.checkpoints WHERE thread_id = $1`,
      [tid],
    );
    expect(namespaces.rows.length).toBeGreaterThan(1);

    const stats = (await storage.threads.storageStats(tid)) as any;
    const rows = await checkpointRows(tid);
    expect(stats.thread_id).toBe(tid);
    expect(stats.checkpoints.count).toBe(rows.checkpoints);
    expect(stats.checkpoints.bytes).toBeGreaterThan(0);
    expect(stats.pending_writes.count).toBe(rows.writes);
    expect(stats.pending_writes.bytes).toBeGreaterThan(0);
    expect(stats.channel_values.count).toBeGreaterThan(0);
    expect(stats.channel_values.by_channel.log.versions).toBeGreaterThan(0);
    expect(stats.channel_values.bytes).toBe(
      Object.values(stats.channel_values.by_channel as Record<string, { bytes: number }>).reduce(
        (a, c) => a + c.bytes,
        0,
      ),
    );
    expect(stats.total_bytes).toBe(
      stats.checkpoints.bytes + stats.channel_values.bytes + stats.pending_writes.bytes,
    );
    expect(Object.keys(stats).sort()).toEqual(
      ["channel_values", "checkpoints", "pending_writes", "thread_id", "total_bytes"].sort(),
    );
    const empty = await storage.threads.storageStats(id());
    expect(empty).toMatchObject({ total_bytes: 0, checkpoints: { count: 0, bytes: 0 } });
  });

  it("copy duplicates the thread, checkpoints, blobs and writes under the new id", async () => {
    const graph = buildGraph(storage);
    const src = id();
    await storage.threads.create({ thread_id: src, metadata: { origin: "src", keep: 1 } });
    await graph.invoke({ log: ["one"] }, cfg(src));
    await storage.threads.setState(src, { status: "interrupted", values: { log: ["one", "a", "inner"] } });
    const dst = id();
    const copy = (await storage.threads.copy(src, dst, { origin: "copy" }))!;
    // The row is new, as the official copy makes it: idle, no config, values or interrupts of its own.
    expect(copy).toMatchObject({
      thread_id: dst,
      metadata: { origin: "copy", keep: 1 },
      status: "idle",
      config: {},
      values: null,
      interrupts: {},
    });
    expect(await storage.threads.get(dst)).toEqual(copy);
    expect(await checkpointRows(dst)).toEqual(await checkpointRows(src));
    expect((await graph.getState(cfg(dst))).values).toEqual((await graph.getState(cfg(src))).values);
    const [h1, h2] = [await history(graph, src), await history(graph, dst)];
    expect(h2.map((s) => s.values)).toEqual(h1.map((s) => s.values));
    expect(h2.every((s) => (s.metadata as Record<string, unknown>).thread_id === dst)).toBe(true);
    // The copy lives on by itself.
    await graph.invoke({ log: ["two"] }, cfg(dst));
    expect((await graph.getState(cfg(dst))).values.log).toEqual(["one", "a", "inner", "two", "a", "inner"]);
    expect((await graph.getState(cfg(src))).values.log).toEqual(["one", "a", "inner"]);
    // Copying onto an existing id fails as a whole.
    await expect(storage.threads.copy(src, dst, {})).rejects.toThrow();
    expect((await graph.getState(cfg(dst))).values.log).toHaveLength(6);
  });

  it("delete removes the thread's checkpoints, blobs and writes", async () => {
    const graph = buildGraph(storage);
    const tid = id();
    const other = id();
    for (const t of [tid, other]) {
      await storage.threads.create({ thread_id: t, metadata: {} });
      await graph.invoke({ log: ["x"] }, cfg(t));
    }
    expect((await checkpointRows(tid)).checkpoints).toBeGreaterThan(0);
    expect(await storage.threads.delete(tid)).toBe(true);
    expect(await checkpointRows(tid)).toEqual({ checkpoints: 0, blobs: 0, writes: 0 });
    expect((await graph.getState(cfg(tid))).values).toEqual({});
    expect((await checkpointRows(other)).checkpoints).toBeGreaterThan(0);
  });

  it("rollback restores the history as it was at the mark, and the thread runs on correctly", async () => {
    const graph = buildGraph(storage);
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    await graph.invoke({ log: ["one"] }, cfg(tid));
    const before = await history(graph, tid);
    const rowsBefore = await checkpointRows(tid);
    const mark = await storage.threads.checkpointMark(tid);
    await graph.invoke({ log: ["two"] }, cfg(tid));
    expect((await checkpointRows(tid)).checkpoints).toBeGreaterThan(rowsBefore.checkpoints);
    await storage.threads.rollbackCheckpoints(tid, mark);
    expect(await checkpointRows(tid)).toEqual(rowsBefore);
    expect((await history(graph, tid)).map((s) => s.values)).toEqual(before.map((s) => s.values));
    // Channel versions are reused by the next run: no stale value may survive the rollback.
    await graph.invoke({ log: ["three"] }, cfg(tid));
    expect((await graph.getState(cfg(tid))).values.log).toEqual(["one", "a", "inner", "three", "a", "inner"]);
  });

  it("rollback of a resumed run removes its writes on the resumed checkpoint", async () => {
    const graph = buildInterruptGraph(storage);
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    await graph.invoke({ log: ["start"] }, cfg(tid));
    const interrupted = await graph.getState(cfg(tid));
    expect(interrupted.next).toEqual(["ask"]);
    const rowsBefore = await checkpointRows(tid);
    // The mark a run takes as it starts (executeJob).
    const { mark } = (await storage.threads.runStarting(tid, {}))!;
    await graph.invoke(new Command({ resume: "x" }), cfg(tid));
    expect((await graph.getState(cfg(tid))).values.log).toEqual(["start", "answer:x", "done"]);
    await storage.threads.rollbackCheckpoints(tid, mark);
    expect(await checkpointRows(tid)).toEqual(rowsBefore);
    const again = await graph.getState(cfg(tid));
    expect(again.next).toEqual(["ask"]);
    expect(again.values.log).toEqual(["start"]);
    await graph.invoke(new Command({ resume: "y" }), cfg(tid));
    expect((await graph.getState(cfg(tid))).values.log).toEqual(["start", "answer:y", "done"]);
  });

  it("rollback to a mark taken before any checkpoint empties the history", async () => {
    const graph = buildGraph(storage);
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {} });
    const mark = await storage.threads.checkpointMark(tid);
    await graph.invoke({ log: ["one"] }, cfg(tid));
    await storage.threads.rollbackCheckpoints(tid, mark);
    expect(await checkpointRows(tid)).toEqual({ checkpoints: 0, blobs: 0, writes: 0 });
    // Not a mark: nothing is deleted.
    await graph.invoke({ log: ["one"] }, cfg(tid));
    const rows = await checkpointRows(tid);
    await storage.threads.rollbackCheckpoints(tid, undefined);
    await storage.threads.rollbackCheckpoints(tid, { something: "else" });
    expect(await checkpointRows(tid)).toEqual(rows);
  });

  it("keepLatest keeps the newest checkpoint of each namespace, with its blobs and writes", async () => {
    const graph = buildGraph(storage);
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: {}, ttl: { ttl: 5, strategy: "keep_latest" } });
    await graph.invoke({ log: ["one"] }, cfg(tid));
    await graph.invoke({ log: ["two"] }, cfg(tid));
    const latest = await graph.getState(cfg(tid));
    const ns = await admin.query(
      `SELECT count(DISTINCT checkpoint_ns)::int AS n FROM ${ident(schema)}.checkpoints WHERE thread_id = $1`,
      [tid],
    );
    await storage.threads.keepLatest(tid);
    const rows = await checkpointRows(tid);
    expect(rows.checkpoints).toBe(ns.rows[0].n);
    const state = await graph.getState(cfg(tid));
    expect(state.values).toEqual(latest.values);
    expect(state.config.configurable?.checkpoint_id).toBe(latest.config.configurable?.checkpoint_id);
    const orphanBlobs = await admin.query(
      `SELECT count(*)::int AS n FROM ${ident(schema)}.checkpoint_blobs b WHERE b.thread_id = $1 AND NOT EXISTS (
         SELECT 1 FROM ${ident(schema)}.checkpoints c, jsonb_each_text(c.checkpoint -> 'channel_versions') v
         WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns AND v.key = b.channel AND v.value = b.version)`,
      [tid],
    );
    expect(orphanBlobs.rows[0].n).toBe(0);
    const orphanWrites = await admin.query(
      `SELECT count(*)::int AS n FROM ${ident(schema)}.checkpoint_writes w WHERE w.thread_id = $1 AND NOT EXISTS (
         SELECT 1 FROM ${ident(schema)}.checkpoints c WHERE c.thread_id = w.thread_id
           AND c.checkpoint_ns = w.checkpoint_ns AND c.checkpoint_id = w.checkpoint_id)`,
      [tid],
    );
    expect(orphanWrites.rows[0].n).toBe(0);
    const t = await admin.query(`SELECT expires_at FROM ${ident(schema)}.threads WHERE thread_id = $1`, [
      tid,
    ]);
    expect(t.rows[0].expires_at).toBeNull();
    await graph.invoke({ log: ["three"] }, cfg(tid));
    expect((await graph.getState(cfg(tid))).values.log).toEqual([
      "one",
      "a",
      "inner",
      "two",
      "a",
      "inner",
      "three",
      "a",
      "inner",
    ]);
  });
});

describe("parity with the SQLite storage", () => {
  let sqlite: Storage;
  let pgs: PostgresStorage;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hangar-parity-"));
    sqlite = openSqliteStorage(dir, { synchronous: "OFF" });
    pgs = await open({ schema: newSchema() });
  });

  afterAll(async () => {
    await sqlite?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs the same steps on both backends and returns both results. */
  async function both<T>(fn: (s: Storage) => Promise<T>): Promise<[T, T]> {
    return [await fn(sqlite), await fn(pgs)];
  }

  const strip = (x: unknown): unknown =>
    JSON.parse(
      JSON.stringify(x, (k, v) =>
        ["created_at", "updated_at", "state_updated_at", "createdAt", "updatedAt"].includes(k)
          ? undefined
          : v,
      ),
    );

  it("assistants, threads and crons sort, filter and page alike", async () => {
    const A = Array.from({ length: 6 }, () => id());
    const T = Array.from({ length: 6 }, () => id());
    const C = Array.from({ length: 5 }, () => id());
    const names = ["alpha", "Beta", "beta_2", "100% gamma", "Alpha", "zeta"];
    const metas = [
      { team: "x", n: 1 },
      { team: "y", tags: ["a", "b"] },
      { team: "x", nested: { k: { v: 1 } } },
      { nothing: null },
      { team: "x", tags: ["b"] },
      {},
    ];
    const thread_ids = [null, T[0], T[1], null, T[0]];
    const dates = [
      null,
      "2030-01-01T00:00:00.000Z",
      "2029-01-01T00:00:00.000Z",
      null,
      "2031-01-01T00:00:00.000Z",
    ];
    await both(async (s) => {
      for (let i = 0; i < 6; i++) {
        await s.assistants.create({
          assistant_id: A[i],
          graph_id: i % 2 ? "g1" : "g2",
          config: {},
          context: {},
          metadata: metas[i],
          name: names[i],
          description: null,
        });
        await s.threads.create({ thread_id: T[i], metadata: metas[i] });
      }
      for (let i = 0; i < 5; i++) {
        await s.crons.create({
          cron_id: C[i],
          assistant_id: A[i % 2],
          thread_id: thread_ids[i],
          user_id: null,
          schedule: "* * * * *",
          timezone: null,
          end_time: dates[(i + 2) % 5],
          enabled: i !== 2,
          on_run_completed: "keep",
          payload: {},
          metadata: metas[i],
          next_run_date: dates[i],
        });
      }
      // Distinct timestamps for updates, so updated_at order does not hang on a millisecond.
      for (const [i, status] of [
        [3, "busy"],
        [1, "error"],
        [4, "busy"],
      ] as const) {
        await sleep(3);
        await s.threads.setState(T[i], { status, values: { i, o: { k: i % 2 } } });
      }
      await sleep(3);
      await s.assistants.patch(A[2], { metadata: { extra: 1 } });
    });

    const queries: ((s: Storage) => Promise<unknown>)[] = [];
    for (const order of ["asc", "desc"] as const) {
      for (const sort_by of ["assistant_id", "graph_id", "name", "created_at", "updated_at", undefined]) {
        queries.push((s) => s.assistants.search({ sort_by, sort_order: order, limit: 4, offset: 1 }));
      }
      for (const sort_by of ["thread_id", "status", "created_at", "updated_at", "state_updated_at"]) {
        queries.push((s) => s.threads.search({ sort_by, sort_order: order, limit: 10, offset: 0 }));
      }
      for (const sort_by of [
        "cron_id",
        "assistant_id",
        "thread_id",
        "next_run_date",
        "end_time",
        "created_at",
      ]) {
        queries.push((s) => s.crons.search({ sort_by, sort_order: order, limit: 10, offset: 0 }));
      }
    }
    for (const metadata of [
      { team: "x" },
      { tags: ["b"] },
      { nested: { k: {} } },
      { nothing: null },
      { n: 1 },
    ]) {
      queries.push((s) => s.assistants.search({ metadata, limit: 10, offset: 0 }));
      queries.push((s) => s.assistants.count({ metadata }));
      queries.push((s) => s.threads.search({ metadata, limit: 10, offset: 0 }));
      queries.push((s) => s.threads.count({ metadata }));
      queries.push((s) => s.crons.search({ metadata, limit: 10, offset: 0 }));
      queries.push((s) => s.crons.count({ metadata }));
    }
    for (const name of ["ALPHA", "a_", "0%", "eta"]) {
      queries.push((s) =>
        s.assistants.search({ name, limit: 10, offset: 0, sort_by: "name", sort_order: "asc" }),
      );
    }
    queries.push((s) => s.assistants.search({ graph_id: "g1", limit: 10, offset: 0 }));
    queries.push((s) => s.threads.search({ values: { o: { k: 1 } }, limit: 10, offset: 0 }));
    queries.push((s) => s.threads.search({ status: "busy", ids: [T[0], T[3], T[4]], limit: 10, offset: 0 }));
    queries.push((s) => s.crons.search({ thread_id: T[0], enabled: true, limit: 10, offset: 0 }));
    queries.push((s) => s.crons.due("2030-06-01T00:00:00.000Z"));
    queries.push((s) => s.assistants.versions(A[2], { limit: 10, offset: 0 }));
    for (const q of queries) {
      const [a, b] = await both(q);
      expect(strip(b)).toEqual(strip(a));
    }
  });

  it("thread metadata merges at the top level alike: patch, copy, run start, state", async () => {
    const [a, b] = await both(async (s) => {
      const tid = id();
      await s.threads.create({
        thread_id: tid,
        metadata: { e: 1, tags: ["x", "y"], b: { c: 2 }, keep: "k" },
      });
      const patched = (await s.threads.patchMetadata(tid, { e: null, tags: ["z"], b: {} }))!.metadata;
      const copied = (await s.threads.copy(tid, id(), { owner: "o", b: { d: 1 } }))!.metadata;
      await s.threads.runStarting(tid, { graph_id: "g", assistant_id: "a" });
      await s.threads.setState(tid, { metadata: { keep: { n: 1 } } });
      return { patched, copied, after: (await s.threads.get(tid))!.metadata };
    });
    expect(a).toEqual(b);
    expect(a).toEqual({
      patched: { e: null, tags: ["z"], b: {}, keep: "k" },
      copied: { e: null, tags: ["z"], b: { d: 1 }, keep: "k", owner: "o" },
      after: { e: null, tags: ["z"], b: {}, keep: { n: 1 }, graph_id: "g", assistant_id: "a" },
    });
  });

  it("the store searches and lists alike", async () => {
    await both(async (s) => {
      const namespaces = [["p", "a"], ["p", "a", "deep"], ["p", "b"], ["q"], ["p", "A"]];
      for (let i = 0; i < 10; i++) {
        await s.store.putItem(
          namespaces[i % 5],
          `k${i}`,
          { i, kind: i % 3 ? "x" : "y", o: { n: i % 4 } },
          {},
        );
        await sleep(2);
      }
    });
    const ops: ((s: Storage) => Promise<unknown>)[] = [
      (s) => s.store.searchItems({ namespacePrefix: ["p"], limit: 20 } as never, {}),
      (s) => s.store.searchItems({ namespacePrefix: ["p", "a"], limit: 3, offset: 1 } as never, {}),
      (s) => s.store.searchItems({ namespacePrefix: ["p"], filter: { kind: "y" }, limit: 20 } as never, {}),
      (s) =>
        s.store.searchItems({ namespacePrefix: ["p"], filter: { "o.n": { $ne: 1 } }, limit: 2 } as never, {}),
      (s) => s.store.listNamespacesPage({ limit: 10, offset: 0 }),
      (s) => s.store.listNamespacesPage({ prefix: ["p"], maxDepth: 2, limit: 10, offset: 0 }),
      (s) => s.store.listNamespacesPage({ suffix: ["a"], limit: 10, offset: 0 }),
      (s) => s.store.getItem(["p", "b"], "k2", {}),
    ];
    for (const op of ops) {
      const [a, b] = await both(op);
      expect(strip(b)).toEqual(strip(a));
    }
  });

  it("a run's end writes fenced by its attempt: an attempt taken over by the next writes nothing", async () => {
    const [onSqlite, onPg] = await both(async (s) => {
      const tid = id();
      const rid = id();
      await s.threads.create({ thread_id: tid, metadata: {} });
      await s.runs.create({
        run_id: rid,
        thread_id: tid,
        assistant_id: id(),
        status: "pending",
        metadata: {},
        kwargs: {},
        multitask_strategy: "enqueue",
      });
      expect(await s.runs.start(rid)).toBe(1);
      // Attempt 1 lost its lease while the database was away; attempt 2 ran the run and recorded its end.
      expect(await s.runs.start(rid)).toBe(2);
      // The thread's end and the run's status together, as executeJob records them.
      await s.threads.setState(
        tid,
        { status: "idle", error: null },
        { runId: rid, attempt: 2, runStatus: "success" },
      );
      // Attempt 1's late end writes apply to nothing, together or apart.
      await s.threads.setState(
        tid,
        { status: "error", error: { message: "late" } },
        { runId: rid, attempt: 1, runStatus: "error" },
      );
      await s.threads.setState(tid, { status: "error" }, { runId: rid, attempt: 1 });
      await s.runs.setStatus(rid, "error", 1);
      // Unfenced writes still apply.
      const before = [(await s.threads.get(tid))!.status, (await s.runs.get(tid, rid))!.status];
      await s.runs.setStatus(rid, "interrupted");
      return [...before, (await s.runs.get(tid, rid))!.status];
    });
    expect(onSqlite).toEqual(["idle", "success", "interrupted"]);
    expect(onPg).toEqual(onSqlite);
  });

  it("an admission marks its thread with the run; a run's end keeps the thread busy while another waits", async () => {
    // The same ids on both backends.
    const tid = id();
    const assistant = id();
    const runIds = [id(), id(), id()];
    const [onSqlite, onPg] = await both(async (s) => {
      await s.threads.create({ thread_id: tid, metadata: { owner: "o", graph_id: "old" }, config: { a: 1 } });
      let n = 0;
      const input = (strategy: "enqueue" | "reject") => ({
        run_id: runIds[n++],
        thread_id: tid,
        assistant_id: assistant,
        status: "pending" as const,
        metadata: {},
        kwargs: {},
        multitask_strategy: strategy,
      });
      const mark = {
        metadata: { graph_id: "g", assistant_id: assistant },
        config: { configurable: { x: 2 } },
      };
      const first = await s.runs.admit(input("enqueue"), mark);
      const admitted = strip(await s.threads.get(tid));
      // Refused under "reject": nothing recorded, the thread's mark untouched.
      const refused = await s.runs.admit(input("reject"), { metadata: { graph_id: "no" }, config: {} });
      const second = await s.runs.admit(input("enqueue"), mark);
      await s.runs.start(first.run!.run_id);
      // The first run ends, fenced by its attempt, with every field; the second still waits: the thread stays busy.
      const end = (status: "idle" | "error", runId: string, attempt: number) =>
        s.threads.setState(
          tid,
          {
            status,
            busyWhilePending: true,
            values: { n: attempt },
            interrupts: {},
            error: status === "error" ? { message: "late" } : null,
            metadata: { last: runId },
          },
          { runId, attempt, runStatus: status === "idle" ? "success" : "error" },
        );
      const whileWaiting = await end("idle", first.run!.run_id, 1);
      // A late end of an attempt that is not the run's: nothing recorded.
      const late = await end("error", first.run!.run_id, 2);
      const afterFirst = strip(await s.threads.get(tid));
      await s.runs.start(second.run!.run_id);
      const last = await end("idle", second.run!.run_id, 1);
      // An unfenced end with values null clears them.
      await s.threads.setState(tid, { status: "idle", busyWhilePending: true, values: null });
      const cleared = (await s.threads.get(tid))!.values;
      return {
        first: { current: first.current, delayed: first.run ? first.delayed : undefined },
        admitted,
        refused: { run: refused.run, current: refused.current === first.run!.run_id },
        second: second.current === first.run!.run_id,
        whileWaiting,
        late,
        afterFirst,
        runs: [
          (await s.runs.get(tid, first.run!.run_id))!.status,
          (await s.runs.get(tid, second.run!.run_id))!.status,
        ],
        last,
        cleared,
      };
    });
    expect(onSqlite).toMatchObject({
      first: { current: null, delayed: [] },
      admitted: {
        status: "busy",
        metadata: { owner: "o", graph_id: "g" },
        config: { configurable: { x: 2 } },
      },
      refused: { run: null, current: true },
      second: true,
      whileWaiting: "busy",
      late: null,
      afterFirst: { status: "busy", values: { n: 1 } },
      runs: ["success", "success"],
      last: "idle",
      cleared: null,
    });
    expect(onPg).toEqual(onSqlite);
  });

  it("a run's end on PostgreSQL makes the checkpoints written before it durable: no separate flush", async () => {
    const tid = id();
    await pgs.threads.create({ thread_id: tid, metadata: {} });
    const query = vi.spyOn(pgs.pool, "query");
    const flushes = () => query.mock.calls.filter(([sql]) => String(sql).includes("txid_current")).length;
    try {
      // A checkpoint written asynchronously, then the run's end (a synchronous commit that wrote).
      pgs.checkpointWritten();
      await pgs.threads.setState(tid, { status: "idle", busyWhilePending: true });
      await pgs.sync();
      expect(flushes()).toBe(0);
      // One written after it needs a flush of its own.
      pgs.checkpointWritten();
      await pgs.sync();
      expect(flushes()).toBe(1);
      // An end that wrote nothing (no such thread) covers nothing.
      pgs.checkpointWritten();
      await pgs.threads.setState(id(), { status: "idle", busyWhilePending: true });
      await pgs.sync();
      expect(flushes()).toBe(2);
    } finally {
      query.mockRestore();
    }
  });
});

describe("lost connections", () => {
  async function terminate(): Promise<number> {
    const { rows } = await admin.query(
      "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = $1",
      [appName],
    );
    return rows[0].n;
  }

  /** Opens several connections in the storage's pool (idle afterwards). */
  async function warm(): Promise<void> {
    await Promise.all(Array.from({ length: 4 }, () => storage.pool.query("SELECT pg_sleep(0.05)")));
  }

  it("recovers by itself after the server terminated its connections, without crashing", async () => {
    const tid = id();
    await storage.threads.create({ thread_id: tid, metadata: { v: 1 } });
    const graph = buildGraph(storage);
    await graph.invoke({ log: ["x"] }, { configurable: { thread_id: tid } });

    // Idle connections terminated: the pool reports them to the error listener and replaces them.
    await warm();
    expect(await terminate()).toBeGreaterThanOrEqual(1);
    await vi.waitFor(() =>
      expect(poolErrors.some((e) => (e as { code?: string }).code === "57P01")).toBe(true),
    );
    expect((await storage.threads.get(tid))?.metadata).toEqual({ v: 1 });

    // Terminated and used at once, before the pool heard of it: the statements are retried.
    await warm();
    expect(await terminate()).toBeGreaterThanOrEqual(1);
    const results = await Promise.all([
      storage.threads.get(tid),
      storage.threads.count({}),
      storage.threads.setState(tid, { status: "busy" }),
      storage.assistants.search({ limit: 1, offset: 0 }),
      graph.getState({ configurable: { thread_id: tid } }),
    ]);
    expect(results[0]?.thread_id).toBe(tid);
    expect(results[4].values.log).toEqual(["x", "a", "inner"]);

    // Transactions too.
    await warm();
    expect(await terminate()).toBeGreaterThanOrEqual(1);
    const copy = id();
    expect((await storage.threads.copy(tid, copy, {}))?.status).toBe("idle");
    await graph.invoke({ log: ["y"] }, { configurable: { thread_id: copy } });
    expect((await graph.getState({ configurable: { thread_id: copy } })).values.log).toHaveLength(6);

    // Only this storage's connections were terminated, and it has new ones.
    const { rows } = await admin.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1",
      [appName],
    );
    expect(rows[0].n).toBeGreaterThanOrEqual(1);
  });
});

describe("prepared statements", () => {
  it("a connection prepares each statement with values once and runs it by name after", async () => {
    const s = await openPostgresStorage({ url: URL, schema: newSchema(), poolSize: 1 });
    opened.push(s);
    const tid = randomUUID();
    await s.threads.create({ thread_id: tid, metadata: { n: 1 } });
    for (let i = 0; i < 3; i++) expect((await s.threads.get(tid))?.metadata).toEqual({ n: 1 });
    // One connection (poolSize 1): the statements it ran are in its prepared statements, each once.
    const { rows } = await s.pool.query<{ statement: string }>(
      "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'hangar_%'",
    );
    const reads = rows.filter((r) => /SELECT \* FROM .*threads WHERE thread_id = \$1/.test(r.statement));
    expect(reads).toHaveLength(1);
    expect(rows.some((r) => /INSERT INTO .*threads/.test(r.statement))).toBe(true);
  });

  it("a table altered under a prepared statement: the statement runs again unnamed, with the new columns", async () => {
    const sch = newSchema();
    const s = await openPostgresStorage({ url: URL, schema: sch, poolSize: 1 });
    opened.push(s);
    const tid = randomUUID();
    await s.threads.create({ thread_id: tid, metadata: {} });
    const sql = `SELECT * FROM ${ident(sch)}.threads WHERE thread_id = $1`;
    expect((await s.pool.query(sql, [tid])).rows[0]).not.toHaveProperty("hangar_extra");
    await s.pool.query(`ALTER TABLE ${ident(sch)}.threads ADD COLUMN hangar_extra INT DEFAULT 7`);
    // Prepared before the ALTER, PostgreSQL refuses it now ("cached plan must not change result type"): run
    // again unnamed, through the pool (pg-pool's callback) and on a checked-out client (promises).
    expect((await s.pool.query(sql, [tid])).rows[0]).toMatchObject({ thread_id: tid, hangar_extra: 7 });
    const client = await s.pool.connect();
    try {
      expect((await client.query(sql, [tid])).rows[0]).toMatchObject({ hangar_extra: 7 });
    } finally {
      client.release();
    }
    expect((await s.threads.get(tid))?.thread_id).toBe(tid);
  });

  it("HANGAR_DATABASE_PREPARED=false (preparedStatements: false) sends statements unnamed", async () => {
    const s = await openPostgresStorage({
      url: URL,
      schema: newSchema(),
      poolSize: 1,
      preparedStatements: false,
    });
    opened.push(s);
    const tid = randomUUID();
    await s.threads.create({ thread_id: tid, metadata: {} });
    await s.threads.get(tid);
    const { rows } = await s.pool.query("SELECT name FROM pg_prepared_statements");
    expect(rows).toEqual([]);
  });
});
