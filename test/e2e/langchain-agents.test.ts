// End-to-end: agents built with the real LangChain packages (test/fixtures/langchain-project) load and run
// through the official SDK, on both backends: createAgent of langchain 1.5 and 1.4 (its human-in-the-loop
// middleware interrupting a tool call, then each decision langchain accepts; a tool writing the store; history,
// its metadata filter, forks; the run's metadata), deepagents' createDeepAgent delegating to a subagent,
// createReactAgent, langgraph-supervisor and langgraph-swarm, and one agent per langchain middleware whose effect
// a client sees. (`hangar check`, `dev` and `serve` as CLI processes: langchain-cli.test.ts.)
// Where the official server answers the same (schemas, a structured response kept out of the state), the test
// says so: the behaviour is LangChain's or LangGraph's, not the server's.
import { randomUUID } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { CONFIG, GRAPH_IDS, human, lines, textOf, type AgentValues } from "../helpers/langchain-project.ts";
import { useHangar } from "../helpers/server.ts";

/**
 * Runs `graphId` on a thread (a new one unless given) once per message; returns the thread and what the last
 * run returned.
 */
async function converse(
  client: Client,
  graphId: string,
  messages: string[],
  opts: { thread?: string; context?: Record<string, unknown> } = {},
): Promise<{ thread: string; values: AgentValues }> {
  const thread = opts.thread ?? (await client.threads.create()).thread_id;
  let values: AgentValues = { messages: [] };
  for (const m of messages) {
    values = (await client.runs.wait(thread, graphId, {
      input: human(m),
      ...(opts.context ? { context: opts.context } : {}),
    })) as AgentValues;
  }
  return { thread, values };
}

async function stateOf(client: Client, thread: string): Promise<AgentValues> {
  return (await client.threads.getState<AgentValues>(thread)).values;
}

