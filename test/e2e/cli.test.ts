// End-to-end tests of `hangar dev`: config and graph loading errors, busy port, graph export kinds, env loading,
// and reload (rename-saves, a broken save, then its fix).
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, readFileSync, renameSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, ROOT, cleanupDir, noRetryClient, startHangar, tempDir, useHangar } from "../helpers/server.ts";
import { BOUND_MS, waitFor } from "../helpers/wait.ts";

const FIXTURES = join(ROOT, "test/fixtures");
const PROJECT_CONFIG = join(FIXTURES, "cli-project/langgraph.json");
const DOTENV_CONFIG = join(FIXTURES, "cli-dotenv/langgraph.json");
const BROKEN_IMPORT_CONFIG = join(FIXTURES, "cli-broken-import/langgraph.json");
const MISSING_EXPORT_CONFIG = join(FIXTURES, "cli-missing-export/langgraph.json");
const RELOAD_PROJECT = join(FIXTURES, "cli-reload");

const dirs: string[] = [];
function scratch(): string {
  const d = tempDir("hangar-cli-test-");
  dirs.push(d);
  return d;
}

afterAll(() => {
  for (const d of dirs) cleanupDir(d);
});

/**
 * Runs `hangar <args>` to exit, like the harness's runHangar, but kills the process if it is still running
 * after a generous bound, so a server that wrongly starts cannot leak (the test then fails on the exit code).
 */
function runCli(
  args: string[],
  { boundMs = BOUND_MS, env }: { boundMs?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((res) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    const guard = setTimeout(() => {
      out += "\n[test] still running; killed by the test\n";
      proc.kill("SIGKILL");
    }, boundMs);
    proc.once("exit", (code) => {
      clearTimeout(guard);
      res({ code, output: out });
    });
  });
}

/**
 * `hangar dev` with a throwaway data dir (`dataDir`: not there before the start) and a free port, for cases that
 * must fail at startup.
 */
async function runDev(config: string, extra: string[] = []) {
  const dataDir = join(scratch(), "data");
  const r = await runCli([
    "dev",
    "--config",
    config,
    "--data-dir",
    dataDir,
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--no-reload",
    ...extra,
  ]);
  return { ...r, dataDir };
}

/**
 * `hangar dev` on a port another server holds (closed once it exited), with `extra` arguments and `dataDir` (by
 * default a directory that does not exist yet).
 */
async function devOnBusyPort(extra: string[], dataDir = join(scratch(), "data")) {
  const blocker = createServer();
  await new Promise<void>((res) => blocker.listen(0, "127.0.0.1", () => res()));
  const port = (blocker.address() as AddressInfo).port;
  try {
    const r = await runCli([
      "dev",
      "--config",
      PROJECT_CONFIG,
      "--data-dir",
      dataDir,
      "--port",
      String(port),
      ...extra,
    ]);
    return { ...r, port, dataDir };
  } finally {
    await new Promise<void>((res) => blocker.close(() => res()));
  }
}

/** `hangar dev` serving the cli-project fixture on `dataDir` (a process of its own, as the failing starts are). */
const runDevFor = (dataDir: string) => startHangar({ process: true, config: PROJECT_CONFIG, dataDir });

function expectFailedExit(r: { code: number | null; output: string }) {
  expect(r.code, `expected a non-zero exit, output:\n${r.output}`).not.toBeNull();
  expect(r.code, `expected a non-zero exit, output:\n${r.output}`).not.toBe(0);
  expect(r.output).not.toMatch(/listening on http/);
}

