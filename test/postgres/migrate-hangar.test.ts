// `hangar migrate` from Hangar embedded (SQLite, started here whatever the project's backend) to Hangar on
// PostgreSQL + Redis (postgres only: the target is this project's server): assistants with versions and the version
// the source serves, threads with their history (an interrupted one among them), crons on a thread and stateless
// ones, store items. The copy matches, the interrupted thread resumes on the target, a second run copies nothing,
// and after the source grew a third copies only its new checkpoints.
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../src/lib/logger.ts";
import { startServer, type RunningServer } from "../../src/server.ts";
import {
  NOTHING_COPIED,
  copiedCounts,
  expectSameData,
  expectSameHistory,
  historyOf,
  migrate,
} from "../helpers/migrate.ts";
import { BACKEND, cleanupDir, EXAMPLE_CONFIG, noRetryClient, tempDir, useHangar } from "../helpers/server.ts";

const target = useHangar();
let embedded: RunningServer;
let dataDir: string;
let src: Client;
const made = { chat: "", approval: "", assistant: "" };

/** The crons of a server as the comparison sees them. */
async function cronsOf(c: Client) {
  const crons = await c.crons.search({ limit: 100 });
  return crons
    .map((x) => ({
      assistant_id: x.assistant_id,
      thread_id: x.thread_id ?? null,
      schedule: x.schedule,
      input: (x.payload as { input?: unknown }).input,
      metadata: x.metadata,
      enabled: (x as { enabled?: boolean }).enabled,
    }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

beforeAll(async () => {
  expect(BACKEND).toBe("postgres");
  dataDir = tempDir();
  const env = { ...process.env };
  for (const k of ["DATABASE_URL", "REDIS_URL", "HANGAR_DATABASE_SCHEMA", "HANGAR_REDIS_PREFIX", "PORT"])
    delete env[k];
  embedded = await startServer({
    configPath: EXAMPLE_CONFIG,
    dataDir,
    host: "127.0.0.1",
    port: 0,
    logger: createLogger({ level: "warn", format: "json", destination: { write: () => true } }),
    env,
  });
  src = noRetryClient(embedded.url);
  const chat = await src.threads.create({ metadata: { purpose: "chat" } });
  made.chat = chat.thread_id;
  await src.runs.wait(chat.thread_id, "chat", { input: { messages: [{ role: "user", content: "hi" }] } });
  const approval = await src.threads.create();
  made.approval = approval.thread_id;
  await src.runs.wait(approval.thread_id, "approval", { input: { request: "a bike" } });
  const a = await src.assistants.create({ graphId: "chat", name: "v1", metadata: { tier: "a" } });
  await src.assistants.update(a.assistant_id, { graphId: "chat", name: "v2", metadata: { tier: "b" } });
  await src.assistants.setLatest(a.assistant_id, 1);
  made.assistant = a.assistant_id;
  await src.crons.create(a.assistant_id, {
    schedule: "0 3 1 1 *",
    input: { messages: [{ role: "user", content: "new year" }] },
    metadata: { kind: "stateless" },
  });
  await src.crons.createForThread(chat.thread_id, "chat", {
    schedule: "30 4 1 1 *",
    input: { messages: [{ role: "user", content: "yearly" }] },
    metadata: { kind: "thread" },
  });
  await src.store.putItem(["team", "ops"], "runbook", { steps: ["one", "two"] });
});

afterAll(async () => {
  await embedded?.close();
  if (dataDir) cleanupDir(dataDir);
});

describe("hangar migrate from Hangar embedded to Hangar on PostgreSQL", () => {
  it("copies assistants, threads with their history, crons and store items", async () => {
    const run = await migrate(embedded.url, target.server.url);
    expect(run.code, run.stderr).toBe(0);
    expect(copiedCounts(run)).toMatchObject({
      assistants: 1,
      versions: 2,
      threads: 2,
      crons: 2,
      store_items: 1,
    });
    await expectSameData(src, target.client);
    // Both versions, and the one the source serves (the first) served.
    expect(await target.client.assistants.get(made.assistant)).toMatchObject({ version: 1, name: "v1" });
    expect(await cronsOf(target.client)).toEqual(await cronsOf(src));
  });

  it("the interrupted thread resumes on the target, by its interrupt's id", async () => {
    expect((await target.client.threads.get(made.approval)).status).toBe("interrupted");
    // By the interrupt's id, which is the source's: LangGraph derives the same task, and the same id, here.
    const [task] = (await target.client.threads.getState(made.approval)).tasks;
    const [source] = (await src.threads.getState(made.approval)).tasks;
    expect(task.interrupts).toEqual(source.interrupts);
    const resume = { [task.interrupts[0].id!]: "no" };
    const values = await target.client.runs.wait(made.approval, "approval", { command: { resume } });
    expect(values).toMatchObject({ draft: "Proposal: a bike", decision: "no" });
  });

  it("a second run copies nothing; after the source grew, a third copies only the new checkpoints", async () => {
    const again = await migrate(embedded.url, target.server.url);
    expect(again.code, again.stderr).toBe(0);
    expect(copiedCounts(again)).toEqual(NOTHING_COPIED);
    const before = (await historyOf(src, made.chat)).length;
    await src.runs.wait(made.chat, "chat", { input: { messages: [{ role: "user", content: "more" }] } });
    const grown = (await historyOf(src, made.chat)).length - before;
    const third = await migrate(embedded.url, target.server.url);
    expect(third.code, third.stderr).toBe(0);
    expect(copiedCounts(third)).toEqual({ ...NOTHING_COPIED, checkpoints: grown });
    await expectSameHistory(src, target.client, made.chat);
  });
});
