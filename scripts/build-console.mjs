// The web consoles (console/, React) bundled by Vite into one folder sharing its assets/: the Agent Server's
// (index.html, served at /console/) and the control plane's (control-plane.html, at the control plane's
// root), with relative asset paths so they work under any prefix. `buildConsoles(outDir)` is part of `npm run
// build` (scripts/build.mjs). Run as a script, it builds them alone into dist/console: what `hangar dev`,
// `serve` and `control-plane` run on the first start of a checkout whose consoles are missing
// (src/cli/consoles.ts). That one builds into a temporary folder beside it and renames it into place, so no
// server reads a half-written folder and two starts building at once leave one whole build.
import { existsSync, renameSync, rmSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = `${root}dist`;

/** The pages a complete console build holds. */
export const CONSOLE_PAGES = ["index.html", "control-plane.html"];

/** Bundles console/ into `outDir` (emptied first). */
export async function buildConsoles(outDir) {
  const { build } = await import("vite");
  await build({
    root: `${root}console`,
    base: "./",
    configFile: false,
    envFile: false,
    publicDir: false,
    logLevel: "warn",
    // JSX through Vite's own esbuild step (React's automatic runtime): no plugin needed for a production build.
    esbuild: { jsx: "automatic" },
    build: {
      outDir,
      emptyOutDir: true,
      chunkSizeWarningLimit: 2000,
      rollupOptions: {
        input: CONSOLE_PAGES.map((page) => `${root}console/${page}`),
        // The SDK's "use client" directives and zod's comments are harmless in a bundle: no noise in the output.
        onwarn(warning, warn) {
          if (warning.code === "MODULE_LEVEL_DIRECTIVE" || warning.code === "INVALID_ANNOTATION") return;
          warn(warning);
        },
      },
    },
  });
}

/** True when `dir` holds both consoles' pages. */
const complete = (dir) => CONSOLE_PAGES.every((page) => existsSync(`${dir}/${page}`));

/** Builds the consoles into dist/console unless they are there, through a temporary folder renamed into place. */
async function buildIntoDist() {
  const target = `${dist}/console`;
  if (complete(target)) return;
  const temp = `${dist}/.console-${process.pid}-${Date.now()}`;
  try {
    await buildConsoles(temp);
    if (complete(target)) return; // another start finished first
    // An incomplete folder (a build cut short, a page deleted) is replaced.
    rmSync(target, { recursive: true, force: true });
    try {
      renameSync(temp, target);
    } catch (e) {
      // Another start renamed its build into place in between: that one is served.
      if (!complete(target)) throw e;
    }
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await buildIntoDist();
