// End-to-end, both backends: with graph threads (HANGAR_GRAPH_THREADS), a node that spins its thread in synchronous
// code holds up neither the API nor runs on other threads: while it spins, `/ok`, an echo run on another thread and
// the history of a long thread all answer. A cancel ends a spinning run (its graph thread is ended and replaced);
// a graph thread that exits ends its run in error and the server goes on. Ordered by events (marker files, gates,
// statuses), never by the clock.
import { afterAll, describe, expect, it } from "vitest";
import {
  RUNS_CONFIG,
  Scratch,
  job,
  logOf,
  markerLines,
  waitFor,
  waitForStatus,
  waitForThreadStatus,
} from "../helpers/runs.ts";
import { Client } from "@langchain/langgraph-sdk";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar({
  config: RUNS_CONFIG,
  env: { HANGAR_GRAPH_THREADS: "2", HANGAR_GRAPH_CANCEL_GRACE_SECONDS: "1" },
});
const scratch = new Scratch();
afterAll(() => scratch.cleanup());

/** Starts a run whose first step spins until `gate` opens; resolves once it spins. */
async function startSpinning(label: string, gateFile: string) {
  const { client } = hangar;
  const { thread_id } = await client.threads.create();
  const marker = scratch.marker();
  const run = await client.runs.create(thread_id, "steps", {
    input: job({ label, steps: 2, spin_at: 0, gate_file: gateFile, marker_file: marker }),
  });
  await waitFor(`run ${label} to spin`, () => markerLines(marker).includes(`start ${label}:0`));
  return { thread_id, run };
}

describe("graph threads", () => {
  it("while a node spins: /ok, an echo run on another thread and a long thread's history answer", async () => {
    const { client } = hangar;
    // A long thread, written before the spin starts.
    const long = await client.threads.create();
    await client.runs.wait(long.thread_id, "steps", {
      input: job({ label: "l", steps: 60 }),
      config: { recursion_limit: 100 },
    });

    const gate = scratch.gate();
    const spinning = await startSpinning("s", gate.file);
    try {
      const ok = await fetch(`${hangar.server.url}/ok`);
      expect(ok.status).toBe(200);
      const echo = await client.threads.create();
      const values = (await client.runs.wait(echo.thread_id, "steps", {
        input: job({ label: "e", steps: 1 }),
      })) as { log: string[] };
      expect(values.log).toEqual(["e:0"]);
      const history = await client.threads.getHistory(long.thread_id, { limit: 200 });
      expect(history.length).toBeGreaterThan(60);
      // Still spinning: nothing of it was checkpointed past its start.
      expect((await client.runs.get(spinning.thread_id, spinning.run.run_id)).status).toBe("running");
    } finally {
      gate.open();
    }
    await waitForStatus(client, spinning.thread_id, spinning.run.run_id, ["success"]);
    const state = await client.threads.getState<{ log: string[] }>(spinning.thread_id);
    expect(state.values.log).toEqual(logOf("s", 2));
  });

  it("a cancel ends a spinning run: its thread is ended and replaced, the next runs go on", async () => {
    const { client } = hangar;
    const gate = scratch.gate(); // never opened
    const spinning = await startSpinning("c", gate.file);
    await client.runs.cancel(spinning.thread_id, spinning.run.run_id);
    await waitForStatus(client, spinning.thread_id, spinning.run.run_id, ["interrupted"]);
    await waitForThreadStatus(client, spinning.thread_id, "idle");
    expect(hangar.server.output()).toContain("did not stop it within 1000 ms of its cancellation");
    // Runs go on, on the same thread and on others, once the replacement has loaded the graphs.
    for (let i = 0; i < 3; i++) {
      const { thread_id } = await client.threads.create();
      const values = (await client.runs.wait(thread_id, "steps", {
        input: job({ label: `n${i}`, steps: 1 }),
      })) as {
        log: string[];
      };
      expect(values.log).toEqual([`n${i}:0`]);
    }
    const again = (await client.runs.wait(spinning.thread_id, "steps", {
      input: job({ label: "again", steps: 1 }),
    })) as { log: string[] };
    expect(again.log).toEqual(["again:0"]);
  });

  it("a graph thread that exits ends its run in error; the server goes on", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "x", steps: 2, exit_at: 0 }),
    });
    await waitForStatus(client, thread_id, run.run_id, ["error"]);
    await waitForThreadStatus(client, thread_id, "error");
    expect(hangar.server.output()).toMatch(/graph thread ended: the graph thread exited \(code 3\)/);
    const ok = await fetch(`${hangar.server.url}/ok`);
    expect(ok.status).toBe(200);
    const values = (await client.runs.wait(thread_id, "steps", { input: job({ label: "y", steps: 1 }) })) as {
      log: string[];
    };
    expect(values.log).toEqual(["y:0"]);
  });

  it("what a run sent before a node spins reaches its stream while the node spins", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const marker = scratch.marker();
    const stream = client.runs.stream(thread_id, "steps", {
      input: job({ label: "p", steps: 2, spin_at: 1, gate_file: gate.file, marker_file: marker }),
      streamMode: ["updates"],
    });
    const seen: string[] = [];
    try {
      for await (const chunk of stream) {
        if (chunk.event !== "updates") continue;
        const [node, update] = Object.entries(chunk.data as Record<string, { log?: string[] }>)[0];
        seen.push(`${node}:${update?.log?.join(",") ?? ""}`);
        // Step 0's update arrives while step 1 spins (it started, and the gate is still closed).
        if (node === "step" && update?.log?.[0] === "p:0") {
          await waitFor("step 1 to spin", () => markerLines(marker).includes("start p:1"));
          expect(markerLines(marker)).not.toContain("done p:1");
          gate.open();
        }
      }
    } finally {
      gate.open();
    }
    expect(seen).toEqual(["begin:", "step:p:0", "step:p:1"]);
  });

  it("a streamed run's events come from its graph thread whole and in order", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const steps = 4;
    const events: Array<{ event: string; data: unknown }> = [];
    for await (const chunk of client.runs.stream(thread_id, "steps", {
      input: job({ label: "o", steps }),
      streamMode: ["values", "updates"],
    }))
      events.push(chunk);
    expect(events.map((e) => e.event)).toEqual([
      "metadata",
      "values",
      // begin, then each step: its update, then the state after it.
      ...Array.from({ length: steps + 1 }, () => ["updates", "values"]).flat(),
    ]);
    const logs = events.filter((e) => e.event === "values").map((e) => (e.data as { log: string[] }).log);
    expect(logs).toEqual(Array.from({ length: steps + 2 }, (_, n) => logOf("o", Math.max(0, n - 1))));
  });
});

