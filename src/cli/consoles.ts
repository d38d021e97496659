// The web consoles on the first start of a checkout that lacks them (`npm install` builds them, through the
// package's `prepare` script, unless its scripts were skipped): built before the server starts, saying so. An
// installed package ships them built, and has no scripts/ to build them with: nothing is done there.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CONSOLE_DIR } from "../api/console.js";
import type { Logger } from "../lib/logger.js";

/** The console build script of a checkout (src/cli and dist/cli are both two folders below the root). */
const SCRIPT = fileURLToPath(new URL("../../scripts/build-console.mjs", import.meta.url));

/** The Agent Server's page (/console/) and the control plane's (its root), both in CONSOLE_DIR. */
const PAGES = ["index.html", "control-plane.html"];

/**
 * Builds the consoles into dist/console when they are missing in a checkout (scripts/build-console.mjs, ~10 s,
 * once); a failure is logged, and the server starts anyway (its console paths then answer 404 saying what to run).
 */
export async function ensureConsoles(log: Logger, dir = CONSOLE_DIR, script = SCRIPT): Promise<void> {
  if (PAGES.every((page) => existsSync(join(dir, page))) || !existsSync(script)) return;
  log.info(
    "The web consoles are not built in this checkout (`npm install` builds them, unless its scripts were " +
      "skipped): building them now into dist/console, once",
  );
  const failure = await new Promise<string | undefined>((resolve) => {
    const build = spawn(process.execPath, [script], { stdio: ["ignore", "inherit", "inherit"] });
    build.once("error", (e) => resolve(e.message));
    build.once("exit", (code, signal) => resolve(code === 0 ? undefined : `exit ${signal ?? code}`));
  });
  if (failure) {
    log.warn(`Building the web consoles failed (${failure}): \`npm run build\` builds them`);
  } else {
    log.info("The web consoles are built");
  }
}
