// globalSetup of the test run: compiles src/ to dist/ (`npm run build`, under a second) unless the build is as new
// as src/ already, so every CLI a test starts (and every Agent Server or build step a control plane starts) runs
// the code under test compiled, as users run it, instead of tsx compiling its modules again at each start.
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const SRC = join(ROOT, "src");
const STAMP = join(ROOT, "dist/.build-stamp");

const CONSOLE = join(ROOT, "console");

/** Nothing in `dir` (a file or folder, at any depth) changed after `time`. */
const unchangedSince = (dir: string, time: number): boolean =>
  statSync(dir).mtimeMs <= time &&
  readdirSync(dir, { recursive: true, withFileTypes: true }).every(
    (e) => statSync(join(e.parentPath, e.name)).mtimeMs <= time,
  );

/** bin/hangar.js's rule (the stamp exists and nothing of src/ changed after it), and the console's sources too. */
function buildIsFresh(): boolean {
  if (!existsSync(STAMP) || !existsSync(join(ROOT, "dist/cli/main.js"))) return false;
  if (!existsSync(join(ROOT, "dist/console/index.html"))) return false;
  const time = statSync(STAMP).mtimeMs;
  return unchangedSince(SRC, time) && unchangedSince(CONSOLE, time);
}

export default function setup(): void {
  if (buildIsFresh()) return;
  execFileSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
}
