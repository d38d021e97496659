/**
 * `/ok` while nodes spin (issue 26): the latency of the health check while runs of a node that computes for about
 * 2 s (bench/projects/cpu-bound with BENCH_HASH_ROUNDS raised) keep the graphs busy, with graph threads off (the node
 * on the API's thread) and on (HANGAR_GRAPH_THREADS), one fresh `hangar dev --no-reload` per configuration, in one run.
 * A figure, not a test: p50, p99 and the longest wait of `GET /ok`, asked every 20 ms by one client.
 *
 *   npm run bench:ok-while-spinning -- [--runs 4] [--concurrency 2] [--threads 2] [--rounds 350000]
 */
import { join } from "node:path";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { ROOT, installCleanupHandlers, startHangar, type BenchServer } from "./servers.ts";
import { postJson } from "./client.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "4" },
    concurrency: { type: "string", default: "2" },
    threads: { type: "string", default: "2" },
    // ~2 s of one core here (3500 rounds are ~20 ms).
    rounds: { type: "string", default: "350000" },
  },
});
const RUNS = Number(values.runs);
const C = Number(values.concurrency);
const CONFIG = join(ROOT, "bench/projects/cpu-bound/langgraph.json");

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** Runs of the spinning node, `c` at a time, while one client asks /ok every 20 ms; the /ok latencies in ms. */
async function measure(threads: string): Promise<{ latencies: number[]; runsMs: number }> {
  const server: BenchServer = await startHangar(`ok-while-spinning-${threads}`, {
    config: CONFIG,
    env: { HANGAR_GRAPH_THREADS: threads, BENCH_HASH_ROUNDS: values.rounds },
  });
  try {
    let next = 0;
    let done = false;
    const t0 = performance.now();
    const spinning = Promise.all(
      Array.from({ length: C }, async () => {
        while (next < RUNS) {
          next++;
          const { thread_id } = await postJson<{ thread_id: string }>(`${server.url}/threads`, {});
          await postJson(`${server.url}/threads/${thread_id}/runs/wait`, { assistant_id: "hash", input: {} });
        }
      }),
    ).finally(() => (done = true));
    const latencies: number[] = [];
    while (!done) {
      const s = performance.now();
      const res = await fetch(`${server.url}/ok`);
      await res.arrayBuffer();
      latencies.push(performance.now() - s);
      await new Promise((r) => setTimeout(r, 20));
    }
    await spinning;
    return { latencies, runsMs: performance.now() - t0 };
  } finally {
    await server.stop();
  }
}

installCleanupHandlers();
const start = loadavg();
console.log(
  `GET /ok while ${RUNS} runs of a node computing ~2 s (${values.rounds} hash rounds) go ${C} at a time; ` +
    "hangar dev --no-reload, embedded",
);
for (const threads of ["0", values.threads]) {
  const { latencies, runsMs } = await measure(threads);
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(
    `graph threads ${threads}: /ok p50 ${pct(sorted, 0.5).toFixed(1)} ms, p99 ${pct(sorted, 0.99).toFixed(1)} ms, ` +
      `max ${sorted[sorted.length - 1]!.toFixed(0)} ms over ${sorted.length} requests; the runs took ${(runsMs / 1000).toFixed(1)} s`,
  );
}
console.log(
  `load average at start ${start.map((l) => l.toFixed(2)).join(" ")}, at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