// Each case is a process of its own that fails at start-up: they run at once.
describe.concurrent("startup errors", () => {
  it("an invalid JSON config exits non-zero naming the file", async () => {
    const dir = scratch();
    const file = join(dir, "broken-config-e41c.json");
    writeFileSync(file, '{\n  "graphs": {\n    "chat": "./chat.ts:graph",\n');
    const r = await runDev(file);
    expectFailedExit(r);
    expect(r.output).toContain(basename(file));
  });

  it("a missing config file exits non-zero naming the file", async () => {
    const file = join(scratch(), "missing-config-9d2b.json");
    const r = await runDev(file);
    expectFailedExit(r);
    expect(r.output).toContain(basename(file));
  });

  it("a graph module that throws on import exits non-zero naming the graph or file and the cause", async () => {
    const r = await runDev(BROKEN_IMPORT_CONFIG);
    expectFailedExit(r);
    expect(r.output).toMatch(/fx_broken|broken\.ts/);
    expect(r.output).toContain("broken-7f3a");
  });

  it("a graph spec pointing to a missing export says which export is missing", async () => {
    const r = await runDev(MISSING_EXPORT_CONFIG);
    expectFailedExit(r);
    expect(r.output).toContain("doesNotExistAnywhere");
    expect(r.output).toMatch(/fx_missing|graph\.ts/);
    // The data directory this start created (its database opened before the graphs load) is gone with it.
    expect(existsSync(r.dataDir)).toBe(false);
  });

  it("a graph spec pointing to a missing file names the file", async () => {
    const dir = scratch();
    const file = join(dir, "langgraph.json");
    writeFileSync(file, JSON.stringify({ graphs: { fx_nofile: "./no-such-graph-file-3c1d.ts:graph" } }));
    const r = await runDev(file);
    expectFailedExit(r);
    expect(r.output).toContain("no-such-graph-file-3c1d.ts");
  });

  it("a port already in use exits non-zero saying so", async () => {
    const { port, ...r } = await devOnBusyPort(["--host", "127.0.0.1", "--no-reload"]);
    expectFailedExit(r);
    expect(r.output).toMatch(/in use|EADDRINUSE/i);
    expect(r.output).toContain(String(port));
    expect(existsSync(r.dataDir)).toBe(false);
  });

  it("a start that fails keeps a data directory that was there before, with what it held", async () => {
    const dataDir = join(scratch(), "data");
    const first = await runDevFor(dataDir);
    const thread = await first.client.threads.create({ metadata: { kept: "yes-5e1a" } });
    await first.stop();
    const r = await devOnBusyPort(["--host", "127.0.0.1", "--no-reload"], dataDir);
    expectFailedExit(r);
    const second = await runDevFor(dataDir);
    try {
      expect((await second.client.threads.get(thread.thread_id)).metadata).toEqual({ kept: "yes-5e1a" });
    } finally {
      await second.stop();
    }
  });

  it("a malformed PORT stops a start without --port, naming it; --port wins over it", async () => {
    const env = { ...process.env, PORT: "notaport" };
    const refused = await runCli(
      ["dev", "--config", PROJECT_CONFIG, "--data-dir", scratch(), "--no-reload"],
      {
        env,
      },
    );
    expectFailedExit(refused);
    expect(refused.output).toContain("PORT must be a port number (0-65535), got 'notaport'");
    const server = await startHangar({ process: true, config: PROJECT_CONFIG, env: { PORT: "notaport" } });
    try {
      expect((await fetch(`${server.url}/ok`)).status).toBe(200);
    } finally {
      await server.stop();
    }
  });

  it("with reload on (the default), a first start that fails exits non-zero too", async () => {
    const r = await devOnBusyPort([]);
    expectFailedExit(r);
    expect(r.output).toMatch(/in use/i);
  });
});

