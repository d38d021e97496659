// End-to-end tests of assistant schemas and subgraphs: Hangar's answers equal the official dev server's for the same
// projects (the expected JSON of test/fixtures/schemas-expected, written by its regenerate.ts from the official
// server: zod v3/v4 and StateSchema states, Annotation types, subgraphs, createAgent with middleware, deepagents,
// createReactAgent, supervisor and swarm); and the CLI's background extraction with its cache file.
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { httpError } from "../helpers/http.ts";
import { copyProject, schemaTranscript, type SchemaTranscript } from "../helpers/schema-transcript.ts";
import { cleanupDir, ROOT, startHangar, tempDir, useHangar, type HangarProcess } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const EXPECTED = join(ROOT, "test/fixtures/schemas-expected");
/**
 * Projects walked by a server in this process (extracting on request, into the run's shared cache). The fixture
 * schemas-project is walked by the CLI below instead, which extracts its graphs (in the background, into its own
 * cache): the same walk, graph by graph, once from the fresh extraction and once from the cache file.
 */
const PROJECTS = {
  examples: "examples",
  "langchain-project": "test/fixtures/langchain-project",
};

const expected = (name: string) =>
  JSON.parse(readFileSync(join(EXPECTED, `${name}.json`), "utf8")) as SchemaTranscript;

/** Hangar's transcript of the graphs (and namespaces) the official one has. */
const transcriptLike = (url: string, want: SchemaTranscript) =>
  schemaTranscript(url, Object.keys(want), { namespaces: (id) => Object.keys(want[id].namespaces) });

/** Graph by graph, so that a failure names the graph (regenerate the JSON when a fixture changed). */
function expectTranscript(got: SchemaTranscript, want: SchemaTranscript): void {
  for (const id of Object.keys(want)) expect({ [id]: got[id] }).toEqual({ [id]: want[id] });
}

describe.each(Object.entries(PROJECTS))("as the official dev server answers for %s", (name, rel) => {
  let server: HangarProcess;
  beforeAll(async () => {
    server = await startHangar({ config: join(ROOT, rel, "langgraph.json") });
  });
  afterAll(() => server?.stop());

  it("every graph's /schemas, /subgraphs, /subgraphs?recurse and /subgraphs/{namespace} (plain and recursive)", async () => {
    expectTranscript(await transcriptLike(server.url, expected(name)), expected(name));
  });
});

describe("schemas through the SDK", () => {
  // The examples, whose graphs' types the walk above extracted into the shared cache (chat's schemas come from them).
  const hangar = useHangar();

  it("by the system assistant's UUID as by the graph id", async () => {
    const byGraph = await hangar.client.assistants.getSchemas("chat");
    const [sys] = await hangar.client.assistants.search({ graphId: "chat", limit: 1 });
    expect(await hangar.client.assistants.getSchemas(sys.assistant_id)).toEqual(byGraph);
    expect(byGraph.graph_id).toBe("chat");
  });

  it("an unknown assistant is a 404, on /schemas and /subgraphs", async () => {
    expect((await httpError(hangar.client.assistants.getSchemas(randomUUID()))).status).toBe(404);
    expect((await httpError(hangar.client.assistants.getSubgraphs(randomUUID()))).status).toBe(404);
  });
});

describe("a graph whose types cannot be extracted (plain JavaScript)", () => {
  const hangar = useHangar({ config: join(ROOT, "test/fixtures/schemas-js/langgraph.json") });

  it("answers its channel names, never a 500 (the official server answers 500), and logs why", async () => {
    const s = (await hangar.client.assistants.getSchemas("plain")) as any;
    const props = { value: {}, count: {} };
    expect(s.state_schema).toEqual({ title: "plain_state", type: "object", properties: props });
    expect(s.input_schema).toEqual({ title: "plain_input", type: "object", properties: props });
    expect(s.output_schema).toEqual({ title: "plain_output", type: "object", properties: props });
    expect(s.config_schema).toEqual({ title: "plain_config", type: "object", properties: {} });
    const warning = hangar.server
      .output()
      .split("\n")
      .findIndex((l) => l.includes('schemas of graph "plain": types not extracted'));
    expect(warning).toBeGreaterThanOrEqual(0);
    // One line: the compiler's stack is for the debug log (a plain JavaScript graph fails so on every start).
    const next = hangar.server.output().split("\n")[warning + 1] ?? "";
    expect(next).not.toMatch(/^\s+at /);
  });
});

/** Lines of a debug log saying a graph's types were extracted, by graph id. */
const extractions = (output: string) =>
  [...output.matchAll(/schemas of graph "([^"]+)" extracted from its types/g)].map((m) => m[1]).sort();

