// Scale-out backend only (the "postgres" vitest project): two `serve --mode api` and two `serve --mode
// worker` processes on one PostgreSQL schema and Redis prefix. Runs created through either API process are
// executed by the workers exactly once each, in creation order per thread, and a run's stream joined on
// the API process that did not create it carries every event.
import type { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterTargetFor } from "../helpers/backend.ts";
import {
  BACKEND,
  cleanupDir,
  noRetryClient,
  startHangar,
  tempDir,
  type HangarProcess,
} from "../helpers/server.ts";
import {
  RUNS_CONFIG,
  Scratch,
  type StepsValues,
  drain,
  expectDistinctIds,
  iteratorOf,
  job,
  markerLines,
  readUntil,
  waitFor,
  waitForStatus,
} from "../helpers/runs.ts";

interface Part {
  id?: string;
  event: string;
  data: any;
}

const THREADS = 50;
const RUNS = 200;
/** Bound of the wait for all RUNS runs (two workers, 10 slots each, on a shared 2-CPU machine). */
const ALL_RUNS_MS = 150_000;

const scratch = new Scratch();
const home = tempDir("hangar-cluster-");
const target = clusterTargetFor(home);
const procs: HangarProcess[] = [];
let apis: HangarProcess[] = [];
let workers: HangarProcess[] = [];
let clients: Client[] = [];

beforeAll(async () => {
  expect(BACKEND, "cluster.test.ts runs in the postgres project only").toBe("postgres");
  // All four start at once on a fresh schema: the migrations run once, under their lock.
  const started = await Promise.allSettled([
    startHangar({ config: RUNS_CONFIG, mode: "api", cluster: target }),
    startHangar({ config: RUNS_CONFIG, mode: "api", cluster: target }),
    startHangar({ config: RUNS_CONFIG, mode: "worker", cluster: target }),
    startHangar({ config: RUNS_CONFIG, mode: "worker", cluster: target }),
  ]);
  for (const s of started) if (s.status === "fulfilled") procs.push(s.value);
  const failed = started.find((s) => s.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  apis = procs.slice(0, 2);
  workers = procs.slice(2);
  clients = apis.map((a) => noRetryClient(a.url));
});

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop()));
  for (const p of procs) cleanupDir(p.dataDir);
  cleanupDir(home);
  scratch.cleanup();
});

/** All output of the four processes, for failure messages. */
function outputs(): string {
  const names = ["api 1", "api 2", "worker 1", "worker 2"];
  return procs.map((p, i) => `--- ${names[i]} ---\n${p.output().slice(-4000)}`).join("\n");
}

/** The value of `hangar_runs_finished_total{status}` on a process's /metrics (0 when absent). */
async function finishedCount(p: HangarProcess, status: string): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text();
  const m = new RegExp(`^hangar_runs_finished_total\\{status="${status}"\\} (\\d+)`, "m").exec(text);
  return m ? Number(m[1]) : 0;
}

