// End-to-end: GET /threads/{id}/stream, the long-lived stream of every run on a thread, with stream_modes
// `run_modes`, `lifecycle` and `state_update`, Last-Event-ID resumption and `-` replay.
//
// The official server sends `lifecycle` events as `metadata` events: the run start carries `run_id` and
// `attempt`, the run end is `{"status": "run_done", "run_id"}`; the state after a run is a `state_update`
// event. The behaviour tests also recognise a `lifecycle` event `{"event": "start"|"end", "run_id"}`;
// one test pins the official shape. The stream never ends by itself: every test closes it.
import { afterEach, describe, expect, it } from "vitest";
import type { RawSseEvent } from "../helpers/sse.ts";
import { useHangar } from "../helpers/server.ts";
import {
  RUNS_CONFIG,
  SseReader,
  expectDistinctIds,
  iteratorOf,
  job,
  readUntil,
  within,
} from "../helpers/runs.ts";

const hangar = useHangar({ config: RUNS_CONFIG });

interface Ev {
  id?: string;
  event: string;
  data: any;
}

const open: SseReader[] = [];
const abortOnExit: AbortController[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.close();
  for (const ac of abortOnExit.splice(0)) ac.abort();
});

async function openThreadStream(threadId: string, modes: string[], lastEventId?: string): Promise<SseReader> {
  const query = modes.map((m) => `stream_modes=${m}`).join("&");
  const reader = await SseReader.open(
    hangar.server.url,
    `/threads/${threadId}/stream${query ? `?${query}` : ""}`,
    lastEventId === undefined ? {} : { "Last-Event-ID": lastEventId },
  );
  open.push(reader);
  expect(reader.status, "thread stream status").toBe(200);
  expect(reader.response.headers.get("content-type")).toMatch(/^text\/event-stream/);
  return reader;
}

const isStart = (e: Ev, runId?: string) =>
  ((e.event === "metadata" &&
    typeof e.data?.run_id === "string" &&
    e.data?.attempt !== undefined &&
    e.data?.status !== "run_done") ||
    (e.event === "lifecycle" && e.data?.event === "start")) &&
  (runId === undefined || e.data.run_id === runId);
const isEnd = (e: Ev, runId?: string) =>
  ((e.event === "metadata" && e.data?.status === "run_done") ||
    (e.event === "lifecycle" && e.data?.event === "end")) &&
  (runId === undefined || e.data.run_id === runId);
const isStateUpdate = (e: Ev) => e.event === "state_update";
/** The thread values carried by a state_update: the state's `values`, or the values themselves. */
const valuesOf = (e: Ev) => {
  const d = e.data;
  if (d?.state?.values && typeof d.state.values === "object") return d.state.values;
  if (d?.values && typeof d.values === "object") return d.values;
  return d;
};
/** A `values` event of a run showing `log`. */
const isValues = (e: Ev, log: string[]) =>
  e.event === "values" && JSON.stringify(e.data?.log) === JSON.stringify(log);
const wire = (e: Ev | RawSseEvent) => ({ id: e.id, event: e.event, data: e.data });

/** Reads until the end event of `runId` and a state_update showing `log` have both arrived. */
function untilRunDone(reader: SseReader, runId: string, log?: string[]) {
  let ended = false;
  let updated = log === undefined;
  return reader.until(`the end of run ${runId}`, (e) => {
    if (isEnd(e, runId)) ended = true;
    if (log && isStateUpdate(e) && JSON.stringify(valuesOf(e)?.log) === JSON.stringify(log)) updated = true;
    return ended && updated;
  });
}

async function runOnce(threadId: string, label: string, steps = 2): Promise<string> {
  let runId = "";
  await within(
    `run ${label}`,
    hangar.client.runs.wait(threadId, "steps", {
      input: job({ label, steps, delay_ms: 1 }),
      onRunCreated: (m) => (runId = m.run_id),
    }),
  );
  return runId;
}

