/**
 * Runs queued on one long thread (issue 26): a thread of the example chat graph takes `--runs` background runs
 * (multitask_strategy enqueue, posted one after the other), all then joined; the thread's state grows by two
 * messages a run, so what a run costs in proportion to its thread's state shows here and not on new threads.
 *
 *   npm run bench:one-thread -- [--runs 400] [--threads 2] [--repeat 1] [--target hangar,peer,inprocess]
 *
 * Targets, one after the other in each repetition, each fresh:
 * - `hangar`: `hangar dev --no-reload`, logging as a user's does (a line per request, two per run); its CPU over
 *   the runs per thread of its process (/proc/<pid>/task: the API thread, the graph threads, V8's helpers).
 * - `peer`: the official dev server (`langgraphjs dev`), the same requests; the CPU of its process group.
 * - `inprocess`: no server, the floor: the same inputs given to `graph.invoke` one after the other on one thread
 *   id, the chat model made to stream as a server's runs do, LangGraph's SqliteSaver on a file; this process's CPU.
 * Then each server's CPU per run as a multiple of the floor's: what any server pays for the graph's own work on a
 * long thread (restoring and checkpointing its whole state each run) bounds how much cheaper one can be than another.
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { loadStreamingInvoker } from "./baseline.ts";
import { getJson, postJson } from "./client.ts";
import { groupCpuMs, threadCpu } from "./proc.ts";
import { installCleanupHandlers, startHangar, startPeer, type BenchServer } from "./servers.ts";

const { values } = parseArgs({
  options: {
    runs: { type: "string", default: "400" },
    threads: { type: "string", default: "2" },
    repeat: { type: "string", default: "1" },
    target: { type: "string", default: "hangar" },
  },
});
const TARGETS = ["hangar", "peer", "inprocess"] as const;
type Target = (typeof TARGETS)[number];
const targets = values.target.split(",").map((t) => t.trim()) as Target[];
for (const t of targets)
  if (!TARGETS.includes(t)) throw new Error(`--target: ${t} is not one of ${TARGETS.join(", ")}`);
const RUNS = Number(values.runs);
const REPEAT = Number(values.repeat);
if (!(RUNS > 0) || !(REPEAT > 0)) throw new Error("--runs and --repeat take positive numbers");

interface Result {
  target: Target;
  runsPerSec: number;
  cpuS: number;
  /** hangar: the API thread; the threads (other than the API's) that spent at least a tenth of the CPU (the graph
   * threads at work); the rest. */
  apiS?: number;
  busyS?: number[];
  otherS?: number;
}

const input = (n: number) => ({ messages: [{ role: "user", content: `hello ${n}` }] });

