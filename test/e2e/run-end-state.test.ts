// End-to-end: the thread's state a run records at its end (the thread's values, interrupts and status, and the
// `state_update` event of its thread stream) is the state GET /threads/{id}/state reads back from the checkpoints,
// field for field (but what only a read adds). Today a run reads it back itself (graph.getState, a cost that grows
// with the thread); this pins what a cheaper way (from the run's own stream, as the official server does) must
// give. The example project's graphs: chat (messages, three turns), research (a subgraph, parallel nodes), approval
// (an interrupt, then its resume); on both backends, with durability "async" and "exit".
import { afterEach, describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { SseReader, within } from "../helpers/runs.ts";

const hangar = useHangar();

const open: SseReader[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.close();
});

async function getJson(path: string): Promise<any> {
  const res = await fetch(`${hangar.server.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

/**
 * Runs `body` on the thread (runs/wait) with a thread stream open for `state_update`; returns the state the run
 * recorded (its state_update, without `run_id`).
 */
async function recordedState(threadId: string, body: Record<string, unknown>): Promise<any> {
  const stream = await SseReader.open(
    hangar.server.url,
    `/threads/${threadId}/stream?stream_modes=state_update`,
  );
  open.push(stream);
  expect(stream.status).toBe(200);
  const res = await fetch(`${hangar.server.url}/threads/${threadId}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json", prefer: "" },
    body: JSON.stringify(body),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const runId = res.headers.get("content-location")?.split("/").at(-1);
  expect(runId, "the run's id (Content-Location)").toBeTruthy();
  const events = await stream.until(
    "the run's state_update",
    (e) => e.event === "state_update" && (e.data as any)?.run_id === runId,
  );
  const { run_id: _r, ...state } = events.at(-1)!.data as Record<string, unknown>;
  return state;
}

/** The recorded state equals the one read back; the thread record holds its values, interrupts and status. */
async function expectRecordedAsRead(threadId: string, recorded: any, status: string): Promise<void> {
  const read = await getJson(`/threads/${threadId}/state`);
  // What only a state read adds: `metadata.writes` (read from the checkpoint before, as LangGraph once recorded
  // it), and the root's empty `checkpoint_ns` left out (src/runs/thread-state.ts).
  const { writes: _w, ...readMetadata } = read.metadata;
  const { checkpoint_ns: ns, ...recordedMetadata } = recorded.metadata;
  expect(ns ?? "").toBe("");
  expect({ ...recorded, metadata: recordedMetadata }).toEqual({ ...read, metadata: readMetadata });
  const thread = await getJson(`/threads/${threadId}`);
  expect(thread.values).toEqual(read.values);
  expect(thread.status).toBe(status);
  const byTask: Record<string, unknown[]> = {};
  for (const t of read.tasks) if (t.interrupts.length) byTask[t.id] = t.interrupts;
  expect(thread.interrupts).toEqual(byTask);
}

describe.each([
  ["async", undefined],
  ["exit", "exit"],
])("the state a run records at its end is the state read back (durability %s)", (_name, durability) => {
  const extra = durability ? { durability } : {};

  it("chat: three turns on one thread, each state as read back", async () => {
    const { thread_id } = await hangar.client.threads.create();
    for (const [turn, text] of ["hello", "and again", "once more"].entries()) {
      const recorded = await within(
        `the turn "${text}"`,
        recordedState(thread_id, {
          assistant_id: "chat",
          input: { messages: [{ role: "user", content: text }] },
          ...extra,
        }),
      );
      await expectRecordedAsRead(thread_id, recorded, "idle");
      expect(recorded.next).toEqual([]);
      expect(recorded.values.messages.at(-2).content).toBe(text);
      // Each turn's checkpoint follows the last one (with durability "exit", the first has none before it).
      if (turn > 0 || !durability) expect(recorded.parent_checkpoint_id).not.toBeNull();
    }
  });

  it("research: a graph with a subgraph and parallel nodes", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const recorded = await recordedState(thread_id, {
      assistant_id: "research",
      input: { topic: "checkpoints" },
      ...extra,
    });
    await expectRecordedAsRead(thread_id, recorded, "idle");
  });

  it("approval: paused at its interrupt (read back), then resumed to its end", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const paused = await recordedState(thread_id, {
      assistant_id: "approval",
      input: { request: "a plan" },
      ...extra,
    });
    await expectRecordedAsRead(thread_id, paused, "interrupted");
    expect(paused.next).toEqual(["review"]);
    expect(paused.interrupts).toHaveLength(1);

    const done = await recordedState(thread_id, {
      assistant_id: "approval",
      command: { resume: "approved" },
      ...extra,
    });
    await expectRecordedAsRead(thread_id, done, "idle");
    expect(done.values.decision).toBe("approved");
  });
});

describe("a graph with input and output schemas", () => {
  // Its run's answer is its last values event, whose channels are the state's (LangGraph's values stream: only
  // invoke() narrows to the output schema; the official dev server answers the same, differential.test's "runs"
  // scenario), and the end state the run recorded is the one read back.
  const annotated = useHangar({ config: "test/fixtures/schemas-project/langgraph.json" });

  it("the run answers its last values, the thread records its whole state, as read back", async () => {
    const { thread_id } = await annotated.client.threads.create();
    const res = await fetch(`${annotated.server.url}/threads/${thread_id}/runs/wait`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        assistant_id: "annotated",
        input: { messages: [{ role: "user", content: "hi" }], topic: "tea" },
      }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const output = await res.json();
    const read = await (await fetch(`${annotated.server.url}/threads/${thread_id}/state`)).json();
    expect(read.values).toMatchObject({ topic: "tea", count: 1, tags: ["tea"], done: true });
    expect(output).toEqual(read.values);
    const thread = await annotated.client.threads.get(thread_id);
    expect(thread.values).toEqual(read.values);
    expect(thread.status).toBe("idle");
  });
});
