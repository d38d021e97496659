/**
 * Schemas benchmark (`npm run bench:schemas`, issue 25 "Schemas"): how soon a Studio-like client gets the schemas of
 * every graph of a project of 11 typed graphs (bench/projects/schemas-11), on Hangar (`hangar dev`) and on the
 * official dev server (`langgraphjs dev` of @langchain/langgraph-cli, "peer"), in the same run:
 *
 *   npm run bench:schemas -- [--project <dir of langgraph.json>] [--rounds 1] [--listen 5] [--baseline <checkout>]
 *                            [--phases listen,seq,conc]
 *
 * For each round, each phase on every target in turn:
 *   listening      spawn -> first GET /ok answered (median of --listen fresh starts, each on a fresh data dir)
 *   cold seq       a fresh start, then GET /assistants/{graph}/schemas of each graph one after the other, at once
 *                  after listening: the wall time until the last answer (and the slowest single answer)
 *   cold 4x        a fresh start, then the same requests 4 at a time (a pool of 4 over the 11 graphs)
 *   warm seq       the cold-seq server stopped and started again on the same data dir (Hangar's schema cache; the
 *                  official server keeps nothing across restarts), then the same sequential requests
 * Each phase also reports the CPU time its server's process group used meanwhile (from /proc; worker threads and
 * reaped children included): on a shared machine the wall times follow its load, the CPU times much less.
 * `--baseline <checkout>` adds a target `base`: another Hangar checkout (e.g. a worktree of the commit before, with a
 * node_modules symlink) whose time to listening is measured beside, to see what this one's start costs.
 * Hangar runs from its TypeScript sources (HANGAR_FROM_SOURCE=1: the same for both checkouts, whatever their dist/).
 * The peer gets LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS=600000 so that its 30 s default does not answer 500 under load.
 * Every answer must be a 200. Results are printed and written to bench/results/<timestamp>-schemas.json.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, cpus, loadavg, tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { copyProject } from "../test/helpers/schema-transcript.ts";
import {
  freePort,
  groupAlive,
  installCleanupHandlers,
  peerCliEntry,
  RESULTS_DIR,
  ROOT,
  signalGroup,
} from "./servers.ts";

type Target = "hangar" | "peer" | "base";

interface Started {
  url: string;
  listenMs: number;
  /** CPU ms used so far by the server's process group (threads included; reaped children too). */
  cpuMs: () => number;
  stop: () => Promise<void>;
}

const TICK_MS = 10; // USER_HZ = 100 on Linux

/** utime + stime + cutime + cstime of every process of group `pgid`, from /proc, in ms. */
function groupCpuMs(pgid: number): number {
  let ticks = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // After the command: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) cutime(13) cstime(14).
    if (Number(f[2]) === pgid) ticks += Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  }
  return ticks * TICK_MS;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running = new Set<ChildProcess>();

async function stopProc(proc: ChildProcess): Promise<void> {
  const pid = proc.pid!;
  signalGroup(pid, "SIGTERM");
  for (let i = 0; i < 100 && groupAlive(pid); i++) await sleep(50);
  if (groupAlive(pid)) signalGroup(pid, "SIGKILL");
  running.delete(proc);
}

process.once("exit", () => {
  for (const p of running) signalGroup(p.pid!, "SIGKILL");
});

/** Spawns a server in its own process group and resolves once GET /ok answers (timing from the spawn). */
async function spawnServer(
  args: string[],
  cwd: string,
  url: string,
  env: NodeJS.ProcessEnv,
): Promise<Started> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  running.add(proc);
  let out = "";
  const keep = (d: Buffer) => void (out.length < 100_000 && (out += d.toString()));
  proc.stdout!.on("data", keep);
  proc.stderr!.on("data", keep);
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`${args.join(" ")} exited:\n${out.slice(-3000)}`);
    if (performance.now() - t0 > 180_000) {
      await stopProc(proc);
      throw new Error(`no /ok in 180 s:\n${out.slice(-3000)}`);
    }
    const ok = await fetch(`${url}/ok`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) {
      const cpuMs = () => groupCpuMs(proc.pid!);
      return { url, listenMs: performance.now() - t0, cpuMs, stop: () => stopProc(proc) };
    }
    await sleep(20);
  }
}

/** Where a target runs: its project copy (peer: it writes .langgraph_api into it) and data dir. */
interface Place {
  config: string;
  dataDir: string;
  cleanup: () => void;
}

function place(target: Target, projectRel: string): Place {
  if (target === "peer") {
    const { base, project } = copyProject(projectRel, "hangar-bench-schemas-peer-");
    writeFileSync(join(project, ".gitignore"), ".langgraph_api\n");
    return {
      config: join(project, "langgraph.json"),
      dataDir: base,
      cleanup: () => rmSync(base, { recursive: true, force: true }),
    };
  }
  const dataDir = mkdtempSync(join(tmpdir(), "hangar-bench-schemas-"));
  const cleanup = () => rmSync(dataDir, { recursive: true, force: true });
  return { config: join(ROOT, projectRel, "langgraph.json"), dataDir, cleanup };
}

