// Test harness for the control plane: starts the real `hangar control-plane` CLI as a child process on a free
// loopback port (without the local reconciler unless asked), runs its admin commands, and a small JSON client.
import { spawn, type ChildProcess } from "node:child_process";
import { BIN, ROOT, runHangar, tempDir } from "./server.ts";

export interface CpProcess {
  url: string;
  dataDir: string;
  proc: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

export interface CpStartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** Run the local reconciler (default: no, `--no-reconcile`: revisions stay QUEUED). */
  reconcile?: boolean;
}

function cpEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("HANGAR_CP_")) delete env[k];
  delete env.PORT;
  return { ...env, ...extra };
}

function waitExit(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((res) => proc.once("exit", () => res()));
}

/** Starts `hangar control-plane --port 0 --data-dir <dir>`; resolves once it prints where it listens. */
export async function startCp(opts: CpStartOptions = {}): Promise<CpProcess> {
  const dataDir = opts.dataDir ?? tempDir("hangar-cp-test-");
  const args = [
    BIN,
    "control-plane",
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    "--data-dir",
    dataDir,
    ...(opts.reconcile ? [] : ["--no-reconcile"]),
    ...(opts.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: cpEnv(opts.env),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((res, rej) => {
    const onData = () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        proc.stdout!.off("data", onData);
        res(m[1]);
      }
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", (code) =>
      rej(new Error(`hangar control-plane exited with ${code} before listening:\n${out}`)),
    );
  });
  return {
    url,
    dataDir,
    proc,
    output: () => out,
    stop: async () => {
      proc.kill("SIGTERM");
      await waitExit(proc);
    },
  };
}

/** Runs `hangar control-plane admin <args> --data-dir <dir>`. */
export function cpAdmin(
  dataDir: string,
  ...args: string[]
): Promise<{ code: number | null; output: string }> {
  return runHangar(["control-plane", "admin", ...args, "--data-dir", dataDir]);
}

/** The id an admin command printed after `Created <what> `. */
export function createdId(output: string, what: "organization" | "workspace"): string {
  const m = new RegExp(`Created ${what} ([0-9a-f-]{36})`).exec(output);
  if (!m) throw new Error(`no ${what} id in: ${output}`);
  return m[1];
}

/** The key `admin create-key` printed (its last line). */
export const createdKey = (output: string): string => output.trim().split("\n").pop()!.trim();

export interface CpResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** A JSON client for the control plane with fixed headers (the key, the tenant). */
export function cpClient(url: string, headers: Record<string, string> = {}) {
  const call = async (method: string, path: string, body?: unknown): Promise<CpResponse> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the raw text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    get: (path: string) => call("GET", path),
    post: (path: string, body?: unknown) => call("POST", path, body),
    patch: (path: string, body?: unknown) => call("PATCH", path, body),
    put: (path: string, body?: unknown) => call("PUT", path, body),
    del: (path: string) => call("DELETE", path),
  };
}

export type CpClient = ReturnType<typeof cpClient>;
