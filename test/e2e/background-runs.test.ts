// End-to-end: background runs (POST /threads/{id}/runs, POST /runs, /runs/batch), join, the run queue's
// order and statuses, and DELETE of a run, through the official SDK against `hangar dev`.
import { describe, expect, it } from "vitest";
import { httpError, postJson } from "../helpers/http.ts";
import {
  type StepsValues,
  isGone,
  job,
  joinValues,
  logOf,
  markerLines,
  startHeld,
  useRunsProject,
  valuesWithin,
  waitFor,
  waitForStatus,
  waitForThreadStatus,
  within,
} from "../helpers/runs.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const { hangar, scratch } = useRunsProject();

describe("background runs on a thread", () => {
  it("POST /threads/{id}/runs returns a pending or running run; join returns the final values", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "a", steps: 3, delay_ms: 5 }),
      metadata: { purpose: "background" },
    });
    expect(run.run_id).toMatch(UUID);
    expect(run.thread_id).toBe(thread_id);
    expect(["pending", "running"]).toContain(run.status);
    expect(run.metadata).toMatchObject({ purpose: "background" });

    const out = await joinValues(client, thread_id, run.run_id);
    expect(out.log).toEqual(logOf("a", 3));

    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("success");
    expect((await client.threads.get(thread_id)).status).toBe("idle");
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual(logOf("a", 3));
    // Joining a finished run answers with its values at once.
    expect(((await client.runs.join(thread_id, run.run_id)) as unknown as StepsValues).log).toEqual(
      logOf("a", 3),
    );
  });

  it("answers with Content-Location naming the run", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const res = await postJson(hangar.server.url, `/threads/${thread_id}/runs`, {
      assistant_id: "steps",
      input: job({ label: "loc", steps: 1 }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-location")).toBe(`/threads/${thread_id}/runs/${res.body.run_id}`);
    expect(res.body.status === "pending" || res.body.status === "running").toBe(true);
    await within("join", hangar.client.runs.join(thread_id, res.body.run_id));
  });

  it("join of a failing run returns {__error__}", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "f", steps: 3, fail_at: 1 }),
    });
    const out = await joinValues(client, thread_id, run.run_id);
    expect(out.__error__, `join answered ${JSON.stringify(out)}`).toBeDefined();
    expect(typeof out.__error__!.error).toBe("string");
    expect(out.__error__!.message).toContain("failed on purpose");
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("error");
    expect((await client.threads.get(thread_id)).status).toBe("error");
    // The step before the failure is kept.
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual(["f:0"]);
  });

  it("join of an unknown run is 404", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const err = await httpError(hangar.client.runs.join(thread_id, "00000000-0000-4000-8000-000000000000"));
    expect(err.status).toBe(404);
  });

  it("run statuses progress pending → running → success", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate1 = scratch.gate();
    const gate2 = scratch.gate();
    const first = await client.runs.create(thread_id, "steps", {
      input: job({ label: "p1", steps: 1, hold_at: 0, gate_file: gate1.file }),
    });
    await waitForStatus(client, thread_id, first.run_id, ["running"]);
    const second = await client.runs.create(thread_id, "steps", {
      input: job({ label: "p2", steps: 1, hold_at: 0, gate_file: gate2.file }),
    });
    // The thread is busy: the second run waits in the queue.
    expect(second.status).toBe("pending");
    expect((await client.runs.get(thread_id, second.run_id)).status).toBe("pending");
    expect((await client.threads.get(thread_id)).status).toBe("busy");

    gate1.open();
    await within("join of the first run", client.runs.join(thread_id, first.run_id));
    expect((await client.runs.get(thread_id, first.run_id)).status).toBe("success");
    await waitForStatus(client, thread_id, second.run_id, ["running"]);

    gate2.open();
    const out = await joinValues(client, thread_id, second.run_id, "join of the second run");
    expect(out.log).toEqual(["p1:0", "p2:0"]);
    expect((await client.runs.get(thread_id, second.run_id)).status).toBe("success");
    expect((await client.threads.get(thread_id)).status).toBe("idle");
  });

  it("20 runs enqueued on one thread finish in creation order", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    // The first run holds the thread until every other run is queued behind it.
    const ids: string[] = [];
    const first = await client.runs.create(thread_id, "steps", {
      input: job({ label: "q0", steps: 1, hold_at: 0, gate_file: gate.file }),
    });
    ids.push(first.run_id);
    for (let i = 1; i < 20; i++) {
      const run = await client.runs.create(thread_id, "steps", {
        input: job({ label: `q${i}`, steps: 1, delay_ms: 1 }),
      });
      expect(run.status).toBe("pending");
      ids.push(run.run_id);
    }
    gate.open();
    const out = await joinValues(client, thread_id, ids[19], "join of the last run");
    expect(out.log).toEqual(Array.from({ length: 20 }, (_, i) => `q${i}:0`));
    for (const id of ids) expect((await client.runs.get(thread_id, id)).status).toBe("success");
    const listed = await client.runs.list(thread_id, { limit: 100 });
    expect(listed.map((r) => r.run_id).sort()).toEqual([...ids].sort());
    expect(listed.every((r) => r.status === "success")).toBe(true);
    expect((await client.threads.get(thread_id)).status).toBe("idle");
  });

  it("a run with after_seconds waits in pending; cancelled, it never starts", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const marker = scratch.marker();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "later", steps: 1, marker_file: marker }),
      afterSeconds: 3600,
    });
    expect(run.status).toBe("pending");
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("pending");
    // A delayed run does not hold the thread: another run goes first (as on the official server, where a
    // delayed run is queued at the time it becomes due).
    const now = await valuesWithin(
      "a run while the delayed one waits",
      client.runs.wait(thread_id, "steps", { input: job({ label: "now", steps: 1 }) }),
    );
    expect(now.log).toEqual(["now:0"]);
    // The delayed run still waits: the thread stays busy (as on the official server), until it is cancelled.
    expect((await client.threads.get(thread_id)).status).toBe("busy");
    await client.runs.cancel(thread_id, run.run_id);
    await waitForStatus(client, thread_id, run.run_id, ["interrupted"]);
    await waitForThreadStatus(client, thread_id, "idle");
    expect(markerLines(marker)).toEqual([]);
  });

  it("a delayed run makes its thread busy for reject; interrupt and rollback cancel it", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const marker = scratch.marker();
    const later = () =>
      client.runs.create(thread_id, "steps", {
        input: job({ label: "later", steps: 1, marker_file: marker }),
        afterSeconds: 3600,
      });
    const first = await later();
    // reject: refused while the delayed run waits (as on the official server), nothing recorded.
    const refused = await httpError(
      client.runs.create(thread_id, "steps", {
        input: job({ label: "r", steps: 1 }),
        multitaskStrategy: "reject",
      }),
    );
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain(first.run_id);
    expect((await client.runs.list(thread_id)).map((r) => r.run_id)).toEqual([first.run_id]);
    // interrupt: the delayed run is cancelled (interrupted) and the new one runs.
    const now = await valuesWithin(
      "an interrupting run",
      client.runs.wait(thread_id, "steps", {
        input: job({ label: "i", steps: 1 }),
        multitaskStrategy: "interrupt",
      }),
    );
    expect(now.log).toEqual(["i:0"]);
    await waitForStatus(client, thread_id, first.run_id, ["interrupted"]);
    // rollback: the delayed run is deleted.
    const second = await later();
    await valuesWithin(
      "a rolling-back run",
      client.runs.wait(thread_id, "steps", {
        input: job({ label: "b", steps: 1 }),
        multitaskStrategy: "rollback",
      }),
    );
    await waitFor("the delayed run to be deleted", async () =>
      (await client.runs.list(thread_id)).every((r) => r.run_id !== second.run_id),
    );
    expect(markerLines(marker)).toEqual([]);
  });

  it("DELETE of a running run is refused with 409, and the run goes on to its end", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const run = await startHeld(client, thread_id, "r", 1, gate.file);
    const refused = await httpError(client.runs.delete(thread_id, run.run_id));
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("cancel it before deleting it");
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("running");
    gate.open();
    await waitForStatus(client, thread_id, run.run_id, ["success"]);
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual(logOf("r", 4));
  });

  it("DELETE /threads/{id}/runs/{run_id} removes a finished run", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const keep = await client.runs.create(thread_id, "steps", { input: job({ label: "k", steps: 1 }) });
    await within("join", client.runs.join(thread_id, keep.run_id));
    const gone = await client.runs.create(thread_id, "steps", { input: job({ label: "d", steps: 1 }) });
    await within("join", client.runs.join(thread_id, gone.run_id));

    await client.runs.delete(thread_id, gone.run_id);
    expect((await httpError(client.runs.get(thread_id, gone.run_id))).status).toBe(404);
    expect((await client.runs.list(thread_id)).map((r) => r.run_id)).toEqual([keep.run_id]);
    expect((await httpError(client.runs.delete(thread_id, gone.run_id))).status).toBe(404);
    // The thread's state is untouched.
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual(["k:0", "d:0"]);
  });
});

