// Both web consoles on a fresh clone, as the README's quick start has a new user get there: a copy of what a
// clone holds (the files git tracks or would, as the working tree has them, with fresh modification times; no
// dist/), its node_modules a link to this checkout's (a full install per run is minutes), and the root
// package's own lifecycle scripts that `npm install` runs, run in its order through npm. Then `npm run dev`
// (on a free port: PORT=0) serves /console/, which Debian's Chromium renders (the assistants listed), and
// `hangar control-plane` from the clone serves its console at its root (the key asked for, then the
// deployments page). Again on a clone installed with its scripts skipped (`npm install --ignore-scripts`):
// `npm run dev` then runs the sources (no dist/) and builds the consoles at start, saying so, and so does the
// control plane when it is the first command started. Each page's screenshot goes to
// test/browser/screenshots/.
import { execFile, execFileSync, spawn, type ChildProcess } from "node:child_process";
import { promisify } from "node:util";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, ROOT, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";
import { launchChromium, screenshot, watchedPage } from "./harness.ts";

const WAIT = { timeout: 150_000 };
const KEY = "fresh-clone-console-key-1234";
/** What the consoles answered before they were built on install (src/api/console.ts, http/console.ts). */
const NOT_BUILT = /not built in this installation/;

/** The root package's scripts `npm install` runs (no arguments, in a checkout), in the order it runs them. */
const INSTALL_LIFECYCLE = [
  "preinstall",
  "install",
  "postinstall",
  "prepublish",
  "preprepare",
  "prepare",
  "postprepare",
];

/** A user's shell: none of the test runner's variables (NODE_ENV=test, npm_*, HANGAR_*, PORT, ...). */
function userEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const k of ["PATH", "HOME", "USER", "LANG", "LC_ALL", "SHELL", "TMPDIR"]) {
    if (process.env[k] !== undefined) env[k] = process.env[k];
  }
  return { ...env, ...extra };
}

/** What `git clone` of this checkout would hold now: every file git tracks or would track, copied afresh. */
function freshClone(dir: string): void {
  const files = execFileSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: ROOT,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  })
    .split("\0")
    // A tracked file deleted in the working tree is not in a clone made of it.
    .filter((f) => f && existsSync(join(ROOT, f)) && statSync(join(ROOT, f)).isFile());
  for (const f of new Set(files)) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    // Not preserving times: a clone's files are as new as the clone.
    cpSync(join(ROOT, f), join(dir, f));
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
}

/**
 * The lifecycle scripts of the clone's own package that `npm install` would run, each through `npm run` (with
 * --ignore-scripts, so that a script's pre- and post- hooks run once, at their own place in the list). Not waited
 * for synchronously: the build takes long enough on a loaded machine to stall this worker's link to vitest.
 */
async function runInstallScripts(dir: string): Promise<string[]> {
  const { scripts = {} } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  const ran = INSTALL_LIFECYCLE.filter((name) => scripts[name]);
  for (const name of ran) {
    await promisify(execFile)("npm", ["run", "--ignore-scripts", name], {
      cwd: dir,
      env: userEnv(),
      maxBuffer: 64 * 1024 * 1024,
    });
  }
  return ran;
}

interface Started {
  url: string;
  output: () => string;
  stop: () => Promise<void>;
}

const running = new Set<Started>();

/**
 * Starts a command in its own process group (npm, the shell it starts, hangar and a reloading server's child
 * stop together); resolves once it prints where it listens.
 */
