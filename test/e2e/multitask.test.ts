// End-to-end: one run at a time per thread and `multitask_strategy` (reject, enqueue, interrupt, rollback)
// for a new run on a busy thread, through the official SDK against `hangar dev`.
import { describe, expect, it } from "vitest";
import { httpError } from "../helpers/http.ts";
import {
  type StepsValues,
  isGone,
  job,
  joinValues,
  startHeld,
  useRunsProject,
  valuesWithin,
  waitFor,
  within,
} from "../helpers/runs.ts";

const { hangar, scratch } = useRunsProject();

/** Checkpoint ids of the thread's whole history, newest first. */
async function historyIds(threadId: string): Promise<string[]> {
  const history = await hangar.client.threads.getHistory(threadId, { limit: 1000 });
  return history.map((s) => s.checkpoint.checkpoint_id!);
}

describe("multitask strategies on a busy thread", () => {
  it("reject: a second run is refused with 409 while the first runs", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const first = await startHeld(client, thread_id, "r", 1, gate.file);

    const created = await httpError(
      client.runs.create(thread_id, "steps", {
        input: job({ label: "no", steps: 1 }),
        multitaskStrategy: "reject",
      }),
    );
    expect(created.status).toBe(409);
    expect(typeof created.body.detail).toBe("string");
    const waited = await httpError(
      client.runs.wait(thread_id, "steps", {
        input: job({ label: "no", steps: 1 }),
        multitaskStrategy: "reject",
      }),
    );
    expect(waited.status).toBe(409);

    gate.open();
    const out = await joinValues(client, thread_id, first.run_id);
    expect(out.log).toEqual(["r:0", "r:1", "r:2", "r:3"]);
    // The refused runs left no record.
    expect((await client.runs.list(thread_id)).map((r) => r.run_id)).toEqual([first.run_id]);
  });

  it("reject: an idle thread accepts the run", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const out = await valuesWithin(
      "wait",
      hangar.client.runs.wait(thread_id, "steps", {
        input: job({ label: "ok", steps: 1 }),
        multitaskStrategy: "reject",
      }),
    );
    expect(out.log).toEqual(["ok:0"]);
  });

  it("enqueue (the default): later runs wait and run after, in order", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const first = await startHeld(client, thread_id, "e", 1, gate.file);
    const second = await client.runs.create(thread_id, "steps", { input: job({ label: "f", steps: 1 }) });
    const third = await client.runs.create(thread_id, "steps", {
      input: job({ label: "g", steps: 1 }),
      multitaskStrategy: "enqueue",
    });
    expect(second.status).toBe("pending");
    expect(third.status).toBe("pending");
    expect((await client.runs.get(thread_id, first.run_id)).status).toBe("running");

    gate.open();
    const out = await joinValues(client, thread_id, third.run_id);
    expect(out.log).toEqual(["e:0", "e:1", "e:2", "e:3", "f:0", "g:0"]);
    for (const r of [first, second, third]) {
      expect((await client.runs.get(thread_id, r.run_id)).status).toBe("success");
    }
  });

  it("interrupt: the running run stops, keeps its completed steps in history, and the new one runs", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const first = await startHeld(client, thread_id, "a", 2);

    const second = await client.runs.create(thread_id, "steps", {
      input: job({ label: "b", steps: 2, delay_ms: 1 }),
      multitaskStrategy: "interrupt",
    });
    const out = await joinValues(client, thread_id, second.run_id, "join of the interrupting run");
    // The interrupted run's two completed steps stay; its held step never completed.
    expect(out.log).toEqual(["a:0", "a:1", "b:0", "b:1"]);
    expect((await client.runs.get(thread_id, first.run_id)).status).toBe("interrupted");
    expect((await client.runs.get(thread_id, second.run_id)).status).toBe("success");
    expect((await client.threads.get(thread_id)).status).toBe("idle");

    const history = await client.threads.getHistory<StepsValues>(thread_id, { limit: 1000 });
    const ofFirst = history.filter((s) => s.metadata?.run_id === first.run_id);
    const logs = ofFirst.map((s) => JSON.stringify(s.values.log ?? []));
    expect(logs).toContain(JSON.stringify(["a:0"]));
    expect(logs).toContain(JSON.stringify(["a:0", "a:1"]));
  });

  it("rollback: the running run is deleted and history is as it was before it", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    await within(
      "the first run",
      client.runs.wait(thread_id, "steps", { input: job({ label: "p", steps: 2, delay_ms: 1 }) }),
    );
    const before = await historyIds(thread_id);
    expect(before.length).toBeGreaterThan(0);

    const doomed = await startHeld(client, thread_id, "x", 2);
    expect((await historyIds(thread_id)).length).toBeGreaterThan(before.length);

    const next = await client.runs.create(thread_id, "steps", {
      input: job({ label: "n", steps: 1 }),
      multitaskStrategy: "rollback",
    });
    const out = await joinValues(client, thread_id, next.run_id, "join of the new run");
    expect(out.log).toEqual(["p:0", "p:1", "n:0"]);

    // The rolled-back run is gone, and so are its checkpoints.
    await waitFor("the rolled-back run to be deleted", () =>
      isGone(client.runs.get(thread_id, doomed.run_id)),
    );
    expect((await client.runs.list(thread_id)).map((r) => r.run_id)).not.toContain(doomed.run_id);
    const history = await client.threads.getHistory(thread_id, { limit: 1000 });
    expect(history.filter((s) => s.metadata?.run_id === doomed.run_id)).toEqual([]);
    const withoutNew = history
      .filter((s) => s.metadata?.run_id !== next.run_id)
      .map((s) => s.checkpoint.checkpoint_id);
    expect(withoutNew).toEqual(before);
    expect((await client.threads.get(thread_id)).status).toBe("idle");
  });
});