/** Posts the runs on one new thread of `server`, one after the other, then joins them all; the wall time in ms. */
async function queueRuns(server: BenchServer): Promise<{ ms: number }> {
  const { thread_id } = await postJson<{ thread_id: string }>(`${server.url}/threads`, {});
  const t0 = performance.now();
  const runIds: string[] = [];
  for (let n = 0; n < RUNS; n++) {
    const run = await postJson<{ run_id: string }>(`${server.url}/threads/${thread_id}/runs`, {
      assistant_id: "chat",
      input: input(n),
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
  return { ms: performance.now() - t0 };
}

/** One run on another thread, untimed, on either server (the official dev server loads the graph at its first). */
async function warmUp(server: BenchServer): Promise<void> {
  const { thread_id } = await postJson<{ thread_id: string }>(`${server.url}/threads`, {});
  await postJson(`${server.url}/threads/${thread_id}/runs/wait`, { assistant_id: "chat", input: input(0) });
}

async function hangar(i: number): Promise<Result> {
  const server = await startHangar(`one-thread-${i}`, { env: { HANGAR_GRAPH_THREADS: values.threads } });
  try {
    await warmUp(server);
    const before = threadCpu(server.pid);
    const { ms } = await queueRuns(server);
    const after = threadCpu(server.pid);
    const spent = [...after].map(([tid, cpu]) => ({ tid, ms: cpu - (before.get(tid) ?? 0) }));
    const total = spent.reduce((s, t) => s + t.ms, 0);
    const api = spent.find((t) => t.tid === server.pid)?.ms ?? 0;
    const busy = spent.filter((t) => t.tid !== server.pid && t.ms >= total / 10).map((t) => t.ms);
    const other = total - api - busy.reduce((s, v) => s + v, 0);
    return {
      target: "hangar",
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

async function peer(i: number): Promise<Result> {
  const server = await startPeer(`one-thread-peer-${i}`);
  try {
    await warmUp(server);
    const before = groupCpuMs(server.pid);
    const { ms } = await queueRuns(server);
    const cpu = groupCpuMs(server.pid) - before;
    return { target: "peer", runsPerSec: (RUNS / ms) * 1000, cpuS: cpu / 1000 };
  } finally {
    await server.stop();
  }
}

async function inProcess(): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), "hangar-bench-one-thread-"));
  const saver = SqliteSaver.fromConnString(join(dir, "checkpoints.sqlite"));
  try {
    const invoke = await loadStreamingInvoker(saver);
    // Warm-up on another thread, untimed (as the servers' first runs are).
    for (let n = 0; n < 20; n++) await invoke(randomUUID(), input(n));
    const threadId = randomUUID();
    const before = process.cpuUsage();
    const t0 = performance.now();
    for (let n = 0; n < RUNS; n++) {
      const out = (await invoke(threadId, input(n))) as { messages?: unknown[] };
      if (out.messages?.length !== 2 * (n + 1))
        throw new Error(`inprocess: run ${n} left ${out.messages?.length} messages`);
    }
    const ms = performance.now() - t0;
    const used = process.cpuUsage(before);
    return { target: "inprocess", runsPerSec: (RUNS / ms) * 1000, cpuS: (used.user + used.system) / 1e6 };
  } finally {
    saver.db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function describe(r: Result): string {
  const head = `  ${r.target.padEnd(9)} ${r.runsPerSec.toFixed(1)} runs/s, CPU ${r.cpuS.toFixed(1)} s (${((r.cpuS / RUNS) * 1000).toFixed(1)} ms/run)`;
  if (r.apiS === undefined) return head;
  return (
    `${head}: API thread ${r.apiS.toFixed(1)}, busiest others ` +
    `${r.busyS?.map((s) => s.toFixed(1)).join(" + ") || "-"}, the rest ${r.otherS?.toFixed(1)}`
  );
}

installCleanupHandlers();
const start = loadavg();
console.log(
  `${RUNS} runs queued on one thread of the example chat graph (${targets.join(", ")}); hangar: hangar dev ` +
    `--no-reload, HANGAR_GRAPH_THREADS=${values.threads}, LOG_LEVEL=${process.env.LOG_LEVEL ?? "(unset)"}`,
);
const all: Result[] = [];
for (let i = 0; i < REPEAT; i++) {
  for (const t of targets) {
    const r = t === "hangar" ? await hangar(i) : t === "peer" ? await peer(i) : await inProcess();
    all.push(r);
    console.log(describe(r));
  }
}
const mean = (t: Target, k: "cpuS" | "runsPerSec") => {
  const rs = all.filter((r) => r.target === t);
  return rs.length ? rs.reduce((s, r) => s + r[k], 0) / rs.length : undefined;
};
const floor = mean("inprocess", "cpuS");
const lines: string[] = [];
for (const t of ["hangar", "peer"] as const) {
  const cpu = mean(t, "cpuS");
  if (cpu !== undefined && floor) lines.push(`${t} CPU / inprocess CPU ${(cpu / floor).toFixed(2)}`);
}
const [h, p] = [mean("hangar", "cpuS"), mean("peer", "cpuS")];
if (h && p) {
  lines.push(`peer CPU / hangar CPU ${(p / h).toFixed(2)}`);
  lines.push(
    `hangar runs/s / peer runs/s ${(mean("hangar", "runsPerSec")! / mean("peer", "runsPerSec")!).toFixed(2)}`,
  );
}
if (lines.length) console.log(`means over ${REPEAT} repetition(s): ${lines.join("; ")}`);
console.log(
  `load average at start ${start.map((l) => l.toFixed(2)).join(" ")}, at end ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`,
);
