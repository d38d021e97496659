// The official dev server (`langgraphjs dev` of @langchain/langgraph-cli) started by a test file of its own, on a
// temporary copy of a project (unlike the shared peer of official-peer-setup.ts, whose data other files change):
// for tests that need to know everything a server holds, such as `hangar migrate`'s.
import { spawn } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdtempSync,
  openSync,
  closeSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { OFFICIAL_BIN } from "./cli.ts";
import { end, freePort } from "./official-peer-setup.ts";
import { ROOT } from "./server.ts";
import { waitFor } from "./wait.ts";

export interface OfficialDev {
  url: string;
  /** Its output so far. */
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `langgraphjs dev` on a copy of `project` (a folder of the repository) and resolves once it answers /ok. */
export async function startOfficialDev(project: string): Promise<OfficialDev> {
  const base = mkdtempSync(join(tmpdir(), "hangar-official-dev-"));
  const dir = join(base, "project");
  cpSync(join(ROOT, project), dir, {
    recursive: true,
    filter: (src) => !/[\\/](\.langgraph_api|\.hangar|node_modules)$/.test(src),
  });
  // The copy resolves packages from the repository's node_modules, as a project beside it would.
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
  writeFileSync(join(dir, ".gitignore"), ".langgraph_api\n");
  const env: NodeJS.ProcessEnv = { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", BROWSER: "none" };
  for (const k of Object.keys(env)) if (/^(PORT|DATABASE_URL|REDIS_URL|HANGAR_.*)$/.test(k)) delete env[k];
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const log = join(base, "dev.log");
  const out = openSync(log, "a");
  const proc = spawn(
    process.execPath,
    [OFFICIAL_BIN, "dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload"],
    { cwd: dir, env, detached: true, stdio: ["ignore", out, out] },
  );
  closeSync(out);
  const output = () => (existsSync(log) ? readFileSync(log, "utf8") : "");
  const stop = async () => {
    await end(proc);
    rmSync(base, { recursive: true, force: true });
  };
  try {
    await waitFor(
      () => `the official dev server at ${url}; its output:\n${output().slice(-3000)}`,
      async () => {
        if (proc.exitCode !== null) throw new Error(`it exited with ${proc.exitCode}`);
        return (await fetch(`${url}/ok`).catch(() => undefined))?.ok;
      },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { url, output, stop };
}
