// Upgrade: data written by an earlier release (commit 8d60327) opens with today's code, on both backends. The
// fixtures (test/fixtures/upgrade: the embedded data dir's database, a pg_dump of the PostgreSQL schema, and
// expected.json, what the old server answered through the SDK) are restored into a fresh data dir or schema,
// today's server starts on them (its migrations run), and everything is read back through the SDK and compared
// field by field; then the interrupted thread is resumed to its end and old threads take new runs. A schema
// change that loses or garbles old data fails here: keep it passing, do not regenerate it away.
//
// Regenerate the fixtures (e.g. to add data of a new kind) from the same commit with
//   npx tsx test/fixtures/upgrade/generate.ts --commit 8d60327
// (its header says what it does).
import { copyFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterTargetFor, ident, testPg } from "../helpers/backend.ts";
import {
  BACKEND,
  ROOT,
  cleanupDir,
  noRetryClient,
  startHangar,
  tempDir,
  type ClusterTarget,
  type HangarProcess,
} from "../helpers/server.ts";
import {
  SCHEMA_PLACEHOLDER,
  snapshot,
  type Expected,
  type Snapshot,
  type ThreadSnapshot,
} from "../fixtures/upgrade/snapshot.ts";

const FIXTURES = join(ROOT, "test/fixtures/upgrade");
const RELEASE = "8d60327";
const expected = JSON.parse(readFileSync(join(FIXTURES, BACKEND, "expected.json"), "utf8")) as Expected;
const { ids } = expected;
const old = expected.snapshot;

type Rec = Record<string, unknown>;

/**
 * `actual` reduced to the fields `expected` has: a later version may add fields to a record, never lose or change
 * one. Below the record's own fields (values, metadata, config, ...) the comparison is whole.
 */
function fieldsOf(actual: unknown, expected: Rec): Rec {
  if (!actual || typeof actual !== "object") return actual as Rec;
  return Object.fromEntries(Object.keys(expected).map((k) => [k, (actual as Rec)[k]]));
}

function sameRecord(actual: unknown, expected: Rec, what: string): void {
  expect(fieldsOf(actual, expected), what).toEqual(expected);
}

function sameRecords(actual: unknown[], expected: Rec[], what: string): void {
  expect(actual, `${what}: how many`).toHaveLength(expected.length);
  expect(
    actual.map((a, i) => fieldsOf(a, expected[i])),
    what,
  ).toEqual(expected);
}

/**
 * Schemas of this file are named `upgrade_<time>_<hash>` (not `t_`, which the postgres project's global setup drops
 * once its migrations look older than half an hour, as these restored ones do at once). Left-overs of a run that
 * died are dropped here after a day.
 */
function upgradeSchema(dataDir: string): string {
  return `upgrade_${Math.floor(Date.now() / 1000)}_${clusterTargetFor(dataDir).schema.slice(2, 14)}`;
}

/** Restores postgres/dump.sql into `schema` (a new one), after dropping this file's day-old left-overs. */
async function restoreDump(schema: string): Promise<void> {
  const sql = readFileSync(join(FIXTURES, "postgres/dump.sql"), "utf8").replaceAll(
    SCHEMA_PLACEHOLDER,
    schema,
  );
  const db = testPg();
  await db.connect();
  try {
    const { rows } = await db.query<{ nspname: string }>(
      "SELECT nspname FROM pg_namespace WHERE nspname ~ '^upgrade_[0-9]+_[0-9a-f]+$'",
    );
    for (const { nspname } of rows) {
      const at = Number(nspname.split("_")[1]) * 1000;
      if (Date.now() - at > 24 * 3600_000) await db.query(`DROP SCHEMA IF EXISTS ${ident(nspname)} CASCADE`);
    }
    await db.query(sql);
  } finally {
    await db.end();
  }
}

/**
 * Crons of the fixture that are enabled and whose next date has come (29 February 2028 for the one enabled
 * cron): today's server rightly fires them at start, making a thread of their own. Their firing is awaited, and
 * then their threads left out and their dates not compared.
 */
const dueCrons = (old.crons.search as Rec[]).filter(
  (c) => c.enabled && typeof c.next_run_date === "string" && Date.parse(c.next_run_date) <= Date.now(),
);
const dueIds = new Set(dueCrons.map((c) => c.cron_id as string));

