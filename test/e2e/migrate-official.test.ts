// `hangar migrate` from the official dev server (`langgraphjs dev` of @langchain/langgraph-cli, serving the example
// project) into Hangar (embedded here, PostgreSQL + Redis in the postgres project): threads made by real runs (two
// chat turns and a fork updated at an earlier checkpoint, an interrupted approval, the research graph's subgraph),
// an assistant with two versions, store items. The copy matches step by step, the interrupted thread resumes on
// the target, a second run copies nothing, and after the source grew a third copies only the new checkpoints.
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  NOTHING_COPIED,
  copiedCounts,
  expectSameData,
  expectSameHistory,
  historyOf,
  migrate,
} from "../helpers/migrate.ts";
import { startOfficialDev, type OfficialDev } from "../helpers/official-dev.ts";
import { peerClient } from "../helpers/official-peer.ts";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar();
let official: OfficialDev;
let src: Client;
const made = { chat: "", approval: "", research: "", assistant: "" };

beforeAll(async () => {
  official = await startOfficialDev("examples");
  src = peerClient(official.url);
  const chat = await src.threads.create({ metadata: { purpose: "chat" } });
  made.chat = chat.thread_id;
  for (const content of ["hi", "and again"]) {
    await src.runs.wait(chat.thread_id, "chat", { input: { messages: [{ role: "user", content }] } });
  }
  // A fork: the state after the first turn, updated as if the agent had said something else.
  const afterFirst = (await historyOf(src, chat.thread_id)).find(
    (s) => s.next.length === 0 && (s.values as { messages: unknown[] }).messages.length === 2,
  )!;
  await src.threads.updateState(chat.thread_id, {
    values: { messages: [{ role: "ai", content: "a forked answer" }] },
    asNode: "agent",
    checkpointId: afterFirst.checkpoint.checkpoint_id!,
  });
  const approval = await src.threads.create({ metadata: { purpose: "approval" } });
  made.approval = approval.thread_id;
  await src.runs.wait(approval.thread_id, "approval", { input: { request: "a new laptop" } });
  const research = await src.threads.create();
  made.research = research.thread_id;
  await src.runs.wait(research.thread_id, "research", { input: { topic: "otters" } });
  const assistant = await src.assistants.create({
    graphId: "approval",
    name: "strict reviewer",
    config: { configurable: { reviewer: "Ada" } },
    metadata: { team: "ops" },
  });
  made.assistant = assistant.assistant_id;
  await src.assistants.update(assistant.assistant_id, {
    graphId: "approval",
    name: "stricter reviewer",
    config: { configurable: { reviewer: "Grace" } },
    metadata: { team: "security" },
  });
  await src.store.putItem(["users", "u1"], "prefs", { theme: "dark", langs: ["en", "fr"] });
  await src.store.putItem(["notes"], "n1", { text: "hello" });
});

afterAll(async () => {
  await official?.stop();
});

describe("hangar migrate from the official dev server", () => {
  it("a dry run counts what it would copy and writes nothing", async () => {
    const run = await migrate(official.url, hangar.server.url, ["--dry-run"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.dry_run).toBe(true);
    const sourceCheckpoints = (
      await Promise.all(
        Object.values(made)
          .slice(0, 3)
          .map((id) => historyOf(src, id)),
      )
    ).reduce((n, h) => n + h.length, 0);
    expect(copiedCounts(run)).toEqual({
      assistants: 1,
      versions: 2,
      threads: 3,
      checkpoints: sourceCheckpoints,
      crons: 0,
      store_items: 2,
    });
    // The official dev server has no crons: said, not a failure.
    expect(run.json.crons.notes.join(" ")).toMatch(/serves none/);
    expect(await hangar.client.threads.search()).toEqual([]);
    expect(run.stderr).toMatch(/threads +3\/3/);
  });

  it("copies assistants with their versions, threads with their whole history, and store items", async () => {
    const run = await migrate(official.url, hangar.server.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.threads.failures).toEqual([]);
    expect(run.stdout + run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    await expectSameData(src, hangar.client);
    const approval = await hangar.client.threads.get(made.approval);
    expect(approval.status).toBe("interrupted");
    // The fork: the update's parent is the checkpoint after the first turn, not the latest one before it.
    const history = await historyOf(hangar.client, made.chat);
    const update = history.find((s) => s.metadata?.source === "update")!;
    expect(update.parent_checkpoint?.checkpoint_id).not.toBe(history[1].checkpoint.checkpoint_id);
  });

  it("the interrupted thread resumes on the target", async () => {
    const state = await hangar.client.threads.getState(made.approval);
    expect(state.tasks[0].interrupts[0].value).toMatchObject({ question: "Approve this draft?" });
    const values = await hangar.client.runs.wait(made.approval, "approval", {
      command: { resume: "approved" },
    });
    expect(values).toMatchObject({ draft: "Proposal: a new laptop", decision: "approved" });
    expect((await hangar.client.threads.get(made.approval)).status).toBe("idle");
  });

  it("a second run copies nothing", async () => {
    const run = await migrate(official.url, hangar.server.url);
    expect(run.code, run.stderr).toBe(0);
    expect(copiedCounts(run)).toEqual(NOTHING_COPIED);
  });

  it("after the source grew, a third run copies only the new checkpoints", async () => {
    const before = (await historyOf(src, made.chat)).length;
    await src.runs.wait(made.chat, "chat", { input: { messages: [{ role: "user", content: "more" }] } });
    const grown = (await historyOf(src, made.chat)).length - before;
    expect(grown).toBeGreaterThan(0);
    const run = await migrate(official.url, hangar.server.url);
    expect(run.code, run.stderr).toBe(0);
    expect(copiedCounts(run)).toMatchObject({ threads: 0, checkpoints: grown });
    await expectSameHistory(src, hangar.client, made.chat);
    expect((await hangar.client.threads.get(made.chat)).values).toEqual(
      (await src.threads.get(made.chat)).values,
    );
  });
});
