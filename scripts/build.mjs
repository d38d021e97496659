// `npm run build`: compiles src/ to dist/ with tsc (tsconfig.build.json), copies the files the code reads at
// run time (the .sql migrations: every non-TypeScript file of src/), and stamps the build for bin/hangar.js.
import { spawnSync } from "node:child_process";
import { cpSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const dist = `${root}dist`;
// Sources modified from now on are newer than the build: bin/hangar.js then runs them instead.
const started = new Date();

rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
const r = spawnSync(process.execPath, [tsc, "-p", `${root}tsconfig.build.json`], { stdio: "inherit" });
if (r.status !== 0) process.exit(r.status ?? 1);
cpSync(`${root}src`, dist, {
  recursive: true,
  filter: (from) => !/\.tsx?$/.test(from),
});
const stamp = `${dist}/.build-stamp`;
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);
