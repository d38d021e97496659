// Child processes of the control plane: where Hangar is installed, the allow-listed environment children get,
// and build commands run with their output logged line by line.
import { spawn, type ChildProcess } from "node:child_process";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { settings } from "../../../lib/settings.js";

/** The Hangar installation this control plane runs from (its `bin/` and `node_modules/`). */
export const HANGAR_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const HANGAR_BIN = join(HANGAR_ROOT, "bin/hangar.js");

/**
 * Node flags of an Agent Server process, as bin/hangar.js's first line gives them: V8's young generation at
 * most 4 MB per semi-space (the default 16 MB kept ~30 MB more resident, idle and under load, for no CPU saved).
 */
export const SERVER_NODE_FLAGS = ["--max-semi-space-size=4"];

/** Variables of the control plane's environment children get: operator settings, no secrets. */
const PASSED_ENV = [
  "LANG",
  "LC_ALL",
  "TZ",
  "NODE_EXTRA_CA_CERTS",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "http_proxy",
  "https_proxy",
  "no_proxy",
];

/** The PATH children get: this Node's folder first, then the system's. */
export const CHILD_PATH = [
  ...new Set([
    dirname(process.execPath),
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
  ]),
].join(delimiter);

/**
 * The environment of a build command or Agent Server: an allow-list (PATH, HOME, locale, CA and proxy
 * settings, and the names the operator lists in HANGAR_CP_SANDBOX_ENV), then `extra` (the deployment's secrets
 * and settings), which wins. Nothing else of the control plane's environment reaches a child.
 */
export function childEnv(extra: Record<string, string> = {}, home = tmpdir()): Record<string, string> {
  const env: Record<string, string> = { PATH: CHILD_PATH, HOME: home };
  const operator = settings().controlPlane.sandboxEnv;
  for (const name of [...PASSED_ENV, ...operator]) {
    const v = name && !name.startsWith("HANGAR_") ? process.env[name] : undefined;
    if (v !== undefined) env[name] = v;
  }
  return { ...env, ...extra };
}

/** Longest log line kept; longer ones are cut. */
const MAX_LINE = 8_000;

/** Calls `onLine` for every line the stream carries (the last one even without a newline). */
export function forEachLine(stream: Readable, onLine: (line: string) => void): void {
  const rl = createInterface({ input: stream, crlfDelay: Infinity });
  rl.on("line", (line) => onLine(line.length > MAX_LINE ? `${line.slice(0, MAX_LINE)} [...]` : line));
}

/** Signals a child's whole process group (children are started detached, as group leaders). */
export function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      // already gone
    }
  }
}

export function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once the child exited, or after `ms` (false then). */
export function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((res) => {
    const timer = setTimeout(() => {
      child.off("exit", onExit);
      res(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      res(true);
    };
    child.once("exit", onExit);
  });
}

/** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the child exited. */
export async function stopGroup(child: ChildProcess, graceMs: number): Promise<void> {
  if (!exited(child)) {
    signalGroup(child, "SIGTERM");
    if (!(await waitExit(child, graceMs))) {
      signalGroup(child, "SIGKILL");
      await waitExit(child, 5_000);
    }
  }
  // Whatever the leader left behind in its group goes too.
  signalGroup(child, "SIGKILL");
}

export interface CommandResult {
  /** Exit code; null when killed by a signal or when it could not start. */
  code: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Why it could not start (e.g. ENOENT), if so. */
  spawnError?: string;
  /** Its output, the last lines of it (stdout and stderr interleaved). */
  tail: string[];
}

export interface CommandOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
  onLine: (line: string, stream: "stdout" | "stderr") => void;
}

/**
 * Runs a command in its own process group, passing every output line to `onLine`; on abort or timeout the
 * group gets SIGTERM, then SIGKILL after 5 s. What it leaves running in its group when it ends is killed.
 */
export function runCommand(cmd: string, args: string[], opts: CommandOptions): Promise<CommandResult> {
  return new Promise((done) => {
    const tail: string[] = [];
    const keep = (line: string, stream: "stdout" | "stderr") => {
      tail.push(line);
      if (tail.length > 50) tail.shift();
      opts.onLine(line, stream);
    };
    let timedOut = false;
    let aborted = false;
    let child: ChildProcess;
    try {
      child = spawn(cmd, args, {
        cwd: opts.cwd,
        env: opts.env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (e) {
      done({ code: null, timedOut, aborted, spawnError: (e as Error).message, tail });
      return;
    }
    forEachLine(child.stdout!, (l) => keep(l, "stdout"));
    forEachLine(child.stderr!, (l) => keep(l, "stderr"));
    const kill = () => void stopGroup(child, 5_000);
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, opts.timeoutMs);
    const onAbort = () => {
      aborted = true;
      kill();
    };
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener("abort", onAbort, { once: true });
    let spawnError: string | undefined;
    child.once("error", (e) => {
      spawnError = e.message;
      // No 'exit' follows a failed spawn.
      if (child.pid === undefined) finish(null);
    });
    let finished = false;
    const finish = (code: number | null) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      opts.signal.removeEventListener("abort", onAbort);
      signalGroup(child, "SIGKILL");
      done({ code, timedOut, aborted, spawnError, tail });
    };
    // 'close' waits for the output to be read; a grandchild holding the pipes open is not waited for long.
    child.once("close", (code) => finish(code));
    child.once("exit", (code) => {
      setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish(code);
      }, 2_000).unref();
    });
  });
}
