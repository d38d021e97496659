#!/usr/bin/env -S node --max-semi-space-size=4
// (The flag, as SERVER_NODE_FLAGS in src/control-plane/runtime/local/proc.ts: V8's young generation at most
// 4 MB per semi-space; the default 16 MB kept ~30 MB more resident for no CPU saved.)
// Entry point of the `hangar` command: runs the compiled CLI (dist/, from `npm run build`) when it is at least
// as new as src/, else the TypeScript sources through tsx. HANGAR_FROM_SOURCE=1 forces the sources.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const compiledUrl = new URL("../dist/cli/main.js", import.meta.url);
const path = (rel) => fileURLToPath(new URL(`../${rel}`, import.meta.url));
const src = path("src");
const compiled = fileURLToPath(compiledUrl);
const stamp = path("dist/.build-stamp");

/**
 * True when a file or folder of src/ was modified after the build started (the stamp's time): a folder's time
 * changes when a file in it is added, removed or renamed.
 */
function sourcesNewerThan(time) {
  if (statSync(src).mtimeMs > time) return true;
  for (const e of readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs > time) return true;
  }
  return false;
}

/** The compiled CLI, unless sources exist (a checkout) and are asked for, or newer than the build. */
function useCompiled() {
  if (!existsSync(compiled)) return false;
  if (!existsSync(src)) return true; // an installed package: dist/ only
  if (process.env.HANGAR_FROM_SOURCE === "1" || !existsSync(stamp)) return false;
  return !sourcesNewerThan(statSync(stamp).mtimeMs);
}

if (useCompiled()) {
  await import(compiledUrl.href);
} else {
  const [{ register }, { register: registerCjs }] = await Promise.all([
    import("tsx/esm/api"),
    import("tsx/cjs/api"),
  ]);
  register();
  registerCjs();
  // Tells src/cli/typescript.ts that a project's TypeScript already loads.
  globalThis[Symbol.for("hangar.tsx-registered")] = true;
  await import("../src/cli/main.ts");
}
