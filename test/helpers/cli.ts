// Runs a Node CLI (ours or the official one) as a child process with a scrubbed environment, collecting output.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const CLI_DIR = resolve(
  dirname(fileURLToPath(import.meta.url)),
  "../../node_modules/@langchain/langgraph-cli",
);
/** The official CLI's bin (`langgraphjs`, of @langchain/langgraph-cli), as its package.json declares it. */
export const OFFICIAL_BIN = join(
  CLI_DIR,
  (JSON.parse(readFileSync(join(CLI_DIR, "package.json"), "utf8")) as { bin: Record<string, string> }).bin
    .langgraphjs,
);

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `node <args>` in `cwd`: the variables matching `scrub` are removed from this process's environment (settings
 * that must come from the test only), then `env` is added.
 */
export function runCli(
  args: string[],
  opts: { cwd: string; env?: Record<string, string>; scrub: RegExp },
): Promise<CliRun> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(base)) if (opts.scrub.test(k)) delete base[k];
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env: { ...base, ...opts.env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  proc.stdout.on("data", (d) => (stdout += d));
  proc.stderr.on("data", (d) => (stderr += d));
  return new Promise((res) => proc.once("exit", (code) => res({ code, stdout, stderr })));
}
