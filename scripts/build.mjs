// `npm run build`: compiles src/ to dist/ (each TypeScript file to an ES module for Node 20 with esbuild, file by
// file, as tsx runs them; `npm run check` is what type-checks), copies the files the code reads at run time (the
// .sql migrations: every non-TypeScript file of src/), and stamps the build for bin/hangar.js.
import { cpSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = fileURLToPath(new URL("..", import.meta.url));
const src = `${root}src`;
const dist = `${root}dist`;
// Sources modified from now on are newer than the build: bin/hangar.js then runs them instead.
const started = new Date();

rmSync(dist, { recursive: true, force: true });
const entryPoints = readdirSync(src, { recursive: true, encoding: "utf8" })
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))
  .map((f) => `${src}/${f}`);
await build({
  entryPoints,
  outdir: dist,
  outbase: src,
  format: "esm",
  platform: "node",
  target: "node20",
  logLevel: "warning",
});
cpSync(src, dist, { recursive: true, filter: (from) => !/\.tsx?$/.test(from) });
// The web consoles (console/, React): bundled by Vite into dist/console, sharing its assets/ folder: the Agent
// Server's (index.html, served at /console/) and the control plane's (control-plane.html, served at the control
// plane's root). Relative asset paths, so they work under any prefix.
const { build: viteBuild } = await import("vite");
await viteBuild({
  root: `${root}console`,
  base: "./",
  configFile: false,
  envFile: false,
  publicDir: false,
  logLevel: "warn",
  // JSX through Vite's own esbuild step (React's automatic runtime): no plugin needed for a production build.
  esbuild: { jsx: "automatic" },
  build: {
    outDir: `${dist}/console`,
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
    rollupOptions: {
      input: [`${root}console/index.html`, `${root}console/control-plane.html`],
      // The SDK's "use client" directives and zod's comments are harmless in a bundle: no noise in the output.
      onwarn(warning, warn) {
        if (warning.code === "MODULE_LEVEL_DIRECTIVE" || warning.code === "INVALID_ANNOTATION") return;
        warn(warning);
      },
    },
  },
});
const stamp = `${dist}/.build-stamp`;
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