async function start(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const proc: ChildProcess = spawn(cmd, args, {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((res) => proc.once("exit", () => res()));
  const stop = async () => {
    running.delete(started);
    try {
      process.kill(-proc.pid!, "SIGTERM");
    } catch {
      // already gone
    }
    await exited;
  };
  const started: Started = { url: "", output: () => out, stop };
  running.add(started);
  started.url = await waitFor(
    () => `${cmd} ${args.join(" ")} to listen; output:\n${out}`,
    () => {
      if (proc.exitCode !== null) throw new Error(`${cmd} ${args.join(" ")} exited:\n${out}`);
      return /listening on (http:\/\/[^\s"]+)/.exec(out)?.[1];
    },
  );
  return started;
}

let browser: Awaited<ReturnType<typeof launchChromium>>;
const clones: string[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  for (const p of [...running]) await p.stop();
  await browser?.close();
  for (const c of clones) cleanupDir(c);
});

/** A fresh clone in a temporary folder, removed after the file. */
function clone(): string {
  const dir = tempDir("hangar-fresh-clone-");
  clones.push(dir);
  freshClone(dir);
  return dir;
}

/**
 * `PORT=0 npm run dev` in `dir`: the README's command, on a free port; with HANGAR_SCHEMAS_AHEAD=false, as the
 * harness's servers run (test/helpers/server.ts): a schema a page asks for is extracted then, instead of the
 * server compiling all the examples' types in the background (tens of CPU seconds) while the consoles are tested.
 */
const npmRunDev = (dir: string) =>
  start("npm", ["run", "dev"], dir, userEnv({ PORT: "0", HANGAR_SCHEMAS_AHEAD: "false" }));

/** Opens the Agent Server's console of `url` and waits for the example's `chat` assistant in its list. */
async function seeAgentConsole(url: string, name: string): Promise<void> {
  const { page, problems } = await watchedPage(browser.context);
  const res = await page.goto(`${url}/console/`);
  const body = (await res?.text()) ?? "";
  expect(body).not.toMatch(NOT_BUILT);
  expect(res?.status()).toBe(200);
  await page
    .getByRole("navigation", { name: "assistants" })
    .getByRole("link", { name: "chat chat" })
    .waitFor(WAIT);
  await screenshot(page, `fresh-clone-${name}`);
  expect(problems).toEqual([]);
  await page.close();
}

/** `hangar control-plane` from the clone `dir`: opens its root, gives the key, sees the deployments page. */
async function seeControlPlaneConsole(dir: string, name: string): Promise<string> {
  const data = join(dir, ".hangar-control-plane");
  const cp = await start(
    process.execPath,
    ["bin/hangar.js", "control-plane", "--port", "0", "--data-dir", data, "--no-reconcile"],
    dir,
    userEnv({ HANGAR_CP_BOOTSTRAP_API_KEY: KEY, LOG_FORMAT: "pretty" }),
  );
  try {
    // The console's probe of the API without a key is refused (401): it then asks for the key.
    const { page, problems } = await watchedPage(browser.context, [401]);
    const res = await page.goto(`${cp.url}/`);
    const body = (await res?.text()) ?? "";
    expect(body).not.toMatch(NOT_BUILT);
    expect(res?.status()).toBe(200);
    await page.getByRole("form", { name: "credential" }).waitFor(WAIT);
    await page.getByLabel("Key", { exact: true }).fill(KEY);
    await page.getByRole("button", { name: "Use it" }).click();
    await page.getByText("No deployments yet").waitFor(WAIT);
    await screenshot(page, `fresh-clone-${name}`);
    expect(problems).toEqual([]);
    await page.close();
    return cp.output();
  } finally {
    await cp.stop();
  }
}

describe("a fresh clone, after npm install", () => {
  let dir: string;
  let dev: Started;

  beforeAll(async () => {
    dir = clone();
    await runInstallScripts(dir);
    dev = await npmRunDev(dir);
  });

  afterAll(async () => {
    await dev?.stop();
  });

  it("npm run dev serves the console at /console/", async () => {
    await seeAgentConsole(dev.url, "dev-console");
    // Built by the install: nothing to build at the first start.
    expect(dev.output()).not.toMatch(/consoles are not built/);
  });

  it("the control plane serves its console at its root", async () => {
    const output = await seeControlPlaneConsole(dir, "control-plane");
    expect(output).not.toMatch(/consoles are not built/);
  });
});

describe("a fresh clone, after npm install --ignore-scripts", () => {
  let dir: string;
  let dev: Started;

  beforeAll(async () => {
    dir = clone();
    dev = await npmRunDev(dir);
  });

  afterAll(async () => {
    await dev?.stop();
  });

  it("npm run dev builds the consoles at its first start, says so, and serves the console", async () => {
    // No dist/ at all: the command ran the sources (bin/hangar.js), and built the consoles alone.
    expect(existsSync(join(dir, "dist/cli"))).toBe(false);
    expect(dev.output()).toMatch(/The web consoles are not built in this checkout .*building them now/);
    expect(dev.output()).toMatch(/The web consoles are built/);
    await seeAgentConsole(dev.url, "dev-console-on-start");
  });

  it("the control plane, when it is the first command started, builds them and serves its console", async () => {
    // As if `hangar control-plane` came first: what dev built is gone.
    rmSync(join(dir, "dist/console"), { recursive: true, force: true });
    const output = await seeControlPlaneConsole(dir, "control-plane-on-start");
    expect(output).toMatch(/The web consoles are not built in this checkout .*building them now/);
  });
});
