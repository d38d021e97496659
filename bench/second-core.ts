/**
 * The second core (issue 26): runs/s of a CPU-bound graph (bench/projects/cpu-bound: one node hashing for about
 * 20 ms) at c=16, with graph threads off (every node on the API's thread) and on (HANGAR_GRAPH_THREADS), one fresh
 * `hangar dev --no-reload` per configuration, in one run. Also the CPU per run of the server process group.
 *
 *   npm run bench:second-core -- [--n 320] [--warmup 320] [--concurrency 16] [--threads 2]
 *
 * Each server first runs `--warmup` runs, not measured: V8 compiles the hot code of each isolate (the API thread's
 * and every graph thread's) for seconds under load, work that would otherwise count against the threads.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { loadavg } from "node:os";
import { ROOT, installCleanupHandlers, startHangar, type BenchServer } from "./servers.ts";
import { postJson } from "./client.ts";
import { processCpuMs } from "./proc.ts";

const { values } = parseArgs({
  options: {
    n: { type: "string", default: "320" },
    warmup: { type: "string", default: "320" },
    concurrency: { type: "string", default: "16" },
    threads: { type: "string", default: "2" },
  },
});
const N = Number(values.n);
const C = Number(values.concurrency);
const WARMUP = Number(values.warmup);
const CONFIG = join(ROOT, "bench/projects/cpu-bound/langgraph.json");

/** Creates a thread and waits for a run on it, `n` times, `c` at a time; returns the wall time in ms. */
async function load(server: BenchServer, n: number, c: number): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const { thread_id } = await postJson<{ thread_id: string }>(`${server.url}/threads`, {});
      const out = await postJson<{ digest?: string }>(`${server.url}/threads/${thread_id}/runs/wait`, {
        assistant_id: "hash",
        input: {},
      });
      if (!out.digest) throw new Error(`a run answered without its digest: ${JSON.stringify(out)}`);
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  return performance.now() - t0;
}

async function measure(threads: string): Promise<{ runsPerSec: number; cpuMsPerRun: number }> {
  const server = await startHangar(`second-core-${threads}`, {
    config: CONFIG,
    env: { HANGAR_GRAPH_THREADS: threads },
  });
  try {
    await load(server, WARMUP, C);
    const cpu0 = processCpuMs(server.pid);
    const ms = await load(server, N, C);
    const cpu = processCpuMs(server.pid) - cpu0;
    return { runsPerSec: (N / ms) * 1000, cpuMsPerRun: cpu / N };
  } finally {
    await server.stop();
  }
}

installCleanupHandlers();
const start = loadavg();
const off = await measure("0");
const on = await measure(values.threads);
console.log(
  `CPU-bound graph (one node hashing ~20 ms), n=${N} (+${WARMUP} warm-up), c=${C}, hangar dev --no-reload, embedded`,
);
console.log(
  `graph threads off: ${off.runsPerSec.toFixed(1)} runs/s, ${off.cpuMsPerRun.toFixed(1)} CPU ms/run`,
);
console.log(
  `graph threads ${values.threads}:   ${on.runsPerSec.toFixed(1)} runs/s, ${on.cpuMsPerRun.toFixed(1)} CPU ms/run`,
);
console.log(`ratio on/off: ${(on.runsPerSec / off.runsPerSec).toFixed(2)}x (goal >= 1.3)`);
console.log(
  `load average at start ${start.map((l) => l.toFixed(2)).join(" ")}, at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
