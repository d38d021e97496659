// Setup file, run before each test file (vitest re-runs setup files per file, also without isolation): registers
// the harnesses' end-of-file cleanup first, so it runs after the file's own afterAll hooks (hooks stack).
//
// With HANGAR_TEST_CPU_LOG=<file>, each test file appends a JSON line to that file: the CPU its worker spent on it
// and the CPU of the child processes it started and reaped (servers, CLIs, browsers), in seconds, to find what the
// suite spends its CPU on (what runs in other processes — PostgreSQL, Redis, Docker's builds — is not counted).
import { appendFileSync, readFileSync } from "node:fs";
import { afterAll, beforeAll, expect } from "vitest";
import { dropFileCpSchemas } from "./control-plane.ts";
import { endFileServers } from "./server.ts";

const CPU_LOG = process.env.HANGAR_TEST_CPU_LOG;

/** This process's CPU and that of its reaped children, in seconds (/proc/self/stat, clock ticks of 1/100 s). */
function cpu(): { self: number; children: number } {
  const own = process.cpuUsage();
  const stat = readFileSync("/proc/self/stat", "utf8");
  // After the command's last closing parenthesis: state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { self: (own.user + own.system) / 1e6, children: (Number(fields[13]) + Number(fields[14])) / 100 };
}

if (CPU_LOG) {
  let start: { self: number; children: number; at: number };
  beforeAll(() => {
    start = { ...cpu(), at: performance.now() };
  });
  afterAll(() => {
    const end = cpu();
    const file = expect.getState().testPath ?? "?";
    const line = {
      file: file.replace(`${process.cwd()}/`, ""),
      project: process.env.HANGAR_TEST_BACKEND ?? "embedded",
      self: +(end.self - start.self).toFixed(1),
      children: +(end.children - start.children).toFixed(1),
      wall: +((performance.now() - start.at) / 1000).toFixed(1),
    };
    appendFileSync(CPU_LOG, `${JSON.stringify(line)}\n`);
  });
}

afterAll(async () => {
  await endFileServers();
  await dropFileCpSchemas();
});
