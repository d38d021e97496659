// End-to-end (`hangar dev` as a process): graph threads load the project's graphs after the server listens. While
// they still load, `/ok` answers and a run waits for a ready thread (it runs there once one is); when no thread can
// load the graphs, the server says so in its log and runs execute on the API thread. Ordered by a gate file the
// fixture's module waits for on a graph thread (test/fixtures/graph-threads-start/graph.mjs), never by the clock.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cleanupDir, noRetryClient, startHangar, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const CONFIG = "test/fixtures/graph-threads-start/langgraph.json";

describe("graph threads start in the background", () => {
  it("the server answers while its threads load; a run waits for one, then executes there", async () => {
    const scratch = tempDir("hangar-gate-");
    const gate = join(scratch, "open");
    const server = await startHangar({
      process: true,
      config: CONFIG,
      env: { HANGAR_GRAPH_THREADS: "2", THREAD_GATE_FILE: gate },
    });
    try {
      const client = noRetryClient(server.url);
      expect((await fetch(`${server.url}/ok`)).status).toBe(200);
      const { thread_id } = await client.threads.create();
      const run = await client.runs.create(thread_id, "where", { input: {} });
      // The threads cannot be ready (their module waits for the gate): the run has not ended.
      expect(existsSync(gate)).toBe(false);
      expect(["pending", "running"]).toContain((await client.runs.get(thread_id, run.run_id)).status);
      expect((await fetch(`${server.url}/ok`)).status).toBe(200);
      writeFileSync(gate, "");
      const values = (await client.runs.join(thread_id, run.run_id)) as { where?: string };
      expect(values.where).toBe("graph thread");
      expect((await client.runs.get(thread_id, run.run_id)).status).toBe("success");
    } finally {
      await server.stop();
      cleanupDir(server.dataDir);
      cleanupDir(scratch);
    }
  });

  it("when no thread can load the graphs, the log says so and runs execute on the API thread", async () => {
    const server = await startHangar({
      process: true,
      config: CONFIG,
      env: { HANGAR_GRAPH_THREADS: "2", THREAD_REFUSE: "1" },
    });
    try {
      const client = noRetryClient(server.url);
      await waitFor("the log to say no graph thread could load the graphs", () =>
        server.output().includes("no graph thread could load the graphs"),
      );
      expect(server.output()).toContain("this module refuses to load on a graph thread");
      const { thread_id } = await client.threads.create();
      const values = (await client.runs.wait(thread_id, "where", { input: {} })) as { where?: string };
      expect(values.where).toBe("api thread");
      // The threads that failed are not started again and again.
      expect(server.output().match(/starting another/g)).toBeNull();
    } finally {
      await server.stop();
      cleanupDir(server.dataDir);
    }
  });
});