describe("hangar dev: schemas extracted in the background, kept across restarts", () => {
  let copy: { base: string; project: string };
  let dataDir: string;
  let cacheDir: string;
  const want = expected("schemas-project");
  // The graphs whose schemas come from their types (the others' from their zod schemas).
  const typed = ["annotated", "nested", "untyped", "zod4_custom"];
  const start = () =>
    startHangar({
      process: true,
      config: join(copy.project, "langgraph.json"),
      dataDir,
      // The default cache directory (in the data dir), not the test run's shared one.
      env: { LOG_LEVEL: "debug", HANGAR_SCHEMAS_AHEAD: "true", HANGAR_SCHEMAS_CACHE_DIR: undefined },
    });
  /** Waits for the line saying which graphs' types are asked for in the background, and returns them. */
  const queued = async (server: HangarProcess) => {
    const re = /schemas: types of ([^\n]*) asked for in the background/;
    const m = await waitFor("the background extraction's start", () => re.exec(server.output()) ?? false);
    return m[1].trim() === "no graph" ? [] : m[1].trim().split(", ").sort();
  };
  /** Waits until the output says `n` graphs' schemas came from the cache directory, and returns them. */
  const fromCache = (server: HangarProcess, n: number) =>
    waitFor(`${n} graph(s) from the cache in the output`, () => {
      const found = [...server.output().matchAll(/schemas of graph "([^"]+)" from the cache in (\S+) /g)];
      if (found.some((m) => m[2] !== cacheDir)) throw new Error(`a cache other than ${cacheDir}: ${found}`);
      return found.length >= n && found.map((m) => m[1]).sort();
    });
  /** Waits until the server's output (read as it comes) holds `n` extraction lines, and returns them. */
  const extracted = (server: HangarProcess, n: number) =>
    waitFor(`${n} extraction(s) in the output`, () => {
      const found = extractions(server.output());
      return found.length >= n && found;
    });
  beforeAll(() => {
    copy = copyProject("test/fixtures/schemas-project");
    dataDir = tempDir();
    cacheDir = join(dataDir, "schemas-cache");
  });
  afterAll(() => {
    cleanupDir(dataDir);
    cleanupDir(copy.base);
  });

  it("first requests, four at once as the start is under way, wait for the one extraction of each graph", async () => {
    const server = await start();
    try {
      // Each walk is the official server's (every graph's /schemas, /subgraphs and namespaces).
      const answers = await Promise.all([0, 1, 2, 3].map(() => transcriptLike(server.url, want)));
      for (const got of answers) expectTranscript(got, want);
      expect(await queued(server)).toEqual(typed);
      expect(await extracted(server, typed.length)).toEqual(typed);
      await waitFor("the cache directory with an entry per typed graph", () => {
        if (!existsSync(cacheDir)) return false;
        const entries = readdirSync(cacheDir).filter((f) => f.endsWith(".json"));
        const exports = entries.map(
          (f) => (JSON.parse(readFileSync(join(cacheDir, f), "utf8")) as any).spec.exportSymbol as string,
        );
        return exports.length === typed.length && exports;
      });
    } finally {
      await server.stop();
    }
  });

  it("a restart with unchanged sources answers from the cache file, extracting nothing", async () => {
    const server = await start();
    try {
      expect(await transcriptLike(server.url, want)).toEqual(want);
      expect(await queued(server)).toEqual(typed);
      expect(await fromCache(server, typed.length)).toEqual(typed);
      expect(extractions(server.output())).toEqual([]);
    } finally {
      await server.stop();
    }
  });

  it("a changed source extracts again the graph that read it, and only that one", async () => {
    const file = join(copy.project, "annotated.ts");
    const input = "const Input = Annotation.Root({";
    writeFileSync(file, readFileSync(file, "utf8").replace(input, `${input}\n  added: Annotation<string>,`));
    const server = await start();
    try {
      const s = (await (await fetch(`${server.url}/assistants/annotated/schemas`)).json()) as any;
      expect(s.input_schema.properties.added).toEqual({ type: "string" });
      expect(await extracted(server, 1)).toEqual(["annotated"]);
      expect(await fromCache(server, typed.length - 1)).toEqual(typed.filter((g) => g !== "annotated"));
    } finally {
      await server.stop();
    }
  });
});

describe("HANGAR_SCHEMAS_AHEAD in the project's env", () => {
  let copy: { base: string; project: string };
  let cacheDir: string;
  const config = () => join(copy.project, "langgraph.json");
  const start = (ahead: string | undefined) =>
    startHangar({
      process: true,
      config: config(),
      // A cache of their own: the first server extracts, the second finds the entry.
      env: { LOG_LEVEL: "debug", HANGAR_SCHEMAS_AHEAD: ahead, HANGAR_SCHEMAS_CACHE_DIR: cacheDir },
    });
  const BACKGROUND = /schemas: types of ([^\n]*) asked for in the background/;
  beforeAll(() => {
    // One graph whose schemas come from its types (a LangGraph Annotation), its project's env turning the
    // background extraction off.
    copy = copyProject("test/fixtures/cli-reload");
    const project = JSON.parse(readFileSync(config(), "utf8")) as Record<string, unknown>;
    writeFileSync(config(), JSON.stringify({ ...project, env: { HANGAR_SCHEMAS_AHEAD: "false" } }));
    cacheDir = tempDir();
  });
  afterAll(() => {
    cleanupDir(cacheDir);
    cleanupDir(copy.base);
  });

  it("the project's `false` turns the background extraction off: the first request extracts", async () => {
    const server = await start(undefined);
    try {
      const res = await fetch(`${server.url}/assistants/reload/schemas`);
      expect(res.status).toBe(200);
      const body = (await res.json()) as { input_schema: { properties: Record<string, unknown> } };
      expect(Object.keys(body.input_schema.properties).sort()).toEqual(["input", "output"]);
      // Asked for by the request, after seconds of the compiler (the line read as it comes: the log is written
      // without blocking): a background extraction would have said so within milliseconds of the start.
      await waitFor("the extraction's line", () => extractions(server.output()).length > 0);
      expect(extractions(server.output())).toEqual(["reload"]);
      expect(server.output()).not.toMatch(BACKGROUND);
    } finally {
      await server.stop();
    }
  });

  it("the process's own setting wins over the project's", async () => {
    const server = await start("true");
    try {
      const m = await waitFor(
        "the background extraction's start",
        () => BACKGROUND.exec(server.output()) ?? false,
      );
      expect(m[1].trim()).toBe("reload");
    } finally {
      await server.stop();
    }
  });
});
