// Unit test of RunEngine.join without HTTP (real SQLite storage, test/fixtures/join-output): a join of a run in
// flight answers the run's last `values` event, as the official server does, which for a graph with an untracked
// value (createAgent's structuredResponse) is more than the thread's state; once the run has ended, a join answers
// the thread's values.
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Storage } from "../../src/storage/types.ts";
import type { RunEngine } from "../../src/runs/engine.ts";
import { Scratch, embeddedEngine, runBody } from "../helpers/runs.ts";
import { ROOT, cleanupDir, tempDir } from "../helpers/server.ts";

const dir = tempDir("hangar-unit-join-");
const scratch = new Scratch();
let storage: Storage;
let runs: RunEngine;

let close: () => Promise<void>;

beforeAll(async () => {
  ({ storage, runs, close } = await embeddedEngine(
    dir,
    join(ROOT, "test/fixtures/join-output/langgraph.json"),
  ));
});

afterAll(async () => {
  await close?.();
  cleanupDir(dir);
  scratch.cleanup();
});

it("a join of a run in flight answers its last values event; of an ended run, the thread's values", async () => {
  const thread = (await storage.threads.create({ thread_id: crypto.randomUUID(), metadata: {} }))!;
  const gate = scratch.gate();
  const { run } = await runs.createStateful(
    thread.thread_id,
    runBody({ assistant_id: "shaped", input: { question: "life", gate_file: gate.file } }),
  );
  // Joined before the gate opens: the run is in flight.
  const inFlight = runs.join(thread.thread_id, run.run_id);
  gate.open();
  expect(await inFlight).toEqual({ question: "life", gate_file: gate.file, answer: "the answer to life" });
  expect(await runs.join(thread.thread_id, run.run_id)).toEqual({ question: "life", gate_file: gate.file });
});
