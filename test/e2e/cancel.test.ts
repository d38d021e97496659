// End-to-end: cancelling runs (POST /threads/{id}/runs/{run_id}/cancel with wait and action, POST /runs/cancel)
// and `on_disconnect` of streamed runs, through the official SDK against `hangar dev`.
import { describe, expect, it } from "vitest";
import { httpError } from "../helpers/http.ts";
import {
  isGone,
  iteratorOf,
  job,
  joinValues,
  logNow,
  readUntil,
  startHeld,
  useRunsProject,
  valuesWithin,
  waitFor,
  waitForStatus,
  waitForThreadStatus,
  within,
} from "../helpers/runs.ts";

const { hangar, scratch } = useRunsProject();

/** Waits until every run of `runIds` is interrupted and the thread idle; expects the thread's log then. */
async function expectStopped(threadId: string, runIds: string[], log: string[]) {
  for (const runId of runIds) await waitForStatus(hangar.client, threadId, runId, ["interrupted"]);
  await waitForThreadStatus(hangar.client, threadId, "idle");
  expect(await logNow(hangar.client, threadId)).toEqual(log);
}

describe("cancel a run", () => {
  it("a cancelled pending run never starts", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const first = await startHeld(client, thread_id, "c", 1, gate.file);
    const queued = await client.runs.create(thread_id, "steps", { input: job({ label: "never", steps: 2 }) });
    expect(queued.status).toBe("pending");

    await client.runs.cancel(thread_id, queued.run_id);
    await waitForStatus(client, thread_id, queued.run_id, ["interrupted"]);

    gate.open();
    const out = await joinValues(client, thread_id, first.run_id, "join of the first run");
    expect(out.log).toEqual(["c:0", "c:1", "c:2", "c:3"]);
    expect((await client.runs.get(thread_id, first.run_id)).status).toBe("success");
    expect((await client.threads.get(thread_id)).status).toBe("idle");
    // Still not started once the thread is free.
    expect((await client.runs.get(thread_id, queued.run_id)).status).toBe("interrupted");
    expect((await logNow(client, thread_id)).filter((l) => l.startsWith("never"))).toEqual([]);
  });

  it("wait=true returns once a running run stopped: run interrupted, thread idle, within one step", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const run = await startHeld(client, thread_id, "w", 2);

    await within("cancel with wait=true", client.runs.cancel(thread_id, run.run_id, true));
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("interrupted");
    expect((await client.threads.get(thread_id)).status).toBe("idle");
    const log = await logNow(client, thread_id);
    // The two completed steps are kept; the step in flight (held) never completed and none after it ran.
    expect(log.slice(0, 2)).toEqual(["w:0", "w:1"]);
    expect(log.length).toBeLessThanOrEqual(3);
    // The thread takes new runs.
    const out = await valuesWithin(
      "a run after the cancel",
      client.runs.wait(thread_id, "steps", { input: job({ label: "z", steps: 1 }) }),
    );
    expect(out.log).toEqual([...log, "z:0"]);
  });

  it("join of a cancelled run returns once it stopped", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const run = await startHeld(client, thread_id, "j", 1);
    const joined = client.runs.join(thread_id, run.run_id);
    await client.runs.cancel(thread_id, run.run_id);
    await within("join of the cancelled run", joined);
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("interrupted");
  });

  it("action rollback deletes the run and restores the history before it", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    await within(
      "the first run",
      client.runs.wait(thread_id, "steps", { input: job({ label: "p", steps: 1 }) }),
    );
    const before = (await client.threads.getHistory(thread_id, { limit: 1000 })).map(
      (s) => s.checkpoint.checkpoint_id,
    );
    const run = await startHeld(client, thread_id, "rb", 2);

    await within("cancel with rollback", client.runs.cancel(thread_id, run.run_id, true, "rollback"));
    await waitFor("the rolled-back run to be deleted", () => isGone(client.runs.get(thread_id, run.run_id)));
    const after = (await client.threads.getHistory(thread_id, { limit: 1000 })).map(
      (s) => s.checkpoint.checkpoint_id,
    );
    expect(after).toEqual(before);
    expect(await logNow(client, thread_id)).toEqual(["p:0"]);
    await waitForThreadStatus(client, thread_id, "idle");
  });

  it("cancel of an unknown run is 404", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const err = await httpError(hangar.client.runs.cancel(thread_id, "00000000-0000-4000-8000-000000000000"));
    expect(err.status).toBe(404);
  });
});

