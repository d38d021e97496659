// End-to-end: the real AG-UI LangGraph adapter (`@ag-ui/langgraph`, what CopilotKit apps use to reach an Agent
// Server) against Hangar. A chat turn on `chat`, then the `approval` example run until it interrupts and
// resumed the way CopilotKit's interrupt hooks do it (`forwardedProps.command.resume`), for which the adapter
// sends the graph's input keys of the current state as `input` beside the command. The event sequences and
// final threads asserted here are those the official dev server (`langgraphjs dev`) gives for the same script.
import { randomUUID } from "node:crypto";
import type { BaseEvent } from "@ag-ui/client";
import { LangGraphAgent } from "@ag-ui/langgraph";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

/** An AG-UI event as the adapter dispatches it (the fields read here, whatever its type). */
type AnyEvent = BaseEvent & {
  stepName?: string;
  name?: string;
  value?: unknown;
  delta?: string;
  snapshot?: Record<string, unknown>;
  messages?: { role: string; content?: unknown }[];
  runId?: string;
  threadId?: string;
  outcome?: unknown;
  rawEvent?: { id?: string; value?: unknown };
};

/** Runs the agent once, collecting every event its subscribers see, in order. */
async function runCollecting(agent: LangGraphAgent, params: Parameters<LangGraphAgent["runAgent"]>[0] = {}) {
  const events: AnyEvent[] = [];
  await agent.runAgent(params, { onEvent: ({ event }) => void events.push(event as AnyEvent) });
  return events;
}

/**
 * The sequence a UI follows: RAW events (the server's own stream events, passed through) left out, a step named,
 * a custom event's name given, and repeats of one type collapsed (how many text deltas and state snapshots
 * there are depends on how the model's tokens and the stream modes interleave, on both servers alike).
 */
function outline(events: AnyEvent[]): string[] {
  const out: string[] = [];
  for (const e of events) {
    if (e.type === "RAW") continue;
    const label =
      e.type === "STEP_STARTED" || e.type === "STEP_FINISHED"
        ? `${e.type}:${e.stepName}`
        : e.type === "CUSTOM"
          ? `CUSTOM:${e.name}`
          : e.type;
    if (out.at(-1) !== label) out.push(label);
  }
  return out;
}

const ofType = (events: AnyEvent[], type: string) => events.filter((e) => e.type === type);

/** A request the adapter made: method, path and JSON body. */
interface Sent {
  method: string;
  path: string;
  body?: Record<string, unknown>;
}

