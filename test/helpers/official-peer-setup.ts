// globalSetup of the test run: the official dev server (`langgraphjs dev` of @langchain/langgraph-cli) as a peer,
// started once per run, in the background, on temporary copies of the fixture projects it serves: "main"
// (test/fixtures/differential, also the web console's peer in test/browser/peer-console.test.ts) and "auth"
// (test/fixtures/differential-auth, with custom auth). Only when a test file of the run uses it. Tests wait on its
// readiness themselves (test/helpers/official-peer.ts): setup does not wait, so other files start at once.
// The schemas of "main"'s graphs are asked once here when it is up (the first extraction compiles the project's
// TypeScript: tens of seconds of CPU), and a marker file says when that is done.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, openSync, closeSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";
import { OFFICIAL_BIN } from "./cli.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** The peers: the fixture each serves, and the graphs whose schemas are asked for once it is up. */
const PEERS = {
  main: { fixture: "test/fixtures/differential", warm: ["chat", "research", "approval", "research_builder"] },
  auth: { fixture: "test/fixtures/differential-auth", warm: [] as string[] },
} as const;

export type PeerName = keyof typeof PEERS;

/** What a test learns of a peer (`inject("officialPeers")`). */
export interface PeerInfo {
  url: string;
  /** Its output (stdout and stderr). */
  log: string;
  /** Written when the warm-up is over: `{"ok": true}`, or `{"error": "..."}`. */
  warm: string;
}

declare module "vitest" {
  interface ProvidedContext {
    officialPeers: Record<PeerName, PeerInfo>;
  }
}

/** Test files that use a peer: the peer starts only when the run includes one of them. */
const USERS = /(e2e\/differential[^/]*\.test\.ts|browser\/peer-console\.test\.ts)$/;

interface Running {
  info: Record<PeerName, PeerInfo>;
  stop: () => Promise<void>;
}

/** One set of peers per run of the test runner, whichever project's setup comes first (each project runs it). */
const KEY = Symbol.for("hangar.officialPeers");
type Global = typeof globalThis & { [KEY]?: Promise<Running> };

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const paths = (project.vitest as unknown as { state?: { getPaths?: () => string[] } }).state?.getPaths?.();
  if (paths && !paths.some((p) => USERS.test(p))) return undefined;
  const g = globalThis as Global;
  const running = await (g[KEY] ??= start());
  project.provide("officialPeers", running.info);
  return async () => {
    if (!g[KEY]) return;
    g[KEY] = undefined;
    await running.stop();
  };
}

/** A port free on 127.0.0.1 now (the official CLI takes a port number, not 0). */
export const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => res(port));
    });
  });

async function start(): Promise<Running> {
  const base = mkdtempSync(join(tmpdir(), "hangar-official-peer-"));
  // The copies resolve packages from the repository's node_modules, as projects beside it would.
  symlinkSync(join(ROOT, "node_modules"), join(base, "node_modules"), "dir");
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    BROWSER: "none",
    LANGSMITH_TRACING: "false",
    LANGCHAIN_TRACING_V2: "false",
    // Its schema extraction gives up after 30 s by default, which a loaded machine can exceed.
    LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: "1800000",
  };
  for (const k of Object.keys(env)) if (/^(PORT|DATABASE_URL|REDIS_URL|HANGAR_.*)$/.test(k)) delete env[k];
  const procs: ChildProcess[] = [];
  const stopped = { value: false };
  const info = {} as Record<PeerName, PeerInfo>;
  for (const name of Object.keys(PEERS) as PeerName[]) {
    const project = join(base, name);
    cpSync(join(ROOT, PEERS[name].fixture), project, {
      recursive: true,
      filter: (src) => !/[\\/](\.langgraph_api|\.hangar|node_modules)$/.test(src),
    });
    // The CLI adds its data folder to the project's .gitignore when it is missing: there already.
    writeFileSync(join(project, ".gitignore"), ".langgraph_api\n");
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const log = join(base, `${name}.log`);
    const warm = join(base, `${name}.warm.json`);
    const out = openSync(log, "a");
    // Four queue workers rather than its 10: each polls every ~0.5 s, scanning every run the peer ever stored, for
    // the whole test run (its idle CPU); the files using a peer never have more than a few runs going at once.
    const args = [
      "dev",
      "--port",
      String(port),
      "--host",
      "127.0.0.1",
      "--no-browser",
      "--no-reload",
      "--n-jobs-per-worker",
      "4",
    ];
    const proc = spawn(
      process.execPath,
      [OFFICIAL_BIN, ...args, "--config", join(project, "langgraph.json")],
      {
        cwd: project,
        env,
        detached: true,
        stdio: ["ignore", out, out],
      },
    );
    closeSync(out);
    procs.push(proc);
    info[name] = { url, log, warm };
    const mark = (result: { ok: true } | { error: string }) => {
      if (!stopped.value) writeFileSync(warm, JSON.stringify(result));
    };
    void warmUp(url, PEERS[name].warm, proc, stopped).then(
      () => mark({ ok: true }),
      (e: Error) => mark({ error: e.message }),
    );
  }
  const stop = async () => {
    stopped.value = true;
    await Promise.all(procs.map(end));
    rmSync(base, { recursive: true, force: true });
  };
  return { info, stop };
}

/**
 * Waits for the peer to answer /ok (with any status: under custom auth the dev server asks for credentials there
 * too), then asks the schemas of `graphs`, one after the other.
 */
async function warmUp(
  url: string,
  graphs: readonly string[],
  proc: ChildProcess,
  stopped: { value: boolean },
) {
  for (;;) {
    if (stopped.value) throw new Error("stopped");
    if (proc.exitCode !== null) throw new Error(`it exited with ${proc.exitCode}`);
    const up = await fetch(`${url}/ok`).then(
      () => true,
      () => false,
    );
    if (up) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  for (const graphId of graphs) {
    const found = await post(`${url}/assistants/search`, {
      graph_id: graphId,
      metadata: { created_by: "system" },
    });
    const [assistant] = (await found.json()) as { assistant_id: string }[];
    const schemas = await fetch(`${url}/assistants/${assistant.assistant_id}/schemas`);
    if (!schemas.ok) throw new Error(`schemas of ${graphId}: ${schemas.status} ${await schemas.text()}`);
  }
}

const post = (url: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });

/** Ends a peer: its process group (the CLI and the server it spawned), and waits for the CLI to exit. */
export async function end(proc: ChildProcess): Promise<void> {
  if (!proc.pid || proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((res) => proc.once("exit", res));
  try {
    process.kill(-proc.pid, "SIGTERM");
  } catch {
    return;
  }
  const force = setTimeout(() => {
    try {
      process.kill(-proc.pid!, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }, 10_000);
  await exited;
  clearTimeout(force);
  try {
    // Whatever of its group outlived it (the server it spawned).
    process.kill(-proc.pid, "SIGKILL");
  } catch {
    // none left
  }
}
