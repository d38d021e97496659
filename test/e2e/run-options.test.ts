// End-to-end: run options passed through to the graph and the queue: durability and after_seconds.
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar();

async function historyLength(durability: "sync" | "async" | "exit"): Promise<number> {
  const { client } = hangar;
  const thread = await client.threads.create();
  const values = await client.runs.wait(thread.thread_id, "research", {
    input: { topic: durability },
    durability,
  });
  expect((values as { summary: string }).summary).toBe(`${durability}: 3 findings`);
  return (await client.threads.getHistory(thread.thread_id, { limit: 100 })).length;
}

describe("run options", () => {
  it("durability reaches the graph: exit keeps only the final checkpoint, sync and async every step", async () => {
    const sync = await historyLength("sync");
    const asyncLen = await historyLength("async");
    const exit = await historyLength("exit");
    expect(asyncLen).toBe(sync);
    expect(sync).toBeGreaterThan(2);
    expect(exit).toBeLessThan(sync);
  });

  it("after_seconds keeps a background run pending until its time has come, then runs it", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "research", {
      input: { topic: "later" },
      afterSeconds: 1,
    });
    // A run started after it on another thread finishes while the delayed one still waits.
    const other = await client.threads.create();
    await client.runs.wait(other.thread_id, "research", { input: { topic: "now" } });
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("pending");
    const values = await client.runs.join(thread.thread_id, run.run_id);
    expect((values as { summary: string }).summary).toBe("later: 3 findings");
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
  });
});