describe("a project with every export kind and env as a dict", () => {
  beforeAll(() => {
    expect(process.env.HANGAR_FIXTURE_DICT_VAR).toBeUndefined();
  });
  const hangar = useHangar({ process: true, config: PROJECT_CONFIG });

  it("startup output lists the loaded graph ids", async () => {
    const ids = ["fx_compiled", "fx_uncompiled", "fx_factory", "fx_env"];
    // The list may be printed just after the "listening" line the harness waits for: let it arrive.
    await hangar.client.assistants.search({ limit: 1 });
    for (let i = 0; i < 100 && !ids.every((id) => hangar.server.output().includes(id)); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    for (const id of ids) expect(hangar.server.output()).toContain(id);
  });

  it("each graph has a system assistant", async () => {
    for (const graphId of ["fx_compiled", "fx_uncompiled", "fx_factory", "fx_env"]) {
      const found = await hangar.client.assistants.search({ graphId, metadata: { created_by: "system" } });
      expect(found.map((a) => a.graph_id)).toEqual([graphId]);
    }
  });

  it.each([
    ["fx_compiled", "compiled"],
    ["fx_uncompiled", "uncompiled"],
    ["fx_factory", "factory"],
  ])("%s loads and runs", async (graphId, label) => {
    const t = await hangar.client.threads.create();
    const out = (await hangar.client.runs.wait(t.thread_id, graphId, { input: { input: "ping" } })) as any;
    expect(out).toEqual({ input: "ping", output: `${label}:ping` });
    expect((await hangar.client.threads.get(t.thread_id)).status).toBe("idle");
    const g = (await hangar.client.assistants.getGraph(graphId)) as any;
    expect(g.nodes.map((n: any) => n.id)).toContain("echo");
  });

  it("env given as a dict reaches the graph", async () => {
    const t = await hangar.client.threads.create();
    const out = (await hangar.client.runs.wait(t.thread_id, "fx_env", { input: {} })) as any;
    expect(out.dict_var).toBe("from-dict");
    expect(out.dotenv_var).toBe("unset");
  });
});

describe("modules an embedded hangar dev loads", () => {
  const log = join(scratch(), "modules.txt");
  const hangar = useHangar({
    process: true,
    nodeFlags: ["--import", pathToFileURL(join(FIXTURES, "module-log/register.mjs")).href],
    // One graph thread: the order it loads in is the second test's.
    env: { HANGAR_TEST_MODULE_LOG: log, HANGAR_GRAPH_THREADS: "1" },
  });
  /** Packages of the scale-out backend and of features loaded on their first request. */
  const LATE =
    /node_modules\/(pg|ioredis|@langchain\/langgraph-sdk|@a2a-js\/sdk|@modelcontextprotocol\/sdk)\//;
  const late = () => [
    ...new Set(
      readFileSync(log, "utf8")
        .split("\n")
        .map((url) => LATE.exec(url)?.[1])
        .filter(Boolean),
    ),
  ];

  it("neither PostgreSQL's nor Redis's client, nor the A2A, MCP or LangGraph client SDKs, until a request needs one", async () => {
    const { thread_id } = await hangar.client.threads.create();
    await hangar.client.runs.wait(thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    expect(late()).toEqual([]);
    // The first A2A request loads A2A's SDK and the client it calls the API with: the log sees late loads.
    const res = await fetch(`${hangar.server.url}/a2a/00000000-0000-0000-0000-000000000000`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "t" } }),
    });
    expect(res.status).toBe(404);
    expect(late().sort()).toEqual(["@a2a-js/sdk", "@langchain/langgraph-sdk"]);
  });

  it("a graph thread loads Hangar and LangGraph natively, and registers tsx's loader only for the project's graphs", async () => {
    const { thread_id } = await hangar.client.threads.create();
    await hangar.client.runs.wait(thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    const lines = readFileSync(log, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => ({ thread: l.slice(0, l.indexOf(" ")), url: l.slice(l.indexOf(" ") + 1) }));
    const graphThread = lines.find(
      (l) => l.thread !== "0" && l.url.endsWith("/graph-threads/boot.mjs"),
    )?.thread;
    expect(graphThread, "no graph thread's module in the log").toBeDefined();
    const urls = lines.filter((l) => l.thread === graphThread).map((l) => l.url);
    const first = (re: RegExp) => urls.findIndex((u) => re.test(u));
    const tsx = first(/\/node_modules\/tsx\//);
    const graph = first(/\/examples\/src\/.*\.ts$/);
    // What loads through tsx's hooks costs several times a native load: Hangar's host, LangGraph and LangChain's core
    // load before tsx is registered; the project's TypeScript graph after (through it).
    for (const re of [
      /\/graph-threads\/host\.js$/,
      /\/node_modules\/@langchain\/langgraph\//,
      /\/node_modules\/@langchain\/core\//,
    ]) {
      expect(first(re), `${re} in the graph thread's log`).toBeGreaterThanOrEqual(0);
      expect(first(re), `${re} before tsx`).toBeLessThan(tsx);
    }
    expect(graph, "the fixture's graph after tsx").toBeGreaterThan(tsx);
  });
});