describe("the AG-UI LangGraph adapter (@ag-ui/langgraph)", () => {
  const hangar = useHangar();

  /** Waits until the thread is `status` (its run over), then returns it as the official SDK reads it. */
  const settled = (threadId: string, status: string) =>
    waitFor(`thread ${threadId} to be ${status}`, async () => {
      const t = await hangar.client.threads.get(threadId);
      return t.status === status && t;
    });

  it("streams a chat turn as AG-UI events; the thread keeps the turn", async () => {
    // As CopilotKit's runtime builds it: the deployment's URL and the graph id, nothing else.
    const agent = new LangGraphAgent({
      deploymentUrl: hangar.server.url,
      graphId: "chat",
      threadId: randomUUID(),
    });
    const userId = randomUUID();
    agent.addMessage({ id: userId, role: "user", content: "Hello there" });
    const events = await runCollecting(agent);

    expect(outline(events)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED:agent",
      "STATE_SNAPSHOT",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STATE_SNAPSHOT",
      "STEP_FINISHED:agent",
      "STATE_SNAPSHOT",
      "MESSAGES_SNAPSHOT",
      "RUN_FINISHED",
    ]);
    // The server's stream events reach the client too (`events` stream mode), the node's among them.
    const raw = ofType(events, "RAW").map((e) => (e as { event?: { event?: string; name?: string } }).event);
    expect(raw).toContainEqual(expect.objectContaining({ event: "on_chain_start", name: "agent" }));
    expect(raw).toContainEqual(expect.objectContaining({ event: "on_chat_model_stream" }));

    const thread = await settled(agent.threadId, "idle");
    const values = thread.values as { messages: { id: string; type: string; content: string }[] };
    expect(values.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(values.messages[0]).toMatchObject({ id: userId, content: "Hello there" });
    const reply = values.messages[1];
    expect(reply.content).not.toBe("");
    // Token by token, the deltas make up the reply the thread saved, under the id the thread gave it.
    const [start] = ofType(events, "TEXT_MESSAGE_START") as { messageId?: string }[];
    expect(start.messageId).toBe(reply.id);
    expect(
      ofType(events, "TEXT_MESSAGE_CONTENT")
        .map((e) => e.delta)
        .join(""),
    ).toBe(reply.content);
    expect(ofType(events, "MESSAGES_SNAPSHOT").at(-1)!.messages).toEqual([
      expect.objectContaining({ id: userId, role: "user", content: "Hello there" }),
      expect.objectContaining({ id: reply.id, role: "assistant", content: reply.content }),
    ]);
    expect(agent.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "Hello there"],
      ["assistant", reply.content],
    ]);
    const [finished] = ofType(events, "RUN_FINISHED");
    const runs = await hangar.client.runs.list(agent.threadId);
    expect(runs.map((r) => [r.run_id, r.status])).toEqual([[finished.runId, "success"]]);
  });

  it("surfaces the approval's interrupt and resumes it as CopilotKit does, input beside the command", async () => {
    // Every request the adapter makes, through the official SDK's own hook (the adapter takes a ready client).
    const sent: Sent[] = [];
    const client = new Client({
      apiUrl: hangar.server.url,
      onRequest: (url, init) => {
        const body =
          typeof init.body === "string" ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
        sent.push({ method: init.method ?? "GET", path: url.pathname, body });
        return init;
      },
    });
    const agent = new LangGraphAgent({
      deploymentUrl: hangar.server.url,
      graphId: "approval",
      client,
      threadId: randomUUID(),
      initialState: { request: "a new roof" },
    });
    const threadId = agent.threadId;
    const runPath = `/threads/${threadId}/runs/stream`;

    // First run: up to the interrupt, announced by the adapter's `on_interrupt` custom event (what
    // CopilotKit's useInterrupt / useLangGraphInterrupt listen to), then a plain RUN_FINISHED.
    const first = await runCollecting(agent);
    expect(outline(first)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED:write_draft",
      "STATE_SNAPSHOT",
      "STEP_FINISHED:write_draft",
      "STEP_STARTED:review",
      "STATE_SNAPSHOT",
      "STEP_FINISHED:review",
      "STATE_SNAPSHOT",
      "MESSAGES_SNAPSHOT",
      "CUSTOM:on_interrupt",
      "RUN_FINISHED",
    ]);
    const interrupted = await settled(threadId, "interrupted");
    const pending = Object.values(interrupted.interrupts).flat();
    expect(pending).toHaveLength(1);
    const question = { question: "Approve this draft?", draft: "Proposal: a new roof" };
    const [onInterrupt] = ofType(first, "CUSTOM");
    expect(JSON.parse(onInterrupt.value as string)).toEqual(question);
    expect(onInterrupt.rawEvent).toEqual({ id: pending[0].id, value: question });
    expect(ofType(first, "RUN_FINISHED")[0].outcome).toBeUndefined();
    expect(ofType(first, "STATE_SNAPSHOT").at(-1)!.snapshot).toEqual({
      request: "a new roof",
      draft: "Proposal: a new roof",
    });
    expect(agent.state).toEqual({ request: "a new roof", draft: "Proposal: a new roof" });

    // The answer, as CopilotKit's interrupt hooks give it: a new run with forwardedProps.command.resume.
    const before = sent.length;
    const second = await runCollecting(agent, { forwardedProps: { command: { resume: "approved" } } });
    const resumes = sent.slice(before).filter((s) => s.method === "POST" && s.path === runPath);
    expect(resumes).toHaveLength(1);
    // What the adapter sends: the resume, and beside it the graph's input keys of the state it holds (with the
    // adapter's own `messages` and `tools`). The official server runs the command and ignores that input.
    expect(resumes[0].body).toMatchObject({
      command: { resume: "approved" },
      input: { request: "a new roof", draft: "Proposal: a new roof", messages: [], tools: [] },
      stream_mode: ["events", "values", "updates", "messages-tuple"],
    });
    expect(outline(second)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED:review",
      "STATE_SNAPSHOT",
      "STEP_FINISHED:review",
      "STATE_SNAPSHOT",
      "MESSAGES_SNAPSHOT",
      "RUN_FINISHED",
    ]);
    expect(ofType(second, "RUN_ERROR")).toEqual([]);
    expect(ofType(second, "CUSTOM")).toEqual([]);
    const decided = { request: "a new roof", draft: "Proposal: a new roof", decision: "approved" };
    expect(ofType(second, "STATE_SNAPSHOT").at(-1)!.snapshot).toEqual(decided);
    expect(agent.state).toEqual(decided);

    // The thread ends as on the official server: idle, nothing pending, the decision applied once.
    const done = await settled(threadId, "idle");
    expect(done.values).toEqual(decided);
    expect(done.interrupts).toEqual({});
    const state = await hangar.client.threads.getState(threadId);
    expect(state.next).toEqual([]);
    expect(state.tasks).toEqual([]);
    const history = await hangar.client.threads.getHistory(threadId);
    expect(history.map((s) => s.next)).toEqual([[], ["review"], ["write_draft"], ["__start__"]]);
    // Two runs, both successful, the ones the adapter reported finished.
    const runs = await hangar.client.runs.list(threadId);
    const finished = [...first, ...second].filter((e) => e.type === "RUN_FINISHED").map((e) => e.runId);
    expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
    expect(runs.map((r) => r.run_id).sort()).toEqual([...finished].sort());
  });
});
