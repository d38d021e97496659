// `npm run build` (also the package's `prepare` script: run by `npm install` in a checkout, and by `npm pack`):
// compiles src/ to dist/ (each TypeScript file to an ES module for Node 20 with esbuild, file by file, as tsx runs
// them; `npm run check` is what type-checks), copies the files the code reads at run time (the .sql migrations:
// every non-TypeScript file of src/), bundles the web consoles, and stamps the build for bin/hangar.js.
import { cpSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { buildConsoles } from "./build-console.mjs";

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
// The web consoles (console/, React), bundled by Vite into dist/console (./build-console.mjs).
await buildConsoles(`${dist}/console`);
const stamp = `${dist}/.build-stamp`;
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
