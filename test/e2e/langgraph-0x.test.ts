// A project laid out as create-langgraph 1.1's new-langgraph-project template lays it out, with the 0.x
// LangGraph.js releases its package.json pins, really installed from the registry: Hangar refuses it at start
// (check, dev), naming the installed version and the upgrade to make, instead of serving graphs whose every
// run would fail on 1.x checkpoints. After the upgrade (the repository's 1.x packages linked in its place),
// the same project serves and runs.
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, ROOT, runHangar, startHangar, tempDir } from "../helpers/server.ts";

const GRAPH = `// The template's graph: one node that greets, then the end.
import { Annotation, StateGraph, messagesStateReducer } from "@langchain/langgraph";
import type { BaseMessage, BaseMessageLike } from "@langchain/core/messages";

const StateAnnotation = Annotation.Root({
  messages: Annotation<BaseMessage[], BaseMessageLike[]>({ reducer: messagesStateReducer, default: () => [] }),
});

const callModel = async () => ({ messages: [{ role: "assistant", content: "Hi there! How are you?" }] });

export const graph = new StateGraph(StateAnnotation)
  .addNode("callModel", callModel)
  .addEdge("__start__", "callModel")
  .addEdge("callModel", "__end__")
  .compile();
graph.name = "New Agent";
`;

/** `npm ...` in `cwd`, resolving with its exit code and output (npm's own test-run settings removed). */
function npm(args: string[], cwd: string): Promise<{ code: number | null; output: string }> {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("npm_")) delete env[k];
  return new Promise((res) => {
    const proc = spawn("npm", args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    proc.stdout.on("data", (d) => (output += d));
    proc.stderr.on("data", (d) => (output += d));
    proc.once("exit", (code) => res({ code, output }));
  });
}

let project: string;
let config: string;

beforeAll(async () => {
  project = tempDir("hangar-template-0x-");
  mkdirSync(join(project, "src/agent"), { recursive: true });
  writeFileSync(
    join(project, "package.json"),
    JSON.stringify({
      name: "new-langgraph-project",
      private: true,
      type: "module",
      dependencies: { "@langchain/core": "^0.3.40", "@langchain/langgraph": "^0.3.0" },
    }),
  );
  writeFileSync(join(project, "src/agent/graph.ts"), GRAPH);
  writeFileSync(join(project, ".env"), "# LANGSMITH_API_KEY=\n");
  config = join(project, "langgraph.json");
  writeFileSync(
    config,
    JSON.stringify({ node_version: "20", graphs: { agent: "./src/agent/graph.ts:graph" }, env: ".env" }),
  );
  const installed = await npm(
    ["install", "--no-audit", "--no-fund", "--prefer-offline", "--ignore-scripts"],
    project,
  );
  expect(installed.code, installed.output).toBe(0);
});

afterAll(() => cleanupDir(project));

describe("a project on @langchain/langgraph 0.x", () => {
  it("is refused by `hangar check`, naming the version and the upgrade", async () => {
    const { code, output } = await runHangar(["check", "--config", config]);
    expect(code).toBe(1);
    expect(output).toMatch(/@langchain\/langgraph is 0\.3\.\d+/);
    expect(output).toContain("npm install @langchain/langgraph@^1 @langchain/core@^1");
  });

  it("is refused by `hangar dev` at start, before any run could fail", async () => {
    const { code, output } = await runHangar(["dev", "--config", config, "--port", "0", "--no-reload"]);
    expect(code).toBe(1);
    expect(output).toMatch(/graph "agent" .*@langchain\/langgraph is 0\.3\.\d+/s);
  });

  it("serves and runs once upgraded to 1.x", async () => {
    for (const pkg of ["@langchain/langgraph", "@langchain/core"]) {
      rmSync(join(project, "node_modules", pkg), { recursive: true, force: true });
      symlinkSync(join(ROOT, "node_modules", pkg), join(project, "node_modules", pkg));
    }
    const server = await startHangar({ config, process: true, dataDir: tempDir() });
    try {
      const { thread_id } = await server.client.threads.create();
      const out = (await server.client.runs.wait(thread_id, "agent", { input: { messages: [] } })) as {
        messages: { content: string }[];
      };
      expect(out.messages.at(-1)?.content).toBe("Hi there! How are you?");
      const state = await server.client.threads.getState(thread_id);
      expect(state.next).toEqual([]);
    } finally {
      await server.stop();
      cleanupDir(server.dataDir);
    }
  });
});
