// End-to-end: human-in-the-loop with the `approval` example (interrupt(), Command resume/update/goto), against `hangar dev`.
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { collect } from "../helpers/sse.ts";

interface ApprovalValues {
  request: string;
  draft?: string;
  decision?: string;
}

const QUESTION = "Approve this draft?";

const hangar = useHangar();

/** Starts the approval graph on a new thread and returns once it is paused at `review`. */
async function pausedThread(request: string): Promise<string> {
  const { thread_id } = await hangar.client.threads.create();
  await hangar.client.runs.wait(thread_id, "approval", { input: { request } });
  expect((await hangar.client.threads.get(thread_id)).status).toBe("interrupted");
  return thread_id;
}

describe("interrupts", () => {
  it("stops at interrupt(): the stream shows it, the state and thread hold it", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const events = await collect(
      hangar.client.runs.stream(thread_id, "approval", {
        input: { request: "buy a boat" },
        streamMode: ["updates", "values"],
      }),
    );
    expect(events[0].event).toBe("metadata");
    expect(events.some((e) => e.event === "error")).toBe(false);

    const updates = events.filter((e) => e.event === "updates");
    // First the draft node's update, then the interrupt.
    expect(Object.values(updates[0].data)).toEqual([{ draft: "Proposal: buy a boat" }]);
    const interruptEvent = updates.find((e) => "__interrupt__" in e.data);
    expect(interruptEvent).toBeDefined();
    const streamed = interruptEvent!.data.__interrupt__;
    expect(streamed).toHaveLength(1);
    expect(streamed[0].value).toEqual({ question: QUESTION, draft: "Proposal: buy a boat" });
    expect(typeof streamed[0].id).toBe("string");
    expect(updates.some((e) => "review" in e.data)).toBe(false);

    const state = await hangar.client.threads.getState<ApprovalValues>(thread_id);
    expect(state.next).toEqual(["review"]);
    expect(state.values).toEqual({ request: "buy a boat", draft: "Proposal: buy a boat" });
    expect(state.tasks).toHaveLength(1);
    expect(state.tasks[0].name).toBe("review");
    expect(state.tasks[0].interrupts).toHaveLength(1);
    expect(state.tasks[0].interrupts[0].value).toEqual({ question: QUESTION, draft: "Proposal: buy a boat" });
    expect(state.tasks[0].interrupts[0].id).toBe(streamed[0].id);

    const thread = await hangar.client.threads.get(thread_id);
    expect(thread.status).toBe("interrupted");
    const threadInterrupts = Object.values(thread.interrupts ?? {}).flat();
    expect(threadInterrupts.map((i) => i.value)).toEqual([
      { question: QUESTION, draft: "Proposal: buy a boat" },
    ]);
  });

  it("runs/wait on an interrupting run returns the interrupt", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const out = (await hangar.client.runs.wait(thread_id, "approval", { input: { request: "a bike" } })) as {
      __interrupt__?: Array<{ value: unknown }>;
    };
    expect(out.__interrupt__).toBeDefined();
    expect(out.__interrupt__![0].value).toEqual({ question: QUESTION, draft: "Proposal: a bike" });
  });

  it("resumes with command {resume}: decision recorded, thread idle", async () => {
    const threadId = await pausedThread("buy a boat");
    const events = await collect(
      hangar.client.runs.stream(threadId, "approval", {
        command: { resume: "approved" },
        streamMode: ["updates", "values"],
      }),
    );
    expect(events[0].event).toBe("metadata");
    expect(events.some((e) => e.event === "error")).toBe(false);
    const updates = events.filter((e) => e.event === "updates").map((e) => e.data);
    expect(updates).toEqual([{ review: { decision: "approved" } }]);
    const values = events.filter((e) => e.event === "values");
    expect(values[values.length - 1].data).toEqual({
      request: "buy a boat",
      draft: "Proposal: buy a boat",
      decision: "approved",
    });

    const state = await hangar.client.threads.getState<ApprovalValues>(threadId);
    expect(state.values.decision).toBe("approved");
    expect(state.next).toEqual([]);
    expect(state.tasks).toEqual([]);
    const thread = await hangar.client.threads.get(threadId);
    expect(thread.status).toBe("idle");
    expect(Object.values(thread.interrupts ?? {}).flat()).toEqual([]);
  });

  it("resume value can be any JSON (the graph stringifies objects)", async () => {
    const threadId = await pausedThread("paint the shed");
    const out = (await hangar.client.runs.wait(threadId, "approval", {
      command: { resume: { ok: false, reason: "too red" } },
    })) as unknown as ApprovalValues;
    expect(out.decision).toBe(JSON.stringify({ ok: false, reason: "too red" }));
  });

  it("command.update changes state while resuming", async () => {
    const threadId = await pausedThread("buy a boat");
    const out = (await hangar.client.runs.wait(threadId, "approval", {
      command: { resume: "ok", update: { request: "buy a car" } },
    })) as unknown as ApprovalValues;
    expect(out).toEqual({ request: "buy a car", draft: "Proposal: buy a boat", decision: "ok" });
    expect((await hangar.client.threads.get(threadId)).status).toBe("idle");
  });

  it("command.goto (with update) sends a finished thread back to review", async () => {
    const threadId = await pausedThread("buy a boat");
    await hangar.client.runs.wait(threadId, "approval", { command: { resume: "approved" } });
    expect((await hangar.client.threads.get(threadId)).status).toBe("idle");

    const events = await collect(
      hangar.client.runs.stream(threadId, "approval", {
        command: { goto: "review", update: { draft: "Edited by hand" } },
        streamMode: "updates",
      }),
    );
    const updates = events.filter((e) => e.event === "updates").map((e) => e.data);
    // Only review ran (the draft node did not), and it paused on the edited draft.
    expect(updates).toHaveLength(1);
    expect(updates[0].__interrupt__[0].value).toEqual({ question: QUESTION, draft: "Edited by hand" });
    const state = await hangar.client.threads.getState<ApprovalValues>(threadId);
    expect(state.next).toEqual(["review"]);
    expect(state.values.draft).toBe("Edited by hand");
    expect((await hangar.client.threads.get(threadId)).status).toBe("interrupted");

    const done = (await hangar.client.runs.wait(threadId, "approval", {
      command: { resume: "rejected" },
    })) as unknown as ApprovalValues;
    expect(done).toEqual({ request: "buy a boat", draft: "Edited by hand", decision: "rejected" });
    expect((await hangar.client.threads.get(threadId)).status).toBe("idle");
  });

  it("a run queued on an interrupted thread and cancelled before it starts: the thread is interrupted again", async () => {
    const threadId = await pausedThread("a queued resume");
    // Delayed, so it is still waiting when it is cancelled; the thread is busy meanwhile.
    const queued = await hangar.client.runs.create(threadId, "approval", {
      command: { resume: "approved" },
      afterSeconds: 3600,
    });
    expect((await hangar.client.threads.get(threadId)).status).toBe("busy");
    await hangar.client.runs.cancel(threadId, queued.run_id);
    expect((await hangar.client.runs.get(threadId, queued.run_id)).status).toBe("interrupted");
    const thread = await hangar.client.threads.get(threadId);
    expect(thread.status).toBe("interrupted");
    expect(Object.values(thread.interrupts ?? {}).flat()).toHaveLength(1);
    expect((await hangar.client.threads.getState(threadId)).next).toEqual(["review"]);
  });

  it("interrupt_after pauses after a node; the next run continues to the interrupt", async () => {
    const { thread_id } = await hangar.client.threads.create();
    await hangar.client.runs.wait(thread_id, "approval", {
      input: { request: "a plan" },
      interruptAfter: "*",
    });
    const first = await hangar.client.threads.getState<ApprovalValues>(thread_id);
    expect(first.next).toEqual(["review"]);
    expect(first.values).toEqual({ request: "a plan", draft: "Proposal: a plan" });
    expect(first.tasks[0].interrupts).toEqual([]);
    expect((await hangar.client.threads.get(thread_id)).status).toBe("interrupted");

    await hangar.client.runs.wait(thread_id, "approval", { input: null });
    const second = await hangar.client.threads.getState<ApprovalValues>(thread_id);
    expect(second.next).toEqual(["review"]);
    expect(second.tasks[0].interrupts[0].value).toEqual({ question: QUESTION, draft: "Proposal: a plan" });
  });
});
