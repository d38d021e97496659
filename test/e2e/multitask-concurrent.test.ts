// End-to-end: runs created at the same moment on one thread. Under `reject` exactly one of them is admitted
// and the others answer 409 (admission is atomic); under `enqueue` all are admitted and run one at a time.
// On the postgres backend the creates go through two API processes of one deployment.
import type { Client } from "@langchain/langgraph-sdk";
import { beforeAll, describe, expect, it } from "vitest";
import { BACKEND, clusterOf, noRetryClient, startHangar } from "../helpers/server.ts";
import {
  RUNS_CONFIG,
  job,
  joinValues,
  markerLines,
  useRunsProject,
  waitForThreadStatus,
} from "../helpers/runs.ts";

const { hangar, scratch } = useRunsProject();

/** Concurrent creates per round, and rounds per test. */
const N = 10;
const ROUNDS = 3;

/** Clients the creates go through: the server's, and on postgres a second API process's too. */
let clients: Client[] = [];

beforeAll(async () => {
  clients = [hangar.client];
  if (BACKEND === "postgres") {
    // Stopped (and its schema dropped) by the harness's afterAll with the file's other servers.
    const second = await startHangar({
      config: RUNS_CONFIG,
      mode: "api",
      cluster: clusterOf(hangar.server),
    });
    clients.push(noRetryClient(second.url));
  }
}, 60_000);

/** Settles `n` creates fired at once on the thread, the i-th through client i mod clients. */
function createAll(n: number, create: (client: Client, i: number) => Promise<{ run_id: string }>) {
  return Promise.allSettled(Array.from({ length: n }, (_, i) => create(clients[i % clients.length], i)));
}

const statusOf = (r: PromiseSettledResult<unknown>): number | string =>
  r.status === "fulfilled" ? "admitted" : ((r.reason as { status?: number }).status ?? String(r.reason));

describe("runs created concurrently on one thread", () => {
  it(`reject: of ${N} concurrent creates on an idle thread exactly one is admitted, the rest are 409`, async () => {
    const { client } = hangar;
    for (let round = 0; round < ROUNDS; round++) {
      const { thread_id } = await client.threads.create();
      const gate = scratch.gate();
      const settled = await createAll(N, (c, i) =>
        c.runs.create(thread_id, "steps", {
          input: job({ label: `c${i}`, steps: 2, hold_at: 0, gate_file: gate.file }),
          multitaskStrategy: "reject",
        }),
      );
      const statuses = settled.map(statusOf);
      expect(
        statuses.filter((s) => s === "admitted"),
        `round ${round}: ${statuses.join(", ")}`,
      ).toHaveLength(1);
      expect(statuses.filter((s) => s !== "admitted")).toEqual(Array(N - 1).fill(409));

      const i = statuses.indexOf("admitted");
      const admitted = (settled[i] as PromiseFulfilledResult<{ run_id: string }>).value;
      gate.open();
      const out = await joinValues(client, thread_id, admitted.run_id);
      expect(out.log).toEqual([`c${i}:0`, `c${i}:1`]);
      // The refused runs left no record.
      expect((await client.runs.list(thread_id)).map((r) => r.run_id)).toEqual([admitted.run_id]);
      await waitForThreadStatus(client, thread_id, "idle");
    }
  });

  it(`enqueue: ${N} concurrent creates are all admitted and run one after the other`, async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const marker = scratch.marker();
    const settled = await createAll(N, (c, i) =>
      c.runs.create(thread_id, "steps", {
        input: job({ label: `q${i}`, steps: 1, delay_ms: 5, marker_file: marker }),
        multitaskStrategy: "enqueue",
      }),
    );
    expect(settled.map(statusOf)).toEqual(Array(N).fill("admitted"));
    const ids = settled.map((r) => (r as PromiseFulfilledResult<{ run_id: string }>).value.run_id);
    for (const id of ids) await joinValues(client, thread_id, id);
    const runs = await client.runs.list(thread_id, { limit: 100 });
    expect(runs.map((r) => r.run_id).sort()).toEqual([...ids].sort());
    expect(runs.every((r) => r.status === "success")).toBe(true);
    // One at a time: every step ends before the next one starts.
    const lines = markerLines(marker);
    expect(lines).toHaveLength(2 * N);
    for (let k = 0; k < lines.length; k += 2) {
      expect(lines[k + 1]).toBe(lines[k].replace(/^start /, "done "));
    }
    await waitForThreadStatus(client, thread_id, "idle");
  });
});