describe("a LangChain project", () => {
  // With graph threads, as `hangar dev` runs by default: the real packages' agents load and run on a thread.
  const hangar = useHangar({ config: CONFIG, env: { HANGAR_GRAPH_THREADS: "2" } });

  it("loads every graph of the project, each with its system assistant", async () => {
    const info = (await (await fetch(`${hangar.server.url}/info`)).json()) as { graphs: string[] };
    expect(info.graphs).toEqual(GRAPH_IDS);
    for (const graphId of GRAPH_IDS) {
      const found = await hangar.client.assistants.search({ graphId, metadata: { created_by: "system" } });
      expect(found.map((a) => a.graph_id)).toEqual([graphId]);
    }
  });

  describe.each([
    // langchain 1.5: send_email's args are {to, body}; its output names both.
    { graphId: "agent", args: { to: "ann@example.com", body: "hi" }, sent: "sent to ann@example.com: hi" },
    // langchain 1.4 (installed as langchain-1-4): send_email takes {to}.
    { graphId: "agent_1_4", args: { to: "ann@example.com" }, sent: "sent to ann@example.com" },
  ])("createAgent with humanInTheLoopMiddleware ($graphId)", ({ graphId, args, sent }) => {
    const ask = `call send_email ${JSON.stringify(args)}`;

    /** A thread whose run stopped at the HITL interrupt before send_email. */
    async function interrupted(): Promise<string> {
      const { thread, values } = await converse(hangar.client, graphId, [ask]);
      expect((values as { __interrupt__?: unknown[] }).__interrupt__).toHaveLength(1);
      return thread;
    }

    it("interrupts before the tool runs, the interrupt's value as langchain makes it", async () => {
      const thread = await interrupted();
      const t = await hangar.client.threads.get(thread);
      expect(t.status).toBe("interrupted");
      const request = {
        actionRequests: [
          {
            name: "send_email",
            args,
            description: `Tool execution requires approval\n\nTool: send_email\nArgs: ${JSON.stringify(args, null, 2)}`,
          },
        ],
        reviewConfigs: [{ actionName: "send_email", allowedDecisions: ["approve", "edit", "reject"] }],
      };
      const interrupts = Object.values(t.interrupts ?? {}).flat();
      expect(interrupts.map((i) => i.value)).toEqual([request]);
      const state = await hangar.client.threads.getState<AgentValues>(thread);
      expect(state.tasks.flatMap((task) => task.interrupts.map((i) => i.value))).toEqual([request]);
      expect(lines(state.values)).toEqual([`human: ${ask}`, `ai: calls send_email ${JSON.stringify(args)}`]);
    });

    it("in events mode, the messages in a node's Command or Send are message dicts, as the official server sends them", async () => {
      const thread = await interrupted();
      const events: { event: string; data: any }[] = [];
      for await (const part of hangar.client.runs.stream(thread, graphId, {
        command: { resume: { decisions: [{ type: "approve" }] } },
        streamMode: "events",
      }))
        events.push(part);
      // Somewhere in the run's events a node ended with a Command (or Send) carrying messages.
      const carried: unknown[] = [];
      const constructorForm: string[] = [];
      const walk = (v: unknown, path: string): void => {
        if (!v || typeof v !== "object") return;
        const o = v as Record<string, any>;
        if (o.lc === 1 && o.type === "constructor") constructorForm.push(path);
        if (
          (o.lg_name === "Command" || o.lg_name === "Send") &&
          Array.isArray((o.update ?? o.args)?.messages)
        )
          carried.push(...(o.update ?? o.args).messages);
        for (const [k, x] of Object.entries(o)) walk(x, `${path}/${k}`);
      };
      events.forEach((e, i) => walk(e.data, `#${i}`));
      expect(carried.length).toBeGreaterThan(0);
      for (const m of carried)
        expect(m).toMatchObject({ type: expect.any(String), content: expect.anything() });
      expect(constructorForm).toEqual([]);
    });

    it("streamed in messages mode, the tool's message has the id LangGraph's messages mode gives it, in the stream and the state", async () => {
      const thread = await interrupted();
      const completed: { id?: string; type?: string }[] = [];
      for await (const part of hangar.client.runs.stream(thread, graphId, {
        command: { resume: { decisions: [{ type: "approve" }] } },
        streamMode: "messages",
      }))
        if (part.event === "messages/complete") completed.push(...(part.data as { id?: string }[]));
      const tool = (await stateOf(hangar.client, thread)).messages.find((m) => m.type === "tool") as
        { id?: string; tool_call_id?: string } | undefined;
      // As the official server (its messages mode): `run-<run id>-tool-<tool call id>`, not a random id.
      expect(tool?.id).toMatch(new RegExp(`^run-[0-9a-f-]{36}-tool-${tool?.tool_call_id}$`));
      expect(completed.filter((m) => m.type === "tool").map((m) => m.id)).toEqual([tool?.id]);
    });

    it("resumed with an approval (runs.wait), runs the tool with its arguments", async () => {
      const thread = await interrupted();
      const out = (await hangar.client.runs.wait(thread, graphId, {
        command: { resume: { decisions: [{ type: "approve" }] } },
      })) as AgentValues;
      expect(lines(out).slice(2)).toEqual([`tool(send_email): ${sent}`, `ai: Done: ${sent}`]);
      expect((await hangar.client.threads.get(thread)).status).toBe("idle");
    });

    it("resumed with an edit (runs.stream), runs the tool with the edited action's arguments", async () => {
      const thread = await interrupted();
      const edited = { ...args, to: "bob@example.com" };
      let last: AgentValues | undefined;
      for await (const chunk of hangar.client.runs.stream(thread, graphId, {
        command: {
          resume: { decisions: [{ type: "edit", editedAction: { name: "send_email", args: edited } }] },
        },
        streamMode: "values",
      })) {
        if (chunk.event === "values") last = chunk.data as AgentValues;
      }
      const sentEdited = sent.replace("ann@", "bob@");
      expect(lines(last!).slice(1)).toEqual([
        `ai: calls send_email ${JSON.stringify(edited)}`,
        `tool(send_email): ${sentEdited}`,
        `ai: Done: ${sentEdited}`,
      ]);
      expect(lines(await stateOf(hangar.client, thread))).toEqual(lines(last!));
    });

    it("resumed with a rejection, answers the model with langchain's tool message instead of running the tool", async () => {
      const thread = await interrupted();
      const out = (await hangar.client.runs.wait(thread, graphId, {
        command: { resume: { decisions: [{ type: "reject", message: "Do not e-mail Ann." }] } },
      })) as AgentValues;
      expect(lines(out).slice(2)).toEqual([
        "tool(send_email): Do not e-mail Ann.",
        "ai: Done: Do not e-mail Ann.",
      ]);
      expect(out.messages[2].status).toBe("error");
      // Without a message, langchain's own words.
      const other = await interrupted();
      const plain = (await hangar.client.runs.wait(other, graphId, {
        command: { resume: { decisions: [{ type: "reject" }] } },
      })) as AgentValues;
      expect(textOf(plain.messages[2])).toBe("User rejected the tool call for `send_email` with id call_1_0");
      expect((await hangar.client.threads.get(other)).status).toBe("idle");
    });
  });

  describe("createAgent (langchain 1.5) on the server's threads and store", () => {
    it("a tool's store write is readable through the store API", async () => {
      const { values } = await converse(hangar.client, "agent", ['call save_note {"note":"buy milk"}']);
      expect(lines(values).slice(2)).toEqual(["tool(save_note): saved buy milk", "ai: Done: saved buy milk"]);
      const item = await hangar.client.store.getItem(["notes"], "latest");
      expect(item?.value).toEqual({ note: "buy milk" });
    });

    it("the run records graph_id, assistant_id and the thread's metadata; history filters by them", async () => {
      const tag = `lc-${randomUUID()}`;
      const { thread_id: thread } = await hangar.client.threads.create({ metadata: { project: tag } });
      const run = await hangar.client.runs.create(thread, "agent", {
        input: human("hello"),
        metadata: { origin: "test" },
      });
      await hangar.client.runs.join(thread, run.run_id);
      const [assistant] = await hangar.client.assistants.search({ graphId: "agent" });
      const record = await hangar.client.runs.get(thread, run.run_id);
      expect(record.status).toBe("success");
      expect(record.metadata).toMatchObject({
        graph_id: "agent",
        assistant_id: assistant.assistant_id,
        project: tag,
        origin: "test",
      });

      const history = await hangar.client.threads.getHistory<AgentValues>(thread, { limit: 100 });
      expect(history.length).toBeGreaterThanOrEqual(3);
      expect(lines(history[0].values)).toEqual(["human: hello", "ai: You said: hello"]);
      for (const s of history) expect(s.metadata).toMatchObject({ run_id: run.run_id, project: tag });
      const ids = history.map((s) => s.checkpoint.checkpoint_id);
      for (const metadata of [{ project: tag }, { origin: "test", graph_id: "agent" }]) {
        const filtered = await hangar.client.threads.getHistory(thread, { limit: 100, metadata });
        expect(filtered.map((s) => s.checkpoint.checkpoint_id)).toEqual(ids);
      }
      expect(await hangar.client.threads.getHistory(thread, { metadata: { project: "other" } })).toEqual([]);
    });

    /** A thread of two turns, and its history (newest first). */
    async function twoTurns() {
      const { thread } = await converse(hangar.client, "agent", ["first", "second"]);
      const history = await hangar.client.threads.getHistory<AgentValues>(thread, { limit: 100 });
      return { thread, history };
    }

    /** The checkpoints of the thread whose parent is `checkpointId`: more than one where history branched. */
    async function children(thread: string, checkpointId: string) {
      const history = await hangar.client.threads.getHistory<AgentValues>(thread, { limit: 100 });
      return history.filter((s) => s.parent_checkpoint?.checkpoint_id === checkpointId);
    }

    it("a run from an earlier checkpoint starts a new branch; the old one stays in history", async () => {
      const { thread, history } = await twoTurns();
      const endOfFirst = history.find((s) => s.values.messages?.length === 2 && s.next.length === 0);
      expect(endOfFirst, "the checkpoint ending the first turn").toBeDefined();
      const fork = endOfFirst!.checkpoint.checkpoint_id!;
      const out = (await hangar.client.runs.wait(thread, "agent", {
        checkpointId: fork,
        input: human("instead"),
      })) as AgentValues;
      expect(lines(out)).toEqual([
        "human: first",
        "ai: You said: first",
        "human: instead",
        "ai: You said: instead",
      ]);
      expect(lines(await stateOf(hangar.client, thread))).toEqual(lines(out));
      // Two input checkpoints follow the fork point, each followed by its turn's message.
      const inputs = await children(thread, fork);
      expect(inputs.map((s) => s.metadata?.source)).toEqual(["input", "input"]);
      const turns = await Promise.all(
        inputs.map(async (s) =>
          (await children(thread, s.checkpoint.checkpoint_id!)).map((c) => lines(c.values)[2]),
        ),
      );
      expect(turns.flat().sort()).toEqual(["human: instead", "human: second"]);
    });

    it("a state update at an earlier checkpoint, then a run, continues from the update", async () => {
      const { thread, history } = await twoTurns();
      // Before the model's call of the second turn: the human message edited (same id), the model runs again.
      const before = history.find((s) => s.values.messages?.length === 3 && s.next.includes("model_request"));
      expect(before, "the checkpoint before the second turn's model call").toBeDefined();
      const fork = before!.checkpoint.checkpoint_id!;
      const second = before!.values.messages[2];
      await hangar.client.threads.updateState(thread, {
        checkpointId: fork,
        values: { messages: [{ id: second.id, type: "human", content: "edited turn" }] },
      });
      const out = (await hangar.client.runs.wait(thread, "agent", { input: null })) as AgentValues;
      expect(lines(out)).toEqual([
        "human: first",
        "ai: You said: first",
        "human: edited turn",
        "ai: You said: edited turn",
      ]);
      expect(await children(thread, fork)).toHaveLength(2);
    });
  });

  describe("deepagents' createDeepAgent", () => {
    const ask = 'call task {"description":"find the capital of France","subagent_type":"researcher"}';

    it("delegates to its subagent through the task tool and ends with the subagent's answer", async () => {
      const { thread, values } = await converse(hangar.client, "deep", [ask]);
      expect(lines(values).slice(1)).toEqual([
        'ai: calls task {"description":"find the capital of France","subagent_type":"researcher"}',
        "tool(task): You said: find the capital of France",
        "ai: Done: You said: find the capital of France",
      ]);
      const state = await stateOf(hangar.client, thread);
      expect(state).toHaveProperty("files");
      const { values: wrote } = await converse(hangar.client, "deep", [
        'call write_file {"file_path":"/notes.txt","content":"hello"}',
      ]);
      expect((wrote.files as Record<string, { content: unknown }>)["/notes.txt"].content).toBe("hello");
    });

    it("streams the subagent's events as subgraph events (mode|namespace)", async () => {
      const thread = (await hangar.client.threads.create()).thread_id;
      const events: { event: string; data: unknown }[] = [];
      for await (const chunk of hangar.client.runs.stream(thread, "deep", {
        input: human(ask),
        streamMode: ["updates"],
        streamSubgraphs: true,
      })) {
        events.push(chunk);
      }
      const names = events.map((e) => e.event);
      expect(names[0]).toBe("metadata");
      const sub = events.filter((e) => /^updates\|tools:[0-9a-f-]+$/.test(e.event));
      expect(sub.length, `subgraph events among ${names.join(", ")}`).toBeGreaterThan(0);
      expect(JSON.stringify(sub.map((e) => e.data))).toContain("You said: find the capital of France");
      expect(names).toContain("updates");
    });
  });

  it("createReactAgent (LangGraph's prebuilt) calls its tool", async () => {
    const { values } = await converse(hangar.client, "react", ['call add {"a":2,"b":3}']);
    expect(lines(values).slice(1)).toEqual(['ai: calls add {"a":2,"b":3}', "tool(add): 5", "ai: Done: 5"]);
  });

  it("langgraph-supervisor hands the work to its agent and gets it back", async () => {
    const { values } = await converse(hangar.client, "supervisor", ["call transfer_to_researcher {}"]);
    expect(lines(values).slice(1)).toEqual([
      "ai: calls transfer_to_researcher {}",
      "tool(transfer_to_researcher): Successfully transferred to researcher",
      "ai: Done: Successfully transferred to researcher",
      "ai: calls transfer_back_to_supervisor {}",
      "tool(transfer_back_to_supervisor): Successfully transferred back to supervisor",
      "ai: Done: Successfully transferred back to supervisor",
    ]);
    expect(values.messages.map((m) => m.name).slice(1)).toEqual([
      "supervisor",
      "transfer_to_researcher",
      "researcher",
      "researcher",
      "transfer_back_to_supervisor",
      "supervisor",
    ]);
  });

  it("langgraph-swarm hands the conversation over, and the thread remembers the active agent", async () => {
    const { thread, values } = await converse(hangar.client, "swarm", ["call transfer_to_bob {}"]);
    expect(lines(values).slice(1)).toEqual([
      "ai: calls transfer_to_bob {}",
      "tool(transfer_to_bob): Successfully transferred to bob",
      "ai: Done: Successfully transferred to bob",
    ]);
    expect((await stateOf(hangar.client, thread)).activeAgent).toBe("bob");
    const next = await converse(hangar.client, "swarm", ["hello bob"], { thread });
    expect(next.values.messages.at(-1)).toMatchObject({ name: "bob", content: "You said: hello bob" });
  });

  describe("langchain 1.5 middleware", () => {
    it("summarizationMiddleware replaces older messages with a summary in the thread's state", async () => {
      const { thread } = await converse(hangar.client, "summarizing", ["one", "two", "three", "four"]);
      const { messages } = await stateOf(hangar.client, thread);
      // At the fourth turn the thread held 7 messages (trigger: 6): all but the last 2 summarized.
      expect(lines({ messages }).slice(1)).toEqual([
        "ai: You said: three",
        "human: four",
        "ai: You said: four",
      ]);
      expect(messages[0].type).toBe("human");
      expect(messages[0].additional_kwargs).toMatchObject({ lc_source: "summarization" });
      expect(textOf(messages[0])).toBe(
        "Here is a summary of the conversation to date:\n\nYou said: Summarize: Human: one\nAI: model, You said: one\n" +
          "Human: two\nAI: model, You said: two\nHuman: three",
      );
    });

    it("todoListMiddleware keeps the list write_todos wrote as `todos` in the state", async () => {
      const todos = [
        { content: "plan", status: "completed" },
        { content: "build", status: "in_progress" },
      ];
      const { thread, values } = await converse(hangar.client, "todos", [
        `call write_todos ${JSON.stringify({ todos })}`,
      ]);
      expect(lines(values).at(-2)).toBe(`tool(write_todos): Updated todo list to ${JSON.stringify(todos)}`);
      expect((await stateOf(hangar.client, thread)).todos).toEqual(todos);
    });

    it("toolCallLimitMiddleware stops a call past the thread's limit, with langchain's messages", async () => {
      const { thread, values } = await converse(hangar.client, "tool_limit", [
        "call ping {}",
        "call ping {}",
      ]);
      expect(lines(values)).toEqual([
        "human: call ping {}",
        "ai: calls ping {}",
        "tool(ping): pong",
        "ai: Done: pong",
        "human: call ping {}",
        "ai: calls ping {}",
        "tool(ping): Tool call limit exceeded. Do not call 'ping' again.",
        "ai: 'ping' tool call limit reached: thread limit exceeded (2/1 calls).",
      ]);
      expect(values.messages[6].status).toBe("error");
      expect((await stateOf(hangar.client, thread)).threadToolCallCount).toEqual({ ping: 1 });
      // The limit is the thread's: another thread may call ping.
      const other = await converse(hangar.client, "tool_limit", ["call ping {}"]);
      expect(lines(other.values).at(-1)).toBe("ai: Done: pong");
    });

    it("modelCallLimitMiddleware counts model calls across the runs of a thread", async () => {
      const { thread, values } = await converse(hangar.client, "model_limit", ["a", "b", "c"]);
      expect(lines(values).slice(-2)).toEqual([
        "human: c",
        "ai: Model call limits exceeded: thread level call limit reached with 2 model calls",
      ]);
      expect((await stateOf(hangar.client, thread)).threadModelCallCount).toBe(2);
      expect((await hangar.client.threads.get(thread)).status).toBe("idle");
      const other = await converse(hangar.client, "model_limit", ["a"]);
      expect(lines(other.values).at(-1)).toBe("ai: You said: a");
    });

    it("modelFallbackMiddleware answers with the fallback model when the first one fails", async () => {
      const { thread, values } = await converse(hangar.client, "fallback", ["hi"]);
      expect(lines(values)).toEqual(["human: hi", "ai: You said: hi"]);
      expect((await hangar.client.threads.get(thread)).status).toBe("idle");
    });

    it("toolRetryMiddleware retries a tool that failed once", async () => {
      const { values } = await converse(hangar.client, "tool_retry", ["call flaky {}"]);
      expect(lines(values).slice(2)).toEqual([
        "tool(flaky): worked on attempt 2",
        "ai: Done: worked on attempt 2",
      ]);
    });

    it("contextEditingMiddleware clears older tool outputs past its threshold", async () => {
      const { thread, values } = await converse(hangar.client, "context_editing", [
        'call fetch_page {"page":1}',
        'call fetch_page {"page":2}',
        "show tool outputs",
      ]);
      // What the model was given: the older output replaced by the placeholder, the last one kept.
      expect(lines(values).at(-1)).toBe("ai: Tool outputs: [cleared] | contents of page 2");
      // langchain edits the messages of the model request in place, which are the state's: the thread keeps the
      // cleared output too (so does the official server).
      const tools = (await stateOf(hangar.client, thread)).messages.filter((m) => m.type === "tool");
      expect(tools.map(textOf)).toEqual(["[cleared]", "contents of page 2"]);
      expect(tools[0].response_metadata).toMatchObject({
        context_editing: { cleared: true, strategy: "clear_tool_uses" },
      });
    });

    it("piiMiddleware masks an e-mail address of the input in the thread's state", async () => {
      const { thread, values } = await converse(hangar.client, "pii", ["mail me at john.doe@example.com"]);
      expect(lines(values)).toEqual([
        "human: mail me at j***@example.com",
        "ai: You said: mail me at j***@example.com",
      ]);
      const state = await stateOf(hangar.client, thread);
      expect(JSON.stringify(state)).not.toContain("john.doe");
      const history = await hangar.client.threads.getHistory(thread, { limit: 1 });
      expect(JSON.stringify(history[0].values)).not.toContain("john.doe");
    });

    it("dynamicSystemPromptMiddleware builds the prompt from the run's context, or the assistant's", async () => {
      const run = await converse(hangar.client, "dynamic_prompt", ["show system"], {
        context: { user_name: "Ada" },
      });
      expect(lines(run.values).at(-1)).toBe("ai: System: You help Ada.");
      const assistant = await hangar.client.assistants.create({
        graphId: "dynamic_prompt",
        context: { user_name: "Grace" },
      });
      const { thread_id } = await hangar.client.threads.create();
      const out = (await hangar.client.runs.wait(thread_id, assistant.assistant_id, {
        input: human("show system"),
      })) as AgentValues;
      expect(lines(out).at(-1)).toBe("ai: System: You help Grace.");
      // As the official server: createAgent's state is a StateSchema, whose graphs get no config or context
      // schema there (@langchain/langgraph-api "StateSchema doesn't have config schema support yet").
      const schemas = await (
        await fetch(`${hangar.server.url}/assistants/${assistant.assistant_id}/schemas`)
      ).json();
      expect(Object.keys(schemas as object).sort()).toEqual([
        "graph_id",
        "input_schema",
        "output_schema",
        "state_schema",
      ]);
    });

    it("a middleware of the project's own (createMiddleware) keeps its state field, shown in the state schema", async () => {
      const { thread } = await converse(hangar.client, "custom_middleware", ["a", "b"]);
      expect((await stateOf(hangar.client, thread)).model_calls).toBe(2);
      const [assistant] = await hangar.client.assistants.search({ graphId: "custom_middleware" });
      const schemas = await hangar.client.assistants.getSchemas(assistant.assistant_id);
      expect(schemas.state_schema?.properties?.model_calls).toMatchObject({ type: "number", default: 0 });
    });

    it("responseFormat: the structured response is the run's output, not the thread's state", async () => {
      const ask = 'call Weather {"city":"Paris","temperature":21}';
      const { thread, values } = await converse(hangar.client, "structured", [ask]);
      expect(values.structuredResponse).toEqual({ city: "Paris", temperature: 21 });
      expect(lines(values).at(-1)).toBe(
        'ai: Returning structured response: {"city":"Paris","temperature":21}',
      );
      // langchain declares structuredResponse an UntrackedValue of the output: never checkpointed (as on the
      // official server).
      expect(await stateOf(hangar.client, thread)).not.toHaveProperty("structuredResponse");
      let last: AgentValues | undefined;
      for await (const chunk of hangar.client.runs.stream(null, "structured", {
        input: human(ask),
        streamMode: "values",
      })) {
        if (chunk.event === "values") last = chunk.data as AgentValues;
      }
      expect(last?.structuredResponse).toEqual({ city: "Paris", temperature: 21 });
    });
  });
});
