/**
 * Servers at rest: the CPU a server spends when nobody calls it (its timers, sweeps, metrics sampling), which every
 * deployment a control plane runs pays all day. Each target is started fresh, answers a few runs of the example chat
 * graph, is left to settle (`--settle`, so that start-up work and the collections after the runs are over), then its
 * CPU is read over `--seconds`, in ms per second; targets one after the other.
 *
 *   npm run bench:idle -- [--target hangar,peer,pg1] [--settle 30] [--seconds 30]
 *
 * - `hangar`: `hangar dev --no-reload` (graph threads on, as by default; schemas not extracted ahead, as in every
 *   bench);
 * - `peer`: the official dev server (`langgraphjs dev`), its process group (the CLI, its watcher and the server);
 * - `pg1`: `hangar serve`, one API and one worker process, on PostgreSQL + Redis (their own CPU is not counted:
 *   other clients share them).
 */
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { postJson } from "./client.ts";
import { groupCpuMs } from "./proc.ts";
import { installCleanupHandlers, startTargetServer, type BenchServer, type TargetName } from "./servers.ts";

const { values } = parseArgs({
  options: {
    target: { type: "string", default: "hangar,peer,pg1" },
    settle: { type: "string", default: "30" },
    seconds: { type: "string", default: "30" },
  },
});
const TARGETS = ["hangar", "peer", "pg1"] as const;
const targets = values.target.split(",").map((t) => t.trim());
for (const t of targets) {
  if (!(TARGETS as readonly string[]).includes(t))
    throw new Error(`--target: ${t} is not one of ${TARGETS.join(", ")}`);
}
const seconds = (name: string, v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} takes a number of seconds (got ${v})`);
  return n * 1000;
};
const SETTLE_MS = seconds("settle", values.settle);
const MEASURE_MS = seconds("seconds", values.seconds);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU (ms) of every process group of the target. */
const cpuOf = (server: BenchServer) => server.pids.reduce((sum, pid) => sum + groupCpuMs(pid), 0);

async function measure(target: TargetName): Promise<number> {
  const server = await startTargetServer(target, `idle-${target}-${Date.now()}`);
  try {
    for (let i = 0; i < 5; i++) {
      const { thread_id } = await postJson<{ thread_id: string }>(`${server.url}/threads`, {});
      await postJson(`${server.url}/threads/${thread_id}/runs/wait`, {
        assistant_id: "chat",
        input: { messages: [{ role: "user", content: `hello ${i}` }] },
      });
    }
    await sleep(SETTLE_MS);
    const before = cpuOf(server);
    const t0 = performance.now();
    await sleep(MEASURE_MS);
    return ((cpuOf(server) - before) / (performance.now() - t0)) * 1000;
  } finally {
    await server.stop();
  }
}

installCleanupHandlers();
const rows: [string, number][] = [];
for (const t of targets) {
  process.stderr.write(`${t}: started, settling ${SETTLE_MS / 1000} s, measuring ${MEASURE_MS / 1000} s\n`);
  rows.push([t, await measure(t as TargetName)]);
}
console.log(
  `CPU at rest (ms per second; after ${SETTLE_MS / 1000} s settling, over ${MEASURE_MS / 1000} s):`,
);
for (const [t, ms] of rows) console.log(`  ${t.padEnd(7)} ${ms.toFixed(2)}`);
console.log(
  `load average at the end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
