// End-to-end: `hangar serve` serves the project on the embedded backend without DATABASE_URL/REDIS_URL, and
// refuses what cannot work (half a scale-out configuration, api/worker modes without it, an unreachable
// database) with clear lines and exit codes, never a stack trace.
import { describe, expect, it } from "vitest";
import { RUNS_CONFIG, Scratch, logOf, startHeld, waitFor } from "../helpers/runs.ts";
import { cleanupDir, runHangar, startHangar, tempDir, useHangar, EXAMPLE_CONFIG } from "../helpers/server.ts";

const hangar = useHangar({ process: true, command: "serve" });
const NO_BACKEND = { DATABASE_URL: "", REDIS_URL: "" };

describe("hangar serve", () => {
  it("serves the project like dev does (embedded storage, no reload)", async () => {
    const { client, server } = hangar;
    const info = await (await fetch(`${server.url}/info`)).json();
    expect(info.graphs).toEqual(["chat", "research", "approval"]);
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "research", { input: { topic: "serve" } });
    expect((values as { summary: string }).summary).toBe("serve: 3 findings");
  });

  it("needs both DATABASE_URL and REDIS_URL for the scale-out backend", async () => {
    const r = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--port", "0"], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres",
      REDIS_URL: "",
    });
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/REDIS_URL is not set; the scale-out backend needs both/);
  });

  it("refuses --data-dir with the scale-out backend", async () => {
    const r = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--port", "0", "--data-dir", "/tmp/x"], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres",
      REDIS_URL: "redis://127.0.0.1:6379",
    });
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/--data-dir is for the embedded backend/);
  });

  it("retries an unreachable database, then gives up with one clear line and no stack trace", async () => {
    const r = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--port", "0"], {
      DATABASE_URL: "postgres://postgres:secret@127.0.0.1:1/postgres",
      REDIS_URL: "redis://127.0.0.1:6379",
      HANGAR_CONNECT_TIMEOUT_SECONDS: "2",
    });
    expect(r.code).toBe(1);
    expect(r.output).toMatch(/cannot reach PostgreSQL at 127\.0\.0\.1:1.*retrying PostgreSQL in/);
    expect(r.output).toMatch(/hangar serve: cannot reach PostgreSQL at 127\.0\.0\.1:1.*gave up after 2 s/);
    expect(r.output).not.toMatch(/\n\s+at /);
    expect(r.output).not.toContain("secret");
  });

  it("refuses --mode worker on the embedded backend, and a bad --mode", async () => {
    const worker = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--mode", "worker"], NO_BACKEND);
    expect(worker.code).toBe(2);
    expect(worker.output).toMatch(/--mode worker needs the PostgreSQL \+ Redis backend/);
    const bad = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--mode", "both"], NO_BACKEND);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/--mode must be api, worker or all/);
  });

  it("SIGTERM lets a running run finish within HANGAR_SHUTDOWN_GRACE_SECONDS (embedded), then exits", async () => {
    const scratch = new Scratch();
    const dataDir = tempDir("hangar-serve-drain-");
    try {
      const env = { ...NO_BACKEND, HANGAR_SHUTDOWN_GRACE_SECONDS: "600" };
      const first = await startHangar({ process: true, command: "serve", config: RUNS_CONFIG, dataDir, env });
      const thread = await first.client.threads.create();
      const gate = scratch.gate();
      const run = await startHeld(first.client, thread.thread_id, "drain", 1, gate.file);
      const stopped = first.stop();
      // The server has stopped taking requests and waits for the run: only now may it go on.
      await waitFor("the server to wait for its running run", () =>
        /letting 1 running run\(s\) finish/.test(first.output()),
      );
      gate.open();
      await stopped;
      expect(first.output()).toMatch(/run finished: success/);
      // The stop is said when it begins and when it is over (its last line may reach the pipe after the exit).
      await waitFor("the stop to be said", () => /hangar serve: stopped/.test(first.output()));
      expect(first.output()).toMatch(
        /hangar serve: SIGTERM: stopping[^]*letting 1 running[^]*hangar serve: stopped/,
      );
      // Nothing was left for the next start: the run ended where it began, with every step done once.
      const next = await startHangar({ process: true, command: "serve", config: RUNS_CONFIG, dataDir, env });
      try {
        expect((await next.client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
        const state = await next.client.threads.getState<{ log: string[] }>(thread.thread_id);
        expect(state.values.log).toEqual(logOf("drain", 4));
        expect(next.output()).not.toMatch(/taken up again/);
      } finally {
        await next.stop();
      }
    } finally {
      scratch.cleanup();
      cleanupDir(dataDir);
    }
  });
});
