// Unit test of RunManager.join without HTTP (real SQLite storage, test/fixtures/join-output): a join of a run in
// flight answers the run's last `values` event, as the official server does, which for a graph with an untracked
// value (createAgent's structuredResponse) is more than the thread's state; once the run has ended, a join answers
// the thread's values.
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ensureSystemAssistants } from "../../src/graphs/assistants.ts";
import { GraphRegistry } from "../../src/graphs/registry.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { loadProjectConfig } from "../../src/lib/settings/project.ts";
import { RunManager } from "../../src/runs/manager.ts";
import { openSqliteStorage } from "../../src/storage/sqlite/index.ts";
import type { Storage } from "../../src/storage/types.ts";
import { StreamBroker } from "../../src/streams/channel.ts";
import { Scratch, runBody } from "../helpers/runs.ts";
import { ROOT, cleanupDir, tempDir } from "../helpers/server.ts";

const dir = tempDir("hangar-unit-join-");
const scratch = new Scratch();
let storage: Storage;
let broker: StreamBroker;
let runs: RunManager;

beforeAll(async () => {
  storage = openSqliteStorage(dir, { synchronous: "OFF" });
  const graphs = new GraphRegistry(storage.checkpointer, storage.store);
  await graphs.loadAll(loadProjectConfig(join(ROOT, "test/fixtures/join-output/langgraph.json")).graphs);
  await ensureSystemAssistants(storage, graphs);
  broker = new StreamBroker(60_000);
  runs = new RunManager(storage, graphs, broker, createLogger({ level: "silent" }), {
    maxConcurrent: 4,
    maxAttempts: 3,
  });
});

afterAll(async () => {
  await runs?.shutdown(100);
  await broker?.close();
  await storage?.close();
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