describe("POST /runs/cancel", () => {
  it("with nothing naming the runs ({} or empty run_ids) is a 422 naming the fields", async () => {
    for (const body of [{}, { run_ids: [] }]) {
      const res = await fetch(`${hangar.server.url}/runs/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      expect(res.status, JSON.stringify(body)).toBe(422);
      const { detail } = await res.json();
      expect(detail).toBe("give run_ids, a status, or a thread_id to say which runs to cancel");
    }
    const err = await httpError(hangar.client.runs.cancelMany({}));
    expect(err.status).toBe(422);
    expect(err.body.detail).toMatch(/run_ids.*status.*thread_id/);
  });

  it("cancels runs by id: the running one stops, the pending one never starts", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const running = await startHeld(client, thread_id, "m", 1);
    const pending = await client.runs.create(thread_id, "steps", { input: job({ label: "mp", steps: 1 }) });
    expect(pending.status).toBe("pending");

    await client.runs.cancelMany({ threadId: thread_id, runIds: [running.run_id, pending.run_id] });
    await expectStopped(thread_id, [running.run_id, pending.run_id], ["m:0"]);
  });

  it("the running run stopped first, then the waiting one cancelled: the thread is idle, not interrupted", async () => {
    // The running run's end finds a run waiting (delayed, so no worker takes it) and keeps the thread busy; the
    // waiting run's cancel then settles the thread. Its state has a node to run next (the step the cancel cut
    // short), yet the thread's last run was cancelled, not interrupted by the graph: idle, as if nothing had
    // waited. (The order a cancel of both can take when the running run's end is recorded first.)
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const running = await startHeld(client, thread_id, "o", 1);
    const delayed = await client.runs.create(thread_id, "steps", {
      input: job({ label: "od", steps: 1 }),
      afterSeconds: 3600,
    });
    await within("cancel with wait=true", client.runs.cancel(thread_id, running.run_id, true));
    expect((await client.threads.get(thread_id)).status).toBe("busy");
    expect((await client.threads.getState(thread_id)).next.length).toBeGreaterThan(0);

    await client.runs.cancel(thread_id, delayed.run_id);
    await waitForStatus(client, thread_id, delayed.run_id, ["interrupted"]);
    expect((await client.threads.get(thread_id)).status).toBe("idle");
    expect(await logNow(client, thread_id)).toEqual(["o:0"]);
  });

  it("cancels by status: pending runs are cancelled, the running one goes on", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const running = await startHeld(client, thread_id, "s", 1, gate.file);
    const pending = await client.runs.create(thread_id, "steps", { input: job({ label: "sp", steps: 1 }) });

    await client.runs.cancelMany({ status: "pending" });
    await waitForStatus(client, thread_id, pending.run_id, ["interrupted"]);
    expect((await client.runs.get(thread_id, running.run_id)).status).toBe("running");

    gate.open();
    const out = await joinValues(client, thread_id, running.run_id, "join of the running run");
    expect(out.log).toEqual(["s:0", "s:1", "s:2", "s:3"]);
    expect((await client.runs.get(thread_id, pending.run_id)).status).toBe("interrupted");
  });
});

describe("on_disconnect of a streamed run", () => {
  /** Streams a run that holds after one step; returns its run id once the first step's update arrived. */
  async function streamThenDrop(
    threadId: string,
    label: string,
    onDisconnect: "cancel" | "continue",
    gate?: string,
  ) {
    const ac = new AbortController();
    const stream = hangar.client.runs.stream(threadId, "steps", {
      input: job({ label, steps: 3, delay_ms: 1, hold_at: 1, gate_file: gate ?? null }),
      streamMode: ["updates"],
      onDisconnect,
      signal: ac.signal,
    });
    const iterator = iteratorOf(stream);
    const seen = await readUntil(
      "the first step's update",
      iterator,
      (part) => part.event === "updates" && JSON.stringify(part.data).includes(`${label}:0`),
    );
    const meta = seen.find((p) => p.event === "metadata");
    expect(meta, "the first event is metadata").toBe(seen[0]);
    const runId = (meta!.data as { run_id: string }).run_id;
    // The client goes away.
    ac.abort();
    await iterator.return?.(undefined).catch(() => undefined);
    return runId;
  }

  it('"cancel": the run is cancelled when the client goes away and the thread is idle', async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const runId = await streamThenDrop(thread_id, "dc", "cancel");
    await expectStopped(thread_id, [runId], ["dc:0"]);
  });

  it('"continue": the run goes on after the client went away and finishes', async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const runId = await streamThenDrop(thread_id, "dk", "continue", gate.file);
    expect((await client.runs.get(thread_id, runId)).status).toBe("running");
    gate.open();
    const out = await joinValues(client, thread_id, runId);
    expect(out.log).toEqual(["dk:0", "dk:1", "dk:2"]);
    expect((await client.runs.get(thread_id, runId)).status).toBe("success");
  });
});
