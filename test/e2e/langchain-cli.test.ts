// `hangar check`, `hangar dev` and `hangar serve` (embedded) as CLI processes load the LangChain project
// (test/fixtures/langchain-project) and serve a human-in-the-loop approval of its createAgent. Embedded only (in
// vitest.config.ts): on postgres every e2e file already goes through `serve`, and langchain-agents.test.ts runs
// the project's agents on both backends.
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { CONFIG, GRAPH_IDS, human, lines, type AgentValues } from "../helpers/langchain-project.ts";
import { runHangar, useHangar } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

// `hangar check`, `hangar dev` and `hangar serve` as the processes users run (on postgres every e2e file already
// goes through serve). Each fails on the commit before createAgent's .graph was unwrapped (5ba4b98).
describe("the CLI loads the LangChain project", () => {
  it("hangar check passes every graph", async () => {
    const r = await runHangar(["check", "--config", CONFIG]);
    for (const graphId of GRAPH_IDS) expect(r.output).toContain(`graph ok: ${graphId} (`);
    expect(r.code, r.output).toBe(0);
  });

  /** The HITL interrupt and an approval, through a server the CLI started. */
  async function approveOnce(client: Client): Promise<void> {
    const { thread_id } = await client.threads.create();
    await client.runs.wait(thread_id, "agent", { input: human('call send_email {"to":"a@b.c","body":"x"}') });
    expect((await client.threads.get(thread_id)).status).toBe("interrupted");
    const out = (await client.runs.wait(thread_id, "agent", {
      command: { resume: { decisions: [{ type: "approve" }] } },
    })) as AgentValues;
    expect(lines(out).at(-1)).toBe("ai: Done: sent to a@b.c: x");
  }

  describe("hangar dev", () => {
    const dev = useHangar({ process: true, command: "dev", config: CONFIG });
    it("serves the project", async () => {
      // The list of graphs may be printed just after the "listening" line the harness waits for.
      await waitFor("the graphs listed in dev's output", () =>
        GRAPH_IDS.every((graphId) => dev.server.output().includes(graphId)),
      );
      await approveOnce(dev.client);
    });
  });

  describe("hangar serve (embedded)", () => {
    const serve = useHangar({ process: true, command: "serve", config: CONFIG });
    it("serves the project", async () => {
      await approveOnce(serve.client);
      const [deep] = await serve.client.assistants.search({ graphId: "deep" });
      expect(deep.graph_id).toBe("deep");
    });
  });
});
