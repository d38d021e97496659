// End-to-end: graphs and projects written for the official server load and run unchanged: Promise exports,
// factories returning Promises, getLogger() at import, TypeScript in CommonJS projects and in folders without
// package.json, JavaScript (.js/.mjs/.cjs) graphs, LANGGRAPH_CONFIG, and a missing env file (a warning).
import { cpSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cleanupDir,
  noRetryClient,
  ROOT,
  runHangar,
  startHangar,
  tempDir,
  useHangar,
  type HangarProcess,
} from "../helpers/server.ts";

const FIXTURES = join(ROOT, "test/fixtures");
const GRAPHS_CONFIG = join(FIXTURES, "compat-graphs/langgraph.json");
const CJS_CONFIG = join(FIXTURES, "compat-cjs/langgraph.json");

const LANGGRAPH_CONFIG = JSON.stringify({
  configured: { configurable: { greeting: "hi" }, recursion_limit: 42, context: { tone: "warm" } },
  not_a_graph: { configurable: { ignored: true } },
});

/** Runs a graph once on a new thread and returns its `output`. */
async function echo(url: string, graphId: string, config?: Record<string, unknown>): Promise<string> {
  const client = noRetryClient(url);
  const { thread_id } = await client.threads.create();
  const values = (await client.runs.wait(thread_id, graphId, {
    input: { input: "x" },
    ...(config ? { config } : {}),
  })) as { output?: string };
  return values.output ?? `(no output: ${JSON.stringify(values)})`;
}

describe("a project with Promise exports, factories, getLogger, JS graphs, LANGGRAPH_CONFIG and no .env", () => {
  const hangar = useHangar({ config: GRAPHS_CONFIG, env: { LANGGRAPH_CONFIG } });

  it.each([
    ["promise_compiled", "promise_compiled:x"],
    ["promise_uncompiled", "promise_uncompiled:x"],
    ["sync_factory_promise", "sync_factory_promise:x"],
    ["js_esm", "js_esm:x"],
    ["js_mjs", "js_mjs:x"],
    ["js_cjs", "js_cjs:x"],
  ])("serves %s", async (graphId, expected) => {
    expect(await echo(hangar.server.url, graphId)).toBe(expected);
  });

  it("calls an async factory with the run's config", async () => {
    const out = await echo(hangar.server.url, "async_factory", { configurable: { suffix: "s1" } });
    expect(out).toBe("async_factory(s1):x");
  });

  it("registers the SDK logger before importing graphs; its lines reach the server's output", async () => {
    expect(await echo(hangar.server.url, "with_logger")).toBe("with_logger:x");
    const out = hangar.server.output();
    expect(out).toContain("compat logger graph imported");
    await expect.poll(() => hangar.server.output()).toContain("compat logger node ran");
  });

  it("gives the system assistant of a graph LANGGRAPH_CONFIG names its config and context", async () => {
    const [configured] = await hangar.client.assistants.search({ graphId: "configured" });
    expect(configured.config).toEqual({ configurable: { greeting: "hi" }, recursion_limit: 42 });
    expect(configured.context).toEqual({ tone: "warm" });
    expect(await echo(hangar.server.url, "configured")).toBe("hi/warm:x");
    const [other] = await hangar.client.assistants.search({ graphId: "js_esm" });
    expect(other.config).toEqual({});
  });

  it("starts with a warning, printed once, when the env file langgraph.json names does not exist", () => {
    const out = hangar.server.output();
    expect(out.split('Env file ".env" not found').length - 1).toBe(1);
  });
});

describe('a TypeScript and JavaScript project without "type": "module" (CommonJS)', () => {
  const hangar = useHangar({ config: CJS_CONFIG });

  it.each([
    ["ts_import", "ts_import:x"],
    ["ts_require", "ts_require:x"],
    ["js_commonjs", "js_commonjs:x"],
  ])("serves %s", async (graphId, expected) => {
    expect(await echo(hangar.server.url, graphId)).toBe(expected);
  });
});

describe("a TypeScript graph in a folder without package.json", () => {
  let project: string;
  let server: HangarProcess;
  beforeAll(async () => {
    // Out of the repository, whose package.json says "type": "module"; its packages linked in.
    project = tempDir("hangar-compat-nopkg-");
    cpSync(join(FIXTURES, "compat-nopkg"), project, { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"));
    server = await startHangar({ config: join(project, "langgraph.json") });
  });
  afterAll(async () => {
    await server?.stop();
    if (server) cleanupDir(server.dataDir);
    cleanupDir(project);
  });

  it("serves it", async () => {
    expect(await echo(server.url, "nopkg")).toBe("nopkg:x");
  });
});

describe("hangar check (the control plane's build check)", () => {
  it("passes a CommonJS TypeScript project", async () => {
    const r = await runHangar(["check", "--config", CJS_CONFIG]);
    expect(r.output).toContain("graph ok: ts_import");
    expect(r.code).toBe(0);
  });

  it("passes a project whose env file is missing, with the warning", async () => {
    const r = await runHangar(["check", "--config", GRAPHS_CONFIG]);
    expect(r.output).toContain('Env file ".env" not found');
    expect(r.output).toContain("graph ok: promise_compiled");
    expect(r.code).toBe(0);
  });

  it("refuses a LANGGRAPH_CONFIG that is not JSON, naming the variable", async () => {
    const r = await runHangar(["check", "--config", CJS_CONFIG], { LANGGRAPH_CONFIG: "{nope" });
    expect(r.output).toContain("LANGGRAPH_CONFIG: invalid JSON");
    expect(r.code).toBe(1);
  });
});
