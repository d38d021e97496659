// End-to-end durability test: data written before a SIGKILL is all there after a restart on the same data dir.
import { randomUUID } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, noRetryClient, startHangar, tempDir, type HangarProcess } from "../helpers/server.ts";

const tag = `restart-${randomUUID()}`;
let dataDir = "";
let first: HangarProcess | undefined;
let second: HangarProcess | undefined;
let client: Client;

interface Snapshot {
  assistants: any[];
  versions: Record<string, any[]>;
  systemAssistants: any[];
  threads: any[];
  states: Record<string, any>;
  histories: Record<string, any[]>;
  runs: Record<string, any[]>;
  threadCount: number;
  assistantCount: number;
}

let before: Snapshot;
let after: Snapshot;
const ids = { assistant: "", chatThread: "", researchThread: "", interruptedThread: "", emptyThread: "" };

/** Everything this test wrote, read back through the API. */
async function snapshot(c: Client): Promise<Snapshot> {
  const assistants = await c.assistants.search({ metadata: { tag }, limit: 100, sortBy: "assistant_id" });
  const versions: Record<string, any[]> = {};
  for (const a of assistants) versions[a.assistant_id] = await c.assistants.getVersions(a.assistant_id);
  const systemAssistants = await c.assistants.search({
    metadata: { created_by: "system" },
    limit: 100,
    sortBy: "assistant_id",
  });
  const threads = await c.threads.search({ metadata: { tag }, limit: 100, sortBy: "thread_id" });
  const states: Record<string, any> = {};
  const histories: Record<string, any[]> = {};
  const runs: Record<string, any[]> = {};
  for (const t of threads) {
    states[t.thread_id] = await c.threads.getState(t.thread_id);
    histories[t.thread_id] = await c.threads.getHistory(t.thread_id, { limit: 1000 });
    runs[t.thread_id] = await c.runs.list(t.thread_id, { limit: 100 });
  }
  return {
    assistants,
    versions,
    systemAssistants,
    threads,
    states,
    histories,
    runs,
    threadCount: await c.threads.count({ metadata: { tag } }),
    assistantCount: await c.assistants.count({ metadata: { tag } }),
  };
}

beforeAll(async () => {
  dataDir = tempDir("hangar-restart-");
  // A process: it is killed with runs in flight.
  first = await startHangar({ process: true, dataDir });
  const c1 = noRetryClient(first.url);

  const a = await c1.assistants.create({
    graphId: "chat",
    name: "durable",
    config: { configurable: { flavour: "v1" } },
    metadata: { tag },
  });
  await c1.assistants.update(a.assistant_id, { name: "durable v2", metadata: { more: 1 } });
  ids.assistant = a.assistant_id;
  await c1.assistants.create({ graphId: "research", name: "second", metadata: { tag } });

  const chat = await c1.threads.create({ metadata: { tag, kind: "chat" } });
  ids.chatThread = chat.thread_id;
  await c1.runs.wait(chat.thread_id, a.assistant_id, {
    input: { messages: [{ type: "human", content: "remember me" }] },
  });
  await c1.runs.wait(chat.thread_id, "chat", {
    input: { messages: [{ type: "human", content: "and this" }] },
  });
  await c1.threads.updateState(chat.thread_id, {
    values: { messages: [{ type: "ai", content: "edited" }] },
    asNode: "agent",
  });

  const research = await c1.threads.create({ metadata: { tag, kind: "research" } });
  ids.researchThread = research.thread_id;
  await c1.runs.wait(research.thread_id, "research", { input: { topic: "durability" } });

  // Paused before its node runs: the thread is interrupted with a pending task.
  const paused = await c1.threads.create({ metadata: { tag, kind: "interrupted" } });
  ids.interruptedThread = paused.thread_id;
  await c1.runs.wait(paused.thread_id, "chat", {
    input: { messages: [{ type: "human", content: "wait for it" }] },
    interruptBefore: ["agent"],
  });

  ids.emptyThread = (await c1.threads.create({ metadata: { tag, kind: "empty" } })).thread_id;
  await c1.threads.update(ids.emptyThread, { metadata: { patched: true } });

  before = await snapshot(c1);

  await first.kill();
  second = await startHangar({ dataDir });
  client = noRetryClient(second.url);
  after = await snapshot(client);
});

afterAll(async () => {
  if (first) await first.kill();
  if (second) await second.stop();
  if (dataDir) cleanupDir(dataDir);
});

describe("after SIGKILL and restart on the same data dir", () => {
  it("the recorded data is not trivial", () => {
    expect(before.assistants).toHaveLength(2);
    expect(before.versions[ids.assistant].map((v) => v.version)).toEqual([2, 1]);
    expect(before.threads).toHaveLength(4);
    expect(before.states[ids.chatThread].values.messages).toHaveLength(5);
    expect(before.histories[ids.chatThread].length).toBeGreaterThan(5);
    expect(before.runs[ids.chatThread]).toHaveLength(2);
    expect(before.threads.find((t) => t.thread_id === ids.interruptedThread)?.status).toBe("interrupted");
  });

  it("assistants and their versions are unchanged", () => {
    expect(after.assistants).toEqual(before.assistants);
    expect(after.versions).toEqual(before.versions);
    expect(after.assistantCount).toBe(before.assistantCount);
  });

  it("system assistants keep their ids", () => {
    expect(after.systemAssistants.map((a) => a.assistant_id)).toEqual(
      before.systemAssistants.map((a) => a.assistant_id),
    );
    expect(after.systemAssistants.map((a) => a.graph_id).sort()).toEqual(["approval", "chat", "research"]);
  });

  it("threads are unchanged (metadata, status, values, timestamps)", () => {
    expect(after.threads).toEqual(before.threads);
    expect(after.threadCount).toBe(4);
  });

  it("thread state and history are unchanged", () => {
    expect(after.states).toEqual(before.states);
    expect(after.histories).toEqual(before.histories);
  });

  it("runs are unchanged", () => {
    expect(after.runs).toEqual(before.runs);
    for (const r of after.runs[ids.chatThread]) expect(r.status).toBe("success");
  });

  it("a thread continues where it left off", async () => {
    await client.runs.wait(ids.chatThread, ids.assistant, {
      input: { messages: [{ type: "human", content: "still there?" }] },
    });
    const s = await client.threads.getState(ids.chatThread);
    const msgs = (s.values as any).messages.map((m: any) => m.content);
    expect(msgs.slice(0, 5)).toEqual(
      before.states[ids.chatThread].values.messages.map((m: any) => m.content),
    );
    expect(msgs[5]).toBe("still there?");
    expect(msgs).toHaveLength(7);
  });

  it("an interrupted thread resumes after the restart", async () => {
    const pending = after.states[ids.interruptedThread];
    expect(pending.next).toEqual(["agent"]);
    await client.runs.wait(ids.interruptedThread, "chat", { input: null });
    const t = await client.threads.get(ids.interruptedThread);
    expect(t.status).toBe("idle");
    const msgs = (t.values as any).messages;
    expect(msgs).toHaveLength(2);
    expect(msgs[0].content).toBe("wait for it");
    expect(msgs[1].type).toBe("ai");
  });
});