// A project's TypeScript modules that the storage loads (the store's embeddings function, a custom encryption module)
// are imported on a graph thread too, through tsx's loader like the graphs: a thread that could not load them would
// leave runs on the API thread (the fallback), saying so in the log.
describe("graph threads with the project's TypeScript store embeddings and custom encryption", () => {
  const projects = [
    { name: "store embeddings", config: "test/fixtures/semantic-project/langgraph.json", headers: {} },
    {
      name: "custom encryption",
      config: "test/fixtures/encryption-project/langgraph.json",
      headers: { authorization: "Bearer token-alice" },
    },
  ];
  for (const p of projects) {
    describe(p.name, () => {
      // A CLI process: it runs Hangar compiled, as installed (in this process, Hangar's sources need tsx before all).
      const server = useHangar({ process: true, config: p.config, env: { HANGAR_GRAPH_THREADS: "1" } });
      it("the thread loads them and the run executes there", async () => {
        const client = new Client({
          apiUrl: server.server.url,
          defaultHeaders: p.headers,
          callerOptions: { maxRetries: 0 },
        });
        const { thread_id } = await client.threads.create();
        const values = (await client.runs.wait(thread_id, "chat", {
          input: { messages: [{ role: "user", content: "hi" }] },
        })) as { messages: unknown[] };
        expect(values.messages).toHaveLength(2);
        // The run waited for a ready thread; the pool says so once its start has settled.
        await waitFor("the graph thread's start to be logged", () =>
          /graph threads ready: 1|could not load the graphs|no graph thread could load/.test(
            server.server.output(),
          ),
        );
        expect(server.server.output()).not.toMatch(/could not load the graphs|no graph thread could load/);
        expect(server.server.output()).toMatch(/graph threads ready: 1/);
      });
    });
  }
});