describe("a project with env as a .env path", () => {
  beforeAll(() => {
    expect(process.env.HANGAR_FIXTURE_DOTENV_VAR).toBeUndefined();
  });
  // With the official CLI's `--no-browser`, which `hangar dev` accepts so its command lines work as they are.
  const hangar = useHangar({ process: true, config: DOTENV_CONFIG, args: ["--no-browser"] });

  it("values from the .env file reach the graph", async () => {
    const t = await hangar.client.threads.create();
    const out = (await hangar.client.runs.wait(t.thread_id, "fx_env", { input: {} })) as any;
    expect(out.dotenv_var).toBe("from-dotenv");
    expect(out.dict_var).toBe("unset");
  });
});

describe("reload (hangar dev without --no-reload)", () => {
  let project: string;
  let dev: ChildProcess;
  let out = "";
  const graphFile = () => join(project, "graph.ts");
  const original = readFileSync(join(RELOAD_PROJECT, "graph.ts"), "utf8");

  /** Saves graph.ts as many editors (and `sed -i`) do: a new file renamed over the old one. */
  function saveByRename(text: string) {
    const tmp = join(project, ".graph.ts.swp");
    writeFileSync(tmp, text);
    renameSync(tmp, graphFile());
  }
  const withLabel = (label: string) => original.replace('const LABEL = "v1";', `const LABEL = "${label}";`);
  /** The URL of the server the supervisor started last (each start listens on a new free port). */
  const currentUrl = () => [...out.matchAll(/listening on (http:\/\/\S+)/g)].at(-1)?.[1];
  /** Waits until the server started last answers `<label>:x`. */
  const servesLabel = (label: string) =>
    waitFor(
      () => `the server to answer "${label}:x"; output:\n${out}`,
      async () => {
        const url = currentUrl();
        if (!url) return false;
        const res = (await noRetryClient(url).runs.wait(null, "reload", { input: { input: "x" } })) as any;
        return res.output === `${label}:x`;
      },
      undefined,
      300,
    );

  beforeAll(async () => {
    project = scratch();
    cpSync(RELOAD_PROJECT, project, { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(project, "node_modules"));
    dev = spawn(
      process.execPath,
      [BIN, "dev", "--config", join(project, "langgraph.json"), "--port", "0", "--data-dir", scratch()],
      { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
    );
    dev.stdout!.on("data", (d) => (out += d));
    dev.stderr!.on("data", (d) => (out += d));
    await servesLabel("v1");
  });

  afterAll(async () => {
    if (!dev || dev.exitCode !== null) return;
    const last = currentUrl();
    dev.kill("SIGTERM");
    await new Promise((res) => dev.once("exit", res));
    // The supervisor stops its server too: the last one stops answering.
    if (last) {
      await waitFor(`the server at ${last} to stop`, () =>
        fetch(`${last}/ok`).then(
          () => false,
          () => true,
        ),
      );
    }
  });

  it("restarts on a rename-save, keeps watching after a broken save, and serves the fixed graph", async () => {
    saveByRename(withLabel("v2"));
    await servesLabel("v2");

    // A second rename-save: the watcher still sees the file that replaced the one it first watched.
    saveByRename(withLabel("v3"));
    await servesLabel("v3");

    // A save that does not compile: the server stops, the supervisor keeps watching.
    const before = out.length;
    saveByRename(`${withLabel("v4")}\nexport const broken = ;\n`);
    await waitFor(
      () => `the broken server to stop; output:\n${out}`,
      () => /waiting for a change/.test(out.slice(before)),
    );

    // The fix is noticed and served.
    saveByRename(withLabel("v5"));
    await servesLabel("v5");
  });
});
