// Test harness: starts the real `hangar dev` CLI as a child process on a free loopback port.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll } from "vitest";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = join(ROOT, "bin/hangar.js");
export const EXAMPLE_CONFIG = join(ROOT, "examples/langgraph.json");

export interface HangarProcess {
  url: string;
  client: Client;
  dataDir: string;
  proc: ChildProcess;
  output: () => string;
  /** Graceful stop (SIGTERM) and wait for exit. */
  stop: () => Promise<void>;
  /** SIGKILL and wait for exit. */
  kill: () => Promise<void>;
}

export interface StartOptions {
  config?: string;
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** The CLI command: `dev` (default, started with --no-reload) or `serve`. */
  command?: "dev" | "serve";
}

/** Creates a fresh temporary data directory; removed by `cleanupDir`. */
export function tempDir(prefix = "hangar-test-"): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function cleanupDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

function waitExit(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((res) => proc.once("exit", () => res()));
}

/** Starts `hangar dev --port 0` and resolves once it prints where it listens. */
export async function startHangar(opts: StartOptions = {}): Promise<HangarProcess> {
  const dataDir = opts.dataDir ?? tempDir();
  const args = [
    BIN,
    opts.command ?? "dev",
    "--config",
    opts.config ?? EXAMPLE_CONFIG,
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    "--data-dir",
    dataDir,
    ...((opts.command ?? "dev") === "dev" ? ["--no-reload"] : []),
    ...(opts.args ?? []),
  ];
  const env = { ...process.env, ...opts.env };
  delete env.PORT;
  const proc = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((res, rej) => {
    const onData = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        proc.stdout!.off("data", onData);
        res(m[1]);
      }
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", (code) => rej(new Error(`hangar exited with ${code} before listening:\n${out}`)));
  });
  return {
    url,
    dataDir,
    proc,
    client: new Client({ apiUrl: url }),
    output: () => out,
    stop: async () => {
      proc.kill("SIGTERM");
      await waitExit(proc);
    },
    kill: async () => {
      proc.kill("SIGKILL");
      await waitExit(proc);
    },
  };
}

/** Runs the CLI to completion (for error cases) and returns its exit code and output. */
export function runHangar(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; output: string }> {
  return new Promise((res) => {
    const proc = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    proc.stdout!.on("data", (d) => (out += d));
    proc.stderr!.on("data", (d) => (out += d));
    proc.once("exit", (code) => res({ code, output: out }));
  });
}

/** An SDK client for `url` that does not retry: a failing request must surface at once, not after back-off. */
export function noRetryClient(url: string): Client {
  return new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
}

export interface HangarHandle {
  /** The running server; only available inside tests and hooks that run after the `beforeAll`. */
  readonly server: HangarProcess;
  /** A no-retry SDK client for `server`. */
  readonly client: Client;
}

/**
 * Starts a server in `beforeAll` and stops it (and removes its data dir) in `afterAll` of the current
 * file or describe block. Returns getters for the server and a no-retry client.
 */
export function useHangar(opts: StartOptions = {}): HangarHandle {
  let server: HangarProcess | undefined;
  let client: Client | undefined;
  beforeAll(async () => {
    server = await startHangar(opts);
    client = noRetryClient(server.url);
  });
  afterAll(async () => {
    if (server) {
      await server.stop();
      cleanupDir(server.dataDir);
    }
  });
  const notStarted = () =>
    new Error("useHangar: the server is not started yet (use it inside tests or hooks)");
  return {
    get server() {
      if (!server) throw notStarted();
      return server;
    },
    get client() {
      if (!client) throw notStarted();
      return client;
    },
  };
}