async function start(target: Target, p: Place, baseline?: string): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // Both Hangar checkouts run from their sources (tsx), whatever state a dist/ build of either is in.
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "warn", HANGAR_FROM_SOURCE: "1" };
  delete env.PORT;
  if (target === "peer") {
    delete env.HANGAR_FROM_SOURCE;
    Object.assign(env, {
      LANGGRAPH_CLI_NO_ANALYTICS: "1",
      LANGSMITH_TRACING: "false",
      LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: "600000",
    });
    const args = [peerCliEntry(), "dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser"];
    return spawnServer([...args, "--no-reload", "--config", p.config], dirname(p.config), url, env);
  }
  const bin = join(target === "base" ? baseline! : ROOT, "bin/hangar.js");
  const args = [bin, "dev", "--config", p.config, "--port", String(port), "--host", "127.0.0.1"];
  return spawnServer([...args, "--data-dir", p.dataDir, "--no-reload"], ROOT, url, env);
}

/** GET /schemas of every graph, `concurrency` at a time; wall time, slowest answer, the server's CPU meanwhile. */
async function firstSchemas(srv: Started, graphs: string[], concurrency: number) {
  const { url } = srv;
  const cpu0 = srv.cpuMs();
  const t0 = performance.now();
  const each: Record<string, number> = {};
  const queue = [...graphs];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let g = queue.shift(); g; g = queue.shift()) {
        const t = performance.now();
        const res = await fetch(`${url}/assistants/${g}/schemas`);
        const body = await res.text();
        if (res.status !== 200)
          throw new Error(`/assistants/${g}/schemas: ${res.status} ${body.slice(0, 300)}`);
        each[g] = performance.now() - t;
      }
    }),
  );
  const wallMs = performance.now() - t0;
  return { wallMs, slowestMs: Math.max(...Object.values(each)), cpuMs: srv.cpuMs() - cpu0, each };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      project: { type: "string", default: "bench/projects/schemas-11" },
      rounds: { type: "string", default: "1" },
      listen: { type: "string", default: "5" },
      baseline: { type: "string" },
      phases: { type: "string", default: "listen,seq,conc" },
    },
  });
  installCleanupHandlers();
  const projectRel = relative(ROOT, resolve(ROOT, values.project!));
  const graphs = Object.keys(
    (JSON.parse(readFileSync(join(ROOT, projectRel, "langgraph.json"), "utf8")) as { graphs: object }).graphs,
  );
  const targets: Target[] = ["hangar", "peer"];
  const baseline = values.baseline && resolve(values.baseline);
  const results: Record<string, Record<string, unknown>> = {};
  const log = (line: string) => process.stderr.write(`${line}\n`);
  log(
    `project ${projectRel}: ${graphs.length} graphs; ${availableParallelism()} cores, load ${loadavg()[0].toFixed(1)}`,
  );

  // Time to listening: fresh starts, the targets interleaved.
  const listen: Record<string, number[]> = {};
  const phases = new Set(values.phases!.split(","));
  for (let i = 0; i < (phases.has("listen") ? Number(values.listen) : 0); i++) {
    for (const t of [...targets, ...(baseline ? (["base"] as const) : [])]) {
      const p = place(t, projectRel);
      try {
        const srv = await start(t, p, baseline);
        (listen[t] ??= []).push(srv.listenMs);
        await srv.stop();
      } finally {
        p.cleanup();
      }
    }
  }
  for (const [t, xs] of Object.entries(listen)) {
    results[t] = { ...results[t], listeningMs: { median: median(xs), all: xs } };
    log(`${t.padEnd(7)} listening: median ${s(median(xs))} (${xs.map(s).join(", ")})`);
  }

  // The phases, each on every target in turn (interleaved, so that a change of the machine's load hits both).
  const show = (x: Awaited<ReturnType<typeof firstSchemas>>) =>
    `${s(x.wallMs)} (slowest ${s(x.slowestMs)}, server CPU ${s(x.cpuMs)})`;
  const record = (t: Target, key: string, x: Awaited<ReturnType<typeof firstSchemas>>) => {
    (((results[t] ??= {})[key] ??= []) as unknown[]).push(x);
    log(`${t.padEnd(7)} ${key}: ${show(x)}`);
  };
  for (let round = 1; round <= Number(values.rounds); round++) {
    log(`round ${round}`);
    for (const t of phases.has("seq") ? targets : []) {
      // Cold, sequential; then a restart on the same data dir / project copy (warm).
      const p = place(t, projectRel);
      try {
        let srv = await start(t, p);
        record(t, "coldSequential", await firstSchemas(srv, graphs, 1));
        await srv.stop();
        srv = await start(t, p);
        record(t, "warmSequential", await firstSchemas(srv, graphs, 1));
        await srv.stop();
      } finally {
        p.cleanup();
      }
    }
    for (const t of phases.has("conc") ? targets : []) {
      const q = place(t, projectRel);
      try {
        const srv = await start(t, q);
        record(t, "cold4Concurrent", await firstSchemas(srv, graphs, 4));
        await srv.stop();
      } finally {
        q.cleanup();
      }
    }
  }
  for (const key of ["coldSequential", "warmSequential", "cold4Concurrent"]) {
    const line = targets.map((t) => {
      const xs = (results[t]?.[key] ?? []) as Awaited<ReturnType<typeof firstSchemas>>[];
      const wall = median(xs.map((x) => x.wallMs));
      const cpu = median(xs.map((x) => x.cpuMs));
      return `${t} ${s(wall)} wall, ${s(cpu)} CPU`;
    });
    log(`median ${key}: ${line.join("; ")}`);
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${new Date().toISOString().replace(/[:.]/g, "-")}-schemas.json`);
  const meta = {
    project: projectRel,
    graphs,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model,
    load: loadavg(),
  };
  writeFileSync(file, JSON.stringify({ meta, results }, null, 2));
  log(`results: ${relative(ROOT, file)} (${basename(file)})`);
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`${e.stack ?? e.message}\n`);
    process.exit(1);
  },
);
