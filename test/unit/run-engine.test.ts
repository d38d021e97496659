// Unit tests of the run engine on the embedded backend without HTTP (real SQLite storage, the runs fixture's `steps`
// graph): run creation called concurrently in one process, where the calls interleave at every await.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Storage } from "../../src/storage/types.ts";
import type { RunEngine } from "../../src/runs/engine.ts";
import { RUNS_CONFIG, Scratch, embeddedEngine, job, runBody } from "../helpers/runs.ts";
import { cleanupDir, tempDir } from "../helpers/server.ts";

/** A run body as the API passes it (its schema's defaults filled in). */
const body = runBody;

const dir = tempDir("hangar-unit-manager-");
const scratch = new Scratch();
let storage: Storage;
let runs: RunEngine;
const finished: string[] = [];

let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, runs, close } = await embeddedEngine(dir, RUNS_CONFIG));
  runs.onFinished((status) => finished.push(status));
});

afterAll(async () => {
  await close?.();
  cleanupDir(dir);
  scratch.cleanup();
});

/** "admitted", "busy" (refused: the thread is busy), or the error's message. */
const statusOf = (r: PromiseSettledResult<unknown>) => {
  if (r.status === "fulfilled") return "admitted";
  const message = (r.reason as Error).message;
  return / is busy with run /.test(message) ? "busy" : message;
};

describe("RunEngine: concurrent creates on one thread", () => {
  it("reject: of 10 concurrent creates on an idle thread exactly one is admitted, the others refused", async () => {
    for (let round = 0; round < 3; round++) {
      const thread = await storage.threads.create({ thread_id: crypto.randomUUID(), metadata: {} });
      const gate = scratch.gate();
      const settled = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) =>
          runs.createStateful(
            thread!.thread_id,
            body({
              input: job({ label: `c${i}`, steps: 1, hold_at: 0, gate_file: gate.file }),
              multitask_strategy: "reject",
            }),
          ),
        ),
      );
      const statuses = settled.map(statusOf);
      expect(
        statuses.filter((s) => s === "admitted"),
        statuses.join(", "),
      ).toHaveLength(1);
      expect(statuses.filter((s) => s !== "admitted")).toEqual(Array(9).fill("busy"));
      const started = settled.find((r) => r.status === "fulfilled")!.value;
      gate.open();
      expect((await started.done).status).toBe("success");
      expect(await storage.runs.list(thread!.thread_id, { limit: 100, offset: 0 })).toHaveLength(1);
    }
  });

  it("enqueue: concurrent creates are all admitted and run one after the other, in order", async () => {
    const thread = await storage.threads.create({ thread_id: crypto.randomUUID(), metadata: {} });
    const settled = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        runs.createStateful(thread!.thread_id, body({ input: job({ label: `q${i}`, steps: 1 }) })),
      ),
    );
    for (const s of settled) expect((await s.done).status).toBe("success");
    const t = await storage.threads.get(thread!.thread_id);
    expect((t!.values as { log: string[] }).log).toEqual(["q0:0", "q1:0", "q2:0", "q3:0", "q4:0"]);
  });

  it("tells its finish listeners each run's final status", () => {
    expect(finished.filter((s) => s === "success").length).toBeGreaterThanOrEqual(8);
  });
});