describe("two api and two worker processes on one schema", () => {
  it("the processes say what they are, and workers serve only /ok and /metrics", async () => {
    for (const a of apis) expect(a.output()).toMatch(/Agent Server \(API only\) listening on/);
    for (const w of workers) {
      expect(w.output()).toMatch(/Hangar worker \(health and metrics only\) listening on/);
      expect((await fetch(`${w.url}/ok`)).status).toBe(200);
      expect((await fetch(`${w.url}/threads/search`, { method: "POST", body: "{}" })).status).toBe(404);
      // Nor does its log point at docs it does not serve.
      expect((await fetch(`${w.url}/docs`)).status).toBe(404);
      expect(w.output()).not.toMatch(/docs: http/);
    }
    for (const a of apis) expect(a.output()).toMatch(/docs: http/);
    // Both API processes see the same deployment: the system assistants exist once.
    const [a, b] = await Promise.all(
      clients.map((c) => c.assistants.search({ metadata: { created_by: "system" }, sortBy: "assistant_id" })),
    );
    expect(a.map((x) => x.assistant_id)).toEqual(b.map((x) => x.assistant_id));
    expect(a.map((x) => x.graph_id).sort()).toEqual(["chat", "steps"]);
  });

  it(`${RUNS} background runs on ${THREADS} threads, created through both API processes, each run once, in order per thread`, async () => {
    const marker = scratch.marker();
    const threads: string[] = [];
    for (let k = 0; k < THREADS; k++) {
      threads.push((await clients[k % 2].threads.create({ metadata: { k } })).thread_id);
    }
    // Wave w creates run w*THREADS+k on thread k, through API (k+w)%2: across the waves each thread's
    // runs alternate between the API processes; within a wave the threads are created concurrently.
    const runIds: string[] = [];
    for (let w = 0; w < RUNS / THREADS; w++) {
      await Promise.all(
        threads.map(async (threadId, k) => {
          const i = w * THREADS + k;
          const run = await clients[(k + w) % 2].runs.create(threadId, "steps", {
            input: job({ label: `r${i}`, steps: 1, delay_ms: 5, marker_file: marker }),
            multitaskStrategy: "enqueue",
          });
          runIds[i] = run.run_id;
        }),
      );
    }

    // Every run ends; read through both API processes in turn.
    let round = 0;
    const statuses = await waitFor(
      () => `all ${RUNS} runs to end\n${outputs()}`,
      async () => {
        const c = clients[round++ % 2];
        const lists = await Promise.all(threads.map((t) => c.runs.list(t, { limit: 100 })));
        const runs = lists.flat();
        if (runs.length !== RUNS) throw new Error(`${runs.length} runs listed, not ${RUNS}`);
        const open = runs.filter((r) => r.status === "pending" || r.status === "running");
        if (open.length) throw new Error(`${open.length} runs still pending or running`);
        return new Map(runs.map((r) => [r.run_id, r.status]));
      },
      ALL_RUNS_MS,
    );
    const notSuccess = runIds.filter((id) => statuses.get(id) !== "success");
    // A run that did not succeed is reported with what it ended with (its error), and the processes' output.
    const why = await Promise.all(
      notSuccess.map(async (id) => {
        const thread = threads[runIds.indexOf(id) % THREADS];
        const end = await clients[0].runs.join(thread, id).catch((e: Error) => e.message);
        return `${id}: ${statuses.get(id)} ${JSON.stringify(end)}`;
      }),
    );
    if (why.length) console.error(outputs());
    expect(why).toEqual([]);

    // Each run's side effect happened exactly once (no run executed twice, none skipped).
    const lines = markerLines(marker);
    for (const kind of ["start", "done"]) {
      const seen = new Map<string, number>();
      for (const l of lines.filter((l) => l.startsWith(`${kind} `))) seen.set(l, (seen.get(l) ?? 0) + 1);
      const wrong = Array.from({ length: RUNS }, (_, i) => `${kind} r${i}:0`).filter(
        (l) => seen.get(l) !== 1,
      );
      expect(wrong.map((l) => `${l} x${seen.get(l) ?? 0}`)).toEqual([]);
      expect(seen.size).toBe(RUNS);
    }

    // Per thread, the runs ran in creation order: the log is r<k>, r<k+50>, r<k+100>, r<k+150>.
    for (let k = 0; k < THREADS; k++) {
      const state = await clients[k % 2].threads.getState<StepsValues>(threads[k]);
      const expected = Array.from({ length: RUNS / THREADS }, (_, w) => `r${w * THREADS + k}:0`);
      expect(state.values.log, `thread ${k}`).toEqual(expected);
      expect((await clients[(k + 1) % 2].threads.get(threads[k])).status).toBe("idle");
    }

    // The workers executed them all between them, each its share, and counted each once.
    const counts = await Promise.all(workers.map((w) => finishedCount(w, "success")));
    expect(
      counts.reduce((a, b) => a + b, 0),
      `per worker: ${counts.join(", ")}`,
    ).toBe(RUNS);
    for (const n of counts) expect(n, `per worker: ${counts.join(", ")}`).toBeGreaterThan(0);
  });

  it("a run's stream joined on the other API process receives every event, like its replay", async () => {
    const [a, b] = clients;
    const gate = scratch.gate();
    const { thread_id } = await a.threads.create();
    const run = await a.runs.create(thread_id, "steps", {
      input: job({ label: "s", steps: 4, delay_ms: 2, hold_at: 2, gate_file: gate.file }),
      streamMode: ["values", "updates"],
      streamResumable: true,
    });
    const ac = new AbortController();
    try {
      // Joined on B from the start (-1): what the run emits later arrives live, from a worker, via Redis.
      const joined = iteratorOf(
        b.runs.joinStream(thread_id, run.run_id, { lastEventId: "-1", signal: ac.signal }),
      );
      const head = (await readUntil(
        "the update of step s:1 (the run then holds)",
        joined,
        (p) => p.event === "updates" && ((p as Part).data?.step?.log ?? []).includes("s:1"),
      )) as Part[];
      expect((await b.runs.get(thread_id, run.run_id)).status).toBe("running");
      gate.open();
      const tail = (await drain("the rest of the joined stream", joined)) as Part[];
      const live = [...head, ...tail];

      expect((await waitForStatus(a, thread_id, run.run_id, ["success"])).status).toBe("success");
      // The replay of the kept log, on the API process that created the run.
      const replay = (await drain(
        "the replay",
        a.runs.joinStream(thread_id, run.run_id, { lastEventId: "-1" }),
      )) as Part[];
      const wire = (p: Part) => ({ id: p.id, event: p.event, data: p.data });
      expect(live.map(wire)).toEqual(replay.map(wire));
      expectDistinctIds(live);

      // And it is the run's whole stream: metadata, then values and updates of begin and of every step.
      expect(live[0].event).toBe("metadata");
      expect(live[0].data.run_id).toBe(run.run_id);
      const updates = live.filter((p) => p.event === "updates").map((p) => Object.keys(p.data)[0]);
      expect(updates).toEqual(["begin", "step", "step", "step", "step"]);
      const steps = live.filter((p) => p.event === "updates" && p.data.step).flatMap((p) => p.data.step.log);
      expect(steps).toEqual(["s:0", "s:1", "s:2", "s:3"]);
      const values = live.filter((p) => p.event === "values").map((p) => p.data.log);
      expect(values.at(-1)).toEqual(["s:0", "s:1", "s:2", "s:3"]);
      expect(values.length).toBeGreaterThanOrEqual(5);
      expect(live.map((p) => p.event).filter((e) => e !== "values" && e !== "updates")).toEqual(["metadata"]);
    } finally {
      ac.abort();
    }
  });
});