describe("stateless background runs", () => {
  it("POST /runs with on_completion keep runs in the background on a thread that stays", async () => {
    const { client } = hangar;
    const run = await client.runs.create(null, "steps", {
      input: job({ label: "s", steps: 2, delay_ms: 5 }),
      // The SDK types this as "complete" | "continue"; the API's values are "delete" | "keep".
      onCompletion: "keep" as unknown as "complete",
    });
    expect(run.run_id).toMatch(UUID);
    expect(["pending", "running"]).toContain(run.status);
    expect(run.thread_id).toMatch(UUID);
    const out = await joinValues(client, run.thread_id, run.run_id);
    expect(out.log).toEqual(logOf("s", 2));
    expect((await client.runs.get(run.thread_id, run.run_id)).status).toBe("success");
    expect((await client.threads.get(run.thread_id)).status).toBe("idle");
  });

  it("POST /runs with on_completion delete (the default) runs once and removes its thread", async () => {
    const { client } = hangar;
    const marker = scratch.marker();
    const run = await client.runs.create(null, "steps", {
      input: job({ label: "sd", steps: 2, delay_ms: 5, marker_file: marker }),
    });
    expect(["pending", "running"]).toContain(run.status);
    await waitFor("the stateless run to finish", () => markerLines(marker).includes("done sd:1"));
    if (run.thread_id) {
      // The official server runs it on a temporary thread, deleted when the run ends.
      await waitFor("the stateless run's thread to be deleted", () =>
        isGone(client.threads.get(run.thread_id)),
      );
    }
    expect(markerLines(marker).filter((l) => l.startsWith("done"))).toEqual(["done sd:0", "done sd:1"]);
  });

  it("POST /runs/batch creates every run and runs each (SDK createBatch)", async () => {
    const { client } = hangar;
    const markers = [scratch.marker(), scratch.marker(), scratch.marker()];
    const runs = await client.runs.createBatch(
      markers.map((m, i) => ({
        assistantId: "steps",
        input: job({ label: `b${i}`, steps: 2, delay_ms: 2, marker_file: m }),
      })),
    );
    expect(runs).toHaveLength(3);
    expect(new Set(runs.map((r) => r.run_id)).size).toBe(3);
    for (const r of runs) {
      expect(r.run_id).toMatch(UUID);
      expect(["pending", "running", "success"]).toContain(r.status);
    }
    for (const [i, m] of markers.entries()) {
      await waitFor(`batch run ${i} to finish`, () => markerLines(m).includes(`done b${i}:1`));
      expect(markerLines(m)).toEqual([`start b${i}:0`, `done b${i}:0`, `start b${i}:1`, `done b${i}:1`]);
    }
  });

  it("POST /runs/batch with on_completion keep can be joined", async () => {
    const res = await postJson(hangar.server.url, "/runs/batch", [
      { assistant_id: "steps", input: job({ label: "x", steps: 1 }), on_completion: "keep" },
      { assistant_id: "steps", input: job({ label: "y", steps: 2 }), on_completion: "keep" },
    ]);
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(2);
    const [x, y] = res.body as Array<{ run_id: string; thread_id: string }>;
    expect(x.thread_id).not.toBe(y.thread_id);
    expect((await joinValues(hangar.client, x.thread_id, x.run_id, "join x")).log).toEqual(logOf("x", 1));
    expect((await joinValues(hangar.client, y.thread_id, y.run_id, "join y")).log).toEqual(logOf("y", 2));
  });

  it("POST /runs/batch rejects an empty batch with 422", async () => {
    const res = await postJson(hangar.server.url, "/runs/batch", []);
    expect(res.status).toBe(422);
  });
});
