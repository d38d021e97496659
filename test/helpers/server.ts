// Test harness: starts the real `hangar dev` CLI as a child process on a free loopback port.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";

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
    "dev",
    "--config",
    opts.config ?? EXAMPLE_CONFIG,
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    "--data-dir",
    dataDir,
    "--no-reload",
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
