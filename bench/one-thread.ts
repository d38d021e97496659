/**
 * Runs queued on one long thread (issue 26): a thread of the example chat graph takes `--runs` background runs
 * (multitask_strategy enqueue, posted one after the other), all then joined; the thread's state grows by two
 * messages a run, so what a run costs in proportion to its thread's state shows here and not on new threads. One
 * fresh `hangar dev --no-reload` per repetition; the server's CPU over the runs, per thread of its process
 * (/proc/<pid>/task: the API thread, the graph threads, V8's helpers), and its runs/s.
 *
 *   npm run bench:one-thread -- [--runs 400] [--threads 2] [--repeat 1]
 *
 * The server logs as a user's does (a line per request, two per run). Against the official dev server: `npm run
 * bench -- --only bg-throughput` (200 runs on one thread, both servers).
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { parseArgs } from "node:util";
import { getJson, postJson } from "./client.ts";
import { installCleanupHandlers, startHangar } from "./servers.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "400" },
    threads: { type: "string", default: "2" },
    repeat: { type: "string", default: "1" },
  },
});
const RUNS = Number(values.runs);
const REPEAT = Number(values.repeat);
if (!(RUNS > 0) || !(REPEAT > 0)) throw new Error("--runs and --repeat take positive numbers");

/** CPU (user + system, ms) of each thread of a process, by thread id. */
function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf-8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), (Number(f[11]) + Number(f[12])) * 10);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

interface Result {
  runsPerSec: number;
  cpuS: number;
  apiS: number;
  /** The threads (other than the API's) that spent at least a tenth of the CPU: the graph threads at work. */
  busyS: number[];
  otherS: number;
}

async function once(i: number): Promise<Result> {
  const server = await startHangar(`one-thread-${i}`, { env: { HANGAR_GRAPH_THREADS: values.threads } });
  try {
    const { thread_id } = await postJson<{ thread_id: string }>(`${server.url}/threads`, {});
    const before = threadCpu(server.pid);
    const t0 = performance.now();
    const runIds: string[] = [];
    for (let n = 0; n < RUNS; n++) {
      const run = await postJson<{ run_id: string }>(`${server.url}/threads/${thread_id}/runs`, {
        assistant_id: "chat",
        input: { messages: [{ role: "user", content: `hello ${n}` }] },
        multitask_strategy: "enqueue",
      });
      runIds.push(run.run_id);
    }
    await Promise.all(
      runIds.map(async (id) => {
        const out = await getJson<{ messages?: unknown[] }>(
          `${server.url}/threads/${thread_id}/runs/${id}/join`,
        );
        if (!Array.isArray(out?.messages))
          throw new Error(`run ${id} answered ${JSON.stringify(out).slice(0, 200)}`);
      }),
    );
    const ms = performance.now() - t0;
    const after = threadCpu(server.pid);
    const spent = [...after].map(([tid, cpu]) => ({ tid, ms: cpu - (before.get(tid) ?? 0) }));
    const total = spent.reduce((s, t) => s + t.ms, 0);
    const api = spent.find((t) => t.tid === server.pid)?.ms ?? 0;
    const busy = spent.filter((t) => t.tid !== server.pid && t.ms >= total / 10).map((t) => t.ms);
    const other = total - api - busy.reduce((s, v) => s + v, 0);
    return {
      runsPerSec: (RUNS / ms) * 1000,
      cpuS: total / 1000,
      apiS: api / 1000,
      busyS: busy.sort((a, b) => b - a).map((v) => v / 1000),
      otherS: other / 1000,
    };
  } finally {
    await server.stop();
  }
}

installCleanupHandlers();
const start = loadavg();
console.log(
  `${RUNS} runs queued on one thread of the example chat graph, hangar dev --no-reload, ` +
    `HANGAR_GRAPH_THREADS=${values.threads}, LOG_LEVEL=${process.env.LOG_LEVEL ?? "(unset)"}`,
);
for (let i = 0; i < REPEAT; i++) {
  const r = await once(i);
  console.log(
    `  ${r.runsPerSec.toFixed(1)} runs/s, server CPU ${r.cpuS.toFixed(1)} s: API thread ${r.apiS.toFixed(1)}, ` +
      `busiest others ${r.busyS.map((s) => s.toFixed(1)).join(" + ") || "-"}, the rest ${r.otherS.toFixed(1)}`,
  );
}
console.log(
  `load average at start ${start.map((l) => l.toFixed(2)).join(" ")}, at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