async function awaitDueCrons(server: HangarProcess): Promise<void> {
  if (!dueCrons.length) return;
  const client = noRetryClient(server.url);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const crons = await client.crons.search({ limit: 1000 });
    const fired = dueCrons.every((d) => {
      const c = crons.find((x) => x.cron_id === d.cron_id);
      return c && c.next_run_date !== d.next_run_date;
    });
    const threads = await client.threads.search({ limit: 1000 });
    const busy = threads.some(
      (t) => dueIds.has((t.metadata as Rec)?.cron_id as string) && t.status === "busy",
    );
    if (fired && !busy) return;
    if (Date.now() > deadline)
      throw new Error("the due fixture crons did not fire and finish within a minute");
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The snapshot without what the due crons made (their threads) or changed (their dates). */
function withoutCronFirings(s: Snapshot): Snapshot {
  if (!dueCrons.length) return s;
  const fired = new Set(
    Object.entries(s.threads.byId)
      .filter(([, t]) => dueIds.has((t.thread.metadata as Rec)?.cron_id as string))
      .map(([id]) => id),
  );
  const byId = Object.fromEntries(Object.entries(s.threads.byId).filter(([id]) => !fired.has(id)));
  const crons = s.crons.search.map((c) =>
    dueIds.has(c.cron_id as string) ? { ...c, next_run_date: undefined, updated_at: undefined } : c,
  );
  return {
    ...s,
    threads: {
      ...s.threads,
      count: s.threads.count - fired.size,
      search: s.threads.search.filter((id) => !fired.has(id)),
      byId,
    },
    crons: { ...s.crons, search: crons },
  };
}

const expectedCrons = (old.crons.search as Rec[]).map((c) =>
  dueIds.has(c.cron_id as string) ? { ...c, next_run_date: undefined, updated_at: undefined } : c,
);

describe(`data written by ${RELEASE}, opened by today's code (${BACKEND})`, () => {
  const dataDir = tempDir("hangar-upgrade-");
  let cluster: ClusterTarget | undefined;
  let server: HangarProcess;
  let now: Snapshot;
  const client = () => noRetryClient(server.url);

  beforeAll(async () => {
    if (BACKEND === "embedded") {
      copyFileSync(join(FIXTURES, "embedded/hangar.sqlite"), join(dataDir, "hangar.sqlite"));
    } else {
      const schema = upgradeSchema(dataDir);
      cluster = { ...clusterTargetFor(dataDir), schema, redisPrefix: `${schema}:` };
      await restoreDump(schema);
    }
    // The harness drops the schema (and Redis prefix) of `cluster` after the file.
    server = await startHangar({
      config: join(FIXTURES, "project/langgraph.json"),
      dataDir,
      cluster,
    });
    await awaitDueCrons(server);
    now = withoutCronFirings(await snapshot(client(), ids));
  });

  afterAll(async () => {
    await server?.stop();
    cleanupDir(dataDir);
  });

  it(`the fixtures are the data of ${RELEASE}`, () => {
    expect(expected.generated_by.commit, "regenerate from the release, not from today's code").toMatch(
      new RegExp(`^${RELEASE}`),
    );
    expect(expected.generated_by.backend).toBe(BACKEND);
  });

  it("assistants: each one, its versions, and which version is the latest", () => {
    expect(now.assistants.count).toBe(old.assistants.count);
    expect(now.assistants.search).toEqual(old.assistants.search);
    for (const [id, a] of Object.entries(old.assistants.byId)) {
      sameRecord(now.assistants.byId[id]?.assistant, a.assistant, `assistant ${id}`);
      sameRecords(now.assistants.byId[id]?.versions ?? [], a.versions, `versions of assistant ${id}`);
    }
    // What populate.ts made, spelled out: three versions of the reviewer, version 2 (reviewer bob) the latest.
    const review = now.assistants.byId[ids.assistants.review];
    expect(review.assistant).toMatchObject({ version: 2, config: { configurable: { reviewer: "bob" } } });
    expect(review.versions.map((v) => v.version).sort()).toEqual([1, 2, 3]);
  });

  it("threads: metadata, status, values and interrupts", () => {
    expect(now.threads.count).toBe(old.threads.count);
    expect(now.threads.search).toEqual(old.threads.search);
    for (const [id, t] of Object.entries(old.threads.byId)) {
      sameRecord(now.threads.byId[id]?.thread, t.thread, `thread ${id}`);
    }
    expect(now.threads.byId[ids.threads.interrupted].thread.status).toBe("interrupted");
    expect(now.threads.byId[ids.threads.errored].thread.status).toBe("error");
  });

  it("state and whole history of each thread, and a past checkpoint by id", () => {
    for (const [id, t] of Object.entries(old.threads.byId)) {
      const mine = now.threads.byId[id] as ThreadSnapshot;
      sameRecord(mine.state, t.state, `state of thread ${id}`);
      sameRecords(mine.history, t.history, `history of thread ${id}`);
    }
    sameRecord(
      now.threads.historyFirstCheckpoint,
      old.threads.historyFirstCheckpoint,
      "state at the first checkpoint",
    );
    // The interrupt as the old server recorded it, its value from the assistant's version 2.
    const state = now.threads.byId[ids.threads.interrupted].state as { tasks: { interrupts: Rec[] }[] };
    expect(state.tasks[0].interrupts[0].value).toEqual({
      question: "Approve this draft?",
      draft: "Proposal: a new laptop",
      reviewer: "bob",
    });
  });

  it("runs of each thread: finished, errored, stopped in interrupt(), cancelled", () => {
    for (const [id, t] of Object.entries(old.threads.byId)) {
      const mine = now.threads.byId[id] as ThreadSnapshot;
      expect(mine.runList, `runs of thread ${id}`).toEqual(t.runList);
      for (const [runId, run] of Object.entries(t.runs)) sameRecord(mine.runs[runId], run, `run ${runId}`);
    }
    const run = (thread: string, runId: string) => now.threads.byId[thread].runs[runId];
    expect(run(ids.threads.history, ids.runs.finished).status).toBe("success");
    expect(run(ids.threads.errored, ids.runs.errored).status).toBe("error");
    expect(run(ids.threads.cancelled, ids.runs.cancelled).status).toBe("interrupted");
  });

  it("store: namespaces, items (with and without index, with a TTL, written by a graph), searches", () => {
    expect(now.store.namespaces).toEqual(old.store.namespaces);
    expect(Object.keys(now.store.items).sort()).toEqual(Object.keys(old.store.items).sort());
    for (const [key, item] of Object.entries(old.store.items)) {
      sameRecord(now.store.items[key], item, `store item ${key}`);
    }
    for (const [name, found] of Object.entries(old.store.searches)) {
      sameRecords(now.store.searches[name] ?? [], found, `store search "${name}"`);
    }
    // Semantic search ranks by the embeddings stored by the old release: scores are there.
    expect(now.store.searches["docs green tea"][0]).toMatchObject({ key: "tea", score: expect.any(Number) });
  });

  it("crons: schedule, payload, enabled, next run date", () => {
    expect(now.crons.count).toBe(old.crons.count);
    sameRecords(now.crons.search, expectedCrons, "crons");
  });

  it("the interrupted thread resumes to its end", async () => {
    const thread = ids.threads.interrupted;
    const before = old.threads.byId[thread].history;
    const values = await client().runs.wait(thread, ids.assistants.review, {
      command: { resume: "approved" },
    });
    expect(values).toEqual({
      request: "a new laptop",
      draft: "Proposal: a new laptop",
      decision: "approved",
    });
    const t = await client().threads.get(thread);
    expect(t.status).toBe("idle");
    expect(t.interrupts).toEqual({});
    const state = await client().threads.getState(thread);
    expect(state.next).toEqual([]);
    expect(state.tasks).toEqual([]);
    // The old checkpoints stay below the new ones, unchanged but for the result of the task that was waiting
    // (a checkpoint's tasks show the results written after it: the resumed task's now).
    const history = await client().threads.getHistory(thread, { limit: 1000 });
    expect(history.length).toBeGreaterThan(before.length);
    const withoutResults = (h: unknown[]) =>
      (h as { tasks: Rec[] }[]).map((e) => ({ ...e, tasks: e.tasks.map((t) => ({ ...t, result: "-" })) }));
    sameRecords(
      withoutResults(history.slice(history.length - before.length)),
      withoutResults(before),
      `old history of ${thread}`,
    );
    expect(history[history.length - before.length].tasks[0].result).toEqual({ decision: "approved" });
    expect((history[0].parent_checkpoint as Rec | null)?.checkpoint_id).toBeTruthy();
  });

  it("old threads take new runs: history goes on, messages stay, a failed thread recovers", async () => {
    const c = client();
    const oldLog = (old.threads.byId[ids.threads.history].state.values as { log: string[] }).log;
    const steps = await c.runs.wait(ids.threads.history, ids.assistants.steps, {
      input: { job: { label: "today", steps: 1 } },
    });
    expect((steps as { log: string[] }).log).toEqual([...oldLog, "today:0"]);

    const oldMessages = (old.threads.byId[ids.threads.chat].state.values as { messages: Rec[] }).messages;
    const chat = (await c.runs.wait(ids.threads.chat, ids.assistants.chat, {
      input: { messages: [{ role: "user", content: "still there?" }] },
    })) as { messages: Rec[] };
    expect(chat.messages.slice(0, oldMessages.length)).toEqual(oldMessages);
    expect(chat.messages.slice(oldMessages.length).map((m) => [m.type, m.content])).toEqual([
      ["human", "still there?"],
      ["ai", `reply ${oldMessages.length / 2 + 1} to: still there?`],
    ]);

    await c.runs.wait(ids.threads.errored, ids.assistants.steps, {
      input: { job: { label: "retry", steps: 1 } },
    });
    expect((await c.threads.get(ids.threads.errored)).status).toBe("idle");
    const runs = await c.runs.list(ids.threads.errored);
    expect(runs.map((r) => r.status)).toEqual(["success", "error"]);
  });

  it("the store takes new items beside the old ones, and the graph reads the old profile", async () => {
    const c = client();
    await c.store.putItem(["docs"], "water", { text: "Water boils at 100 degrees" });
    const found = await c.store.searchItems(["docs"], { query: "green tea", limit: 10 });
    expect(found.items.map((i) => i.key).sort()).toEqual(["coffee", "tea", "water"]);
    expect(found.items[0].key).toBe("tea");
    const values = await c.runs.wait(null, "memory", { input: { user: "alice", note: "again" } });
    expect(values).toMatchObject({ profile_found: true });
    expect((await c.store.getItem(["notes", "alice"], "from-graph"))?.value).toEqual({
      text: "again",
      by: "memory graph",
    });
  });
});
