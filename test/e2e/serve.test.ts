// End-to-end: `hangar serve` serves the project on the embedded backend, and refuses what this build
// cannot do yet (PostgreSQL + Redis, api/worker modes) with one clear line and exit code 2.
import { describe, expect, it } from "vitest";
import { runHangar, useHangar, EXAMPLE_CONFIG } from "../helpers/server.ts";

const hangar = useHangar({ command: "serve" });

describe("hangar serve", () => {
  it("serves the project like dev does (embedded storage, no reload)", async () => {
    const { client, server } = hangar;
    const info = await (await fetch(`${server.url}/info`)).json();
    expect(info.graphs).toEqual(["chat", "research", "approval"]);
    const thread = await client.threads.create();
    const values = await client.runs.wait(thread.thread_id, "research", { input: { topic: "serve" } });
    expect((values as { summary: string }).summary).toBe("serve: 3 findings");
  });

  it("says the PostgreSQL + Redis backend is not in this build when DATABASE_URL is set", async () => {
    const r = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--port", "0"], {
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/postgres",
    });
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/PostgreSQL \+ Redis backend is not in this build/);
  });

  it("refuses --mode worker on the embedded backend, and a bad --mode", async () => {
    const worker = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--mode", "worker"]);
    expect(worker.code).toBe(2);
    expect(worker.output).toMatch(/--mode worker needs the PostgreSQL \+ Redis backend/);
    const bad = await runHangar(["serve", "--config", EXAMPLE_CONFIG, "--mode", "both"]);
    expect(bad.code).toBe(2);
    expect(bad.output).toMatch(/--mode must be api, worker or all/);
  });
});
