// The package as users get it: `npm pack` of a copy of the repository (its `prepare` script builds dist/), the
// tarball installed into a fresh project, where `npx hangar --version` answers and `npx hangar dev` serves a graph.
// Slow by nature (a build and an npm install): one pack and one install per run.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, noRetryClient, ROOT, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const work = tempDir("hangar-package-");
const repo = join(work, "repo");
const app = join(work, "app");
let packed: string[] = [];

/** This environment without the test runner's settings: npm's own (npm test) and HANGAR_* ones. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^npm_|^HANGAR_/i.test(k)) delete env[k];
  return env;
}

/** Runs a command to its end; its output, or an error with the output when it fails. */
function run(cmd: string, args: string[], cwd: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((res, rej) => {
    const proc = spawn(cmd, args, { cwd, env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d) => (stdout += d));
    proc.stderr.on("data", (d) => (stderr += d));
    proc.once("error", rej);
    proc.once("exit", (code) => {
      if (code === 0) res({ stdout, stderr });
      else rej(new Error(`${cmd} ${args.join(" ")} exited with ${code}:\n${stdout}\n${stderr}`));
    });
  });
}

beforeAll(async () => {
  // The package is made from a copy, so its build writes the copy's dist/, never the one of this checkout.
  for (const f of ["bin", "src", "console", "scripts", "package.json", "tsconfig.json", "README.md"]) {
    cpSync(join(ROOT, f), join(repo, f), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(repo, "node_modules"));
  const { stdout } = await run("npm", ["pack", "--json", "--pack-destination", work], repo);
  const [result] = JSON.parse(stdout) as { filename: string; files: { path: string }[] }[];
  packed = result.files.map((f) => f.path);

  cpSync(join(ROOT, "test/fixtures/cli-reload/graph.ts"), join(app, "graph.ts"));
  writeFileSync(join(app, "langgraph.json"), JSON.stringify({ graphs: { agent: "./graph.ts:graph" } }));
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({
      name: "hangar-package-test-app",
      private: true,
      type: "module",
    }),
  );
  // Dependencies' install scripts are skipped: the one that matters, better-sqlite3's, compiles its native
  // binding from source here (a minute of CPU, and nothing about Hangar's package); the binding this checkout
  // built for the same pinned version and the same Node is copied in instead. esbuild needs no script: its
  // binary comes in its platform package.
  await run(
    "npm",
    [
      "install",
      join(work, result.filename),
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      "--ignore-scripts",
    ],
    app,
  );
  const binding = "node_modules/better-sqlite3/build/Release/better_sqlite3.node";
  mkdirSync(dirname(join(app, binding)), { recursive: true });
  cpSync(join(ROOT, binding), join(app, binding));
});

afterAll(() => cleanupDir(work));

describe("npm pack", () => {
  it("ships bin/ and the compiled dist/ with the SQL migrations, and no sources, tests or benchmarks", () => {
    expect(packed).toContain("bin/hangar.js");
    expect(packed).toContain("dist/cli/main.js");
    expect(packed).toContain("package.json");
    // Both consoles, prebuilt: the Agent Server's (/console/) and the control plane's (its root).
    expect(packed).toContain("dist/console/index.html");
    expect(packed).toContain("dist/console/control-plane.html");
    const sql = readdirSync(join(ROOT, "src"), { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".sql"))
      .map((f) => `dist/${f.split("\\").join("/")}`);
    expect(sql.length).toBeGreaterThan(0);
    for (const f of sql) expect(packed).toContain(f);
    const outside = packed.filter(
      (f) => !/^(bin|dist)\//.test(f) && !["package.json", "README.md"].includes(f),
    );
    expect(outside).toEqual([]);
    expect(packed.filter((f) => /^(src|test|bench|\.ci|examples|scripts)\//.test(f))).toEqual([]);
  });
});

describe("installed in a fresh project", () => {
  it("npx hangar --version prints the version", async () => {
    const { stdout } = await run("npx", ["hangar", "--version"], app);
    expect(stdout.trim()).toBe(VERSION);
  });

  it("npx hangar dev serves the project's graph", async () => {
    // Its own process group: npx, the shell it starts and the server stop together.
    const dev: ChildProcess = spawn("npx", ["hangar", "dev", "--port", "0", "--no-reload"], {
      cwd: app,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let out = "";
    dev.stdout!.on("data", (d) => (out += d));
    dev.stderr!.on("data", (d) => (out += d));
    const exited = new Promise((res) => dev.once("exit", res));
    let url: string | undefined;
    try {
      url = await waitFor(
        () => `hangar dev to listen; output:\n${out}`,
        () => {
          if (dev.exitCode !== null) throw new Error(`hangar dev exited:\n${out}`);
          return /listening on (http:\/\/\S+)/.exec(out)?.[1];
        },
      );
      const values = await noRetryClient(url).runs.wait(null, "agent", { input: { input: "hi" } });
      expect(values).toEqual({ input: "hi", output: "v1:hi" });
      // An MCP tool call, which the server answers through its own routes (fastify's inject, light-my-request) with
      // the `cookie` a fresh install resolves (2.x on 2026-12-01, which asks for Node 22; the checkout pins 1.1.1 by
      // an override that npm applies only in the root project): it works on this Node all the same (README).
      const call = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "agent", arguments: { input: "hi" } },
        }),
      });
      expect(call.status).toBe(200);
      const answer = (await call.json()) as { result?: { structuredContent?: unknown } };
      expect(answer.result?.structuredContent).toEqual({ input: "hi", output: "v1:hi" });
      // The web console ships prebuilt in the package: its page and the script it loads are served.
      const page = await fetch(`${url}/console/`);
      expect(page.status).toBe(200);
      const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(await page.text())?.[1];
      expect(script).toBeDefined();
      expect((await fetch(`${url}/console/${script}`)).status).toBe(200);
    } finally {
      try {
        process.kill(-dev.pid!, "SIGTERM");
      } catch {
        // already gone
      }
      await exited;
      if (url) {
        const stopped = url;
        await waitFor(`the server at ${stopped} to stop`, () =>
          fetch(`${stopped}/ok`).then(
            () => false,
            () => true,
          ),
        );
      }
    }
  });
});