describe("thread streams", () => {
  it("opened before three runs, it sees lifecycle start/end for each and a state_update after each", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const stream = await openThreadStream(thread_id, ["lifecycle", "state_update"]);
    // Opening it created no run.
    expect(await client.runs.list(thread_id)).toEqual([]);

    const runIds: string[] = [];
    const logs = [
      ["t0:0", "t0:1"],
      ["t0:0", "t0:1", "t1:0", "t1:1"],
      ["t0:0", "t0:1", "t1:0", "t1:1", "t2:0", "t2:1"],
    ];
    for (let i = 0; i < 3; i++) runIds.push(await runOnce(thread_id, `t${i}`));
    const events = (await untilRunDone(stream, runIds[2], logs[2])) as Ev[];

    for (const [i, runId] of runIds.entries()) {
      const start = events.findIndex((e) => isStart(e, runId));
      const end = events.findIndex((e) => isEnd(e, runId));
      expect(start, `start event of run ${i}`).toBeGreaterThanOrEqual(0);
      expect(end, `end event of run ${i}`).toBeGreaterThan(start);
      expect(events.filter((e) => isStart(e, runId))).toHaveLength(1);
      expect(events.filter((e) => isEnd(e, runId))).toHaveLength(1);
      const nextStart = i < 2 ? events.findIndex((e) => isStart(e, runIds[i + 1])) : events.length;
      expect(nextStart, `run ${i + 1} starts after run ${i} ended`).toBeGreaterThan(end);
      const updates = events.slice(start, nextStart).filter(isStateUpdate);
      expect(
        updates.map((e) => valuesOf(e).log),
        `state_update after run ${i}`,
      ).toContainEqual(logs[i]);
    }
    // Only lifecycle and state_update events: no run output.
    expect(events.filter((e) => !(isStart(e) || isEnd(e) || isStateUpdate(e)))).toEqual([]);
    expectDistinctIds(events);
    // The stream is still open after the runs: the client closes it.
    stream.close();
    expect((await client.runs.list(thread_id)).map((r) => r.run_id).sort()).toEqual([...runIds].sort());
  });

  it("run_modes (the default) streams every event of every run, as the run stream does", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const stream = await openThreadStream(thread_id, []);

    const runParts: Ev[] = [];
    for await (const part of client.runs.stream(thread_id, "steps", {
      input: job({ label: "m", steps: 3, delay_ms: 1 }),
      streamMode: ["updates", "values"],
    })) {
      runParts.push(part as Ev);
    }
    const runId = runParts[0].data.run_id as string;
    const finalLog = ["m:0", "m:1", "m:2"];
    const events = (await stream.until(
      "the run's last values",
      (e) => e.event === "values" && JSON.stringify((e.data as Ev["data"])?.log) === JSON.stringify(finalLog),
    )) as Ev[];

    const output = (parts: Ev[]) =>
      parts
        .filter((p) => p.event === "updates" || p.event === "values")
        .map((p) => ({ event: p.event, data: p.data }));
    expect(output(events)).toEqual(output(runParts));
    expect(events.find((e) => e.event === "metadata")?.data.run_id).toBe(runId);
    expect(events.some(isStateUpdate)).toBe(false);
  });

  it("Last-Event-ID resumes without a gap, and '-' replays from the beginning", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const modes = ["run_modes"];
    const first = await openThreadStream(thread_id, modes);
    const r1 = await runOnce(thread_id, "a");
    const head = (await first.until("the first run's last values", (e) =>
      isValues(e, ["a:0", "a:1"]),
    )) as Ev[];
    const lastId = head.at(-1)!.id;
    expect(lastId, "thread stream events carry ids").toBeDefined();
    first.close();

    // A run while no one listens.
    const r2 = await runOnce(thread_id, "b");
    const final = ["a:0", "a:1", "b:0", "b:1"];
    const resumed = await openThreadStream(thread_id, modes, lastId);
    const tail = (await resumed.until("the second run's last values", (e) => isValues(e, final))) as Ev[];
    const replay = await openThreadStream(thread_id, modes, "-");
    const all = (await replay.until("the second run's last values", (e) => isValues(e, final))) as Ev[];

    expect([...head, ...tail].map(wire)).toEqual(all.map(wire));
    const runIdsOf = (evs: Ev[]) => evs.filter((e) => e.event === "metadata").map((e) => e.data.run_id);
    expect(runIdsOf(all)).toEqual([r1, r2]);
    expect(runIdsOf(tail)).toEqual([r2]);
    const ids = all.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("covers runs created after it was opened; opening and closing it creates no run", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const idle = await openThreadStream(thread_id, ["lifecycle"]);
    idle.close();
    expect(await client.runs.list(thread_id)).toEqual([]);
    expect((await client.threads.get(thread_id)).status).toBe("idle");

    const stream = await openThreadStream(thread_id, []);
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "late", steps: 1 }),
      streamMode: ["values"],
    });
    const events = (await stream.until("the late run's last values", (e) => isValues(e, ["late:0"]))) as Ev[];
    const meta = events.find((e) => e.event === "metadata");
    expect(meta?.data).toMatchObject({ run_id: run.run_id, attempt: 1 });
    expect((await client.runs.list(thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
  });

  it("lifecycle events: metadata {run_id, attempt} and {run_id, status: run_done, run_status}", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const stream = await openThreadStream(thread_id, ["lifecycle"]);
    const runId = await runOnce(thread_id, "shape", 1);
    const events = (await stream.until("two lifecycle events", () => stream.received.length >= 2)) as Ev[];
    expect(events.map((e) => e.event)).toEqual(["metadata", "metadata"]);
    expect(events[0].data).toEqual({ run_id: runId, attempt: 1 });
    expect(events[1].data).toEqual({ run_id: runId, status: "run_done", run_status: "success" });
  });

  it("the SDK's threads.joinStream replays lifecycle events with lastEventId '-'", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const runId = await runOnce(thread_id, "sdk");
    const ac = new AbortController();
    abortOnExit.push(ac);
    // Stops at the run's end, or at the first event that is not a lifecycle event.
    const parts = (await readUntil(
      "the run's end",
      iteratorOf(
        client.threads.joinStream(thread_id, {
          lastEventId: "-",
          streamMode: "lifecycle",
          signal: ac.signal,
        }),
      ),
      (p) => isEnd(p as Ev, runId) || !(isStart(p as Ev) || isEnd(p as Ev)),
    )) as Ev[];
    ac.abort();
    expect(
      parts.map((p) => p.event),
      "the SDK sends stream_mode=lifecycle: only lifecycle events",
    ).toEqual(["metadata", "metadata"]);
    expect(isStart(parts[0], runId)).toBe(true);
    expect(isEnd(parts[1], runId)).toBe(true);
  });

  it("a thread stream of an unknown thread is 404", async () => {
    const res = await fetch(
      new URL(`/threads/00000000-0000-4000-8000-000000000000/stream`, hangar.server.url),
    );
    expect(res.status).toBe(404);
    await res.body?.cancel();
  });
});
