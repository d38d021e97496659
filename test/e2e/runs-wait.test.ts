// End-to-end: POST /threads/{id}/runs/wait and POST /runs/wait through the official SDK, against `hangar dev`.
import { describe, expect, it } from "vitest";
import { postJson } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";
import { graph as researchGraph } from "../../examples/src/research.ts";

interface ResearchValues {
  topic: string;
  findings: string[];
  summary: string;
}

/** The research example run in-process (no server): the reference for what the server must return. */
const local = (topic: string) => researchGraph.invoke({ topic });

const hangar = useHangar();

describe("runs wait", () => {
  it("returns the final values of the thread", async () => {
    const { thread_id } = await hangar.client.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;
    const out = (await hangar.client.runs.wait(thread_id, "research", {
      input: { topic: "owls" },
      onRunCreated: (meta) => (created = meta),
    })) as unknown as ResearchValues;
    expect(out.topic).toBe("owls");
    expect(out).toEqual(await local("owls"));
    expect(out.findings).toContain("web: facts about owls");

    const state = await hangar.client.threads.getState<ResearchValues>(thread_id);
    expect(state.values).toEqual(out);
    expect(state.next).toEqual([]);
    expect((await hangar.client.threads.get(thread_id)).status).toBe("idle");

    // The run named by Content-Location is the finished run of this thread.
    expect(created?.thread_id).toBe(thread_id);
    const run = await hangar.client.runs.get(thread_id, created!.run_id);
    expect(run.status).toBe("success");
    expect((await hangar.client.runs.list(thread_id)).map((r) => r.run_id)).toEqual([created!.run_id]);
  });

  it("answers with Content-Location naming the run", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const res = await postJson(hangar.server.url, `/threads/${thread_id}/runs/wait`, {
      assistant_id: "chat",
      input: { messages: [{ type: "human", content: "hi" }] },
    });
    expect(res.status).toBe(200);
    const location = res.headers.get("content-location");
    expect(location).toMatch(new RegExp(`^/threads/${thread_id}/runs/[0-9a-f-]{36}$`));
    const runId = location!.split("/").pop()!;
    expect((await hangar.client.runs.get(thread_id, runId)).status).toBe("success");
    expect(res.body.messages.map((m: { type: string }) => m.type)).toEqual(["human", "ai"]);
  });

  it("passes config, context and metadata to the run", async () => {
    const { thread_id } = await hangar.client.threads.create();
    let runId = "";
    const out = (await hangar.client.runs.wait(thread_id, "research", {
      input: { topic: "bees" },
      config: { configurable: { tenant: "acme" }, tags: ["e2e-tag"] },
      context: { user: "u1" },
      metadata: { purpose: "e2e", attempt_label: "first" },
      onRunCreated: (meta) => (runId = meta.run_id),
    })) as unknown as ResearchValues;
    expect(out).toEqual(await local("bees"));

    const run = await hangar.client.runs.get(thread_id, runId);
    expect(run.status).toBe("success");
    expect(run.metadata).toMatchObject({ purpose: "e2e", attempt_label: "first" });
    const listed = (await hangar.client.runs.list(thread_id)).find((r) => r.run_id === runId);
    expect(listed?.metadata).toMatchObject({ purpose: "e2e" });
    // The official API keeps the creation arguments in `kwargs`.
    const kwargs = (run as unknown as { kwargs: any }).kwargs;
    expect(kwargs.context).toEqual({ user: "u1" });
    expect(kwargs.config.configurable.tenant).toBe("acme");

    // LangGraph copies run metadata and configurable values into the checkpoint metadata.
    const state = await hangar.client.threads.getState(thread_id);
    expect(state.metadata).toMatchObject({ purpose: "e2e", tenant: "acme" });
  });

  it("records the run's kwargs in the official shape", async () => {
    const kwargsOf = (run: object) => (run as { kwargs: Record<string, any> }).kwargs;
    const { thread_id } = await hangar.client.threads.create();
    const plain = await hangar.client.runs.create(thread_id, "research", { input: { topic: "ants" } });
    expect(kwargsOf(plain)).toEqual({
      input: { topic: "ants" },
      config: {
        configurable: expect.objectContaining({ thread_id, run_id: plain.run_id, graph_id: "research" }),
        metadata: expect.any(Object),
      },
      context: {},
      stream_mode: ["values"],
      temporary: false,
      subgraphs: false,
      resumable: false,
    });
    await hangar.client.runs.join(thread_id, plain.run_id);
    // The stored record is the same (the list and the get read it back).
    expect(kwargsOf(await hangar.client.runs.get(thread_id, plain.run_id))).toEqual(kwargsOf(plain));

    const given = await hangar.client.runs.create(thread_id, "research", {
      input: { topic: "moths" },
      config: { tags: ["t1"], recursion_limit: 40 },
      context: { user: "u2" },
      streamMode: ["updates"],
      streamResumable: true,
      streamSubgraphs: true,
      durability: "exit",
      interruptBefore: ["write"],
      feedbackKeys: ["score"],
    });
    const k = kwargsOf(given);
    expect(k).toMatchObject({
      config: { tags: ["t1"], recursion_limit: 40 },
      context: { user: "u2" },
      stream_mode: ["updates"],
      resumable: true,
      subgraphs: true,
      temporary: false,
      interrupt_before: ["write"],
      feedback_keys: ["score"],
      // The official dev server records no durability; Hangar keeps one that is not the default.
      durability: "exit",
    });
    expect(k).not.toHaveProperty("stream_resumable");
    await hangar.client.runs.join(thread_id, given.run_id);

    // A run with no thread, whose thread goes when it ends, is temporary; one kept is not.
    const gone = await hangar.client.runs.create(null, "research", { input: { topic: "gnats" } });
    expect(kwargsOf(gone)).toMatchObject({ temporary: true, resumable: false });
    const kept = await hangar.client.runs.create(null, "research", {
      input: { topic: "flies" },
      // The API's value (the SDK's type names other ones).
      onCompletion: "keep" as never,
    });
    expect(kwargsOf(kept).temporary).toBe(false);
    await hangar.client.runs.join(kept.thread_id, kept.run_id);
  });

  it("stateless POST /runs/wait returns the output", async () => {
    const out = (await hangar.client.runs.wait(null, "research", {
      input: { topic: "bats" },
    })) as unknown as ResearchValues;
    expect(out).toEqual(await local("bats"));
    expect(out.findings).toContain("docs: facts about bats");

    const chat = (await hangar.client.runs.wait(null, "chat", {
      input: { messages: [{ type: "human", content: "hello" }] },
    })) as { messages: Array<{ type: string; content: string }> };
    expect(chat.messages.map((m) => m.type)).toEqual(["human", "ai"]);
    expect(chat.messages[1].content.length).toBeGreaterThan(0);
  });

  it("a failing run reports the error", async () => {
    const { thread_id } = await hangar.client.threads.create();
    const out = (await hangar.client.runs.wait(thread_id, "chat", {
      input: { messages: [{ type: "nonsense-role", content: "x" }] },
      raiseError: false,
    })) as { __error__?: { error: string; message: string } };
    expect(out.__error__).toBeDefined();
    expect(typeof out.__error__!.message).toBe("string");
    await expect(
      hangar.client.runs.wait(thread_id, "chat", {
        input: { messages: [{ type: "nonsense-role", content: "y" }] },
      }),
    ).rejects.toThrow();
    expect((await hangar.client.threads.get(thread_id)).status).toBe("error");
  });
});
