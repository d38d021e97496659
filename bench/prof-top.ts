/**
 * Summarises a V8 CPU profile (.cpuprofile, as `node --cpu-prof` or BENCH_PROF_DIR writes it): where the
 * process's CPU went, by self time per function and per package or source folder, and the inclusive time of
 * Hangar's own functions (what a call costs with everything it calls).
 *
 *   npx tsx bench/prof-top.ts <file.cpuprofile> [--top 30] [--callers <function name>]
 *
 * `--callers` lists instead the call chains (5 frames up) that spend the self time of a function, e.g. which code
 * asks for `randomFillSync`. A profile samples the thread at intervals, blocked or not: a synchronous write or
 * fsync counts while it waits, so self time of system calls overstates their CPU (bench:cpu reports CPU from /proc).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
  hitCount?: number;
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: "string", default: "30" }, callers: { type: "string" } },
});
if (!positionals[0]) {
  console.error("usage: tsx bench/prof-top.ts <file.cpuprofile> [--top 30]");
  process.exit(2);
}
const top = Number(values.top);
const prof = JSON.parse(readFileSync(positionals[0], "utf8")) as Profile;
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

// Self time per node, from the samples and their time deltas (µs).
const self = new Map<number, number>();
prof.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);
const idle = [...self.entries()]
  .filter(([id]) => ["(idle)", "(program)"].includes(byId.get(id)!.callFrame.functionName))
  .reduce((a, [, t]) => a + t, 0);

/** Where a frame's code lives: a package (node_modules/<pkg>), a folder of src/, node's own, or V8's. */
function place(url: string, fn: string): string {
  if (!url) return fn.startsWith("(") ? fn : "(native)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split("/");
    return rest[0].startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  if (url.startsWith("node:")) return "node:" + url.slice(5).split("/")[0];
  const m = /\/(src|dist)\/(.+)\/[^/]+$/.exec(url);
  if (m) return `hangar:${m[2]}`;
  const f = /\/(src|dist)\/([^/]+)$/.exec(url);
  return f ? `hangar:${f[2]}` : url.replace(/^file:\/\//, "");
}

const fmt = (us: number) =>
  `${(us / 1000).toFixed(0).padStart(7)} ms ${((100 * us) / total).toFixed(1).padStart(5)}%`;
const label = (n: Node) => {
  const f = n.callFrame;
  const file = f.url.replace(/^.*\/(node_modules|src|dist)\//, "$1/");
  return `${f.functionName || "(anonymous)"} ${file}:${f.lineNumber + 1}`;
};

const selfByFn = new Map<string, number>();
const selfByPlace = new Map<string, number>();
for (const [id, t] of self) {
  const n = byId.get(id)!;
  selfByFn.set(label(n), (selfByFn.get(label(n)) ?? 0) + t);
  const p = place(n.callFrame.url, n.callFrame.functionName);
  selfByPlace.set(p, (selfByPlace.get(p) ?? 0) + t);
}

// Inclusive time of Hangar's functions: each sample counts once for every distinct Hangar frame on its stack.
const inclusive = new Map<string, number>();
prof.samples.forEach((id, i) => {
  const seen = new Set<string>();
  for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
    const n = byId.get(cur)!;
    if (!/\/(src|dist)\//.test(n.callFrame.url) || n.callFrame.url.includes("node_modules")) continue;
    const l = label(n);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + (prof.timeDeltas[i] ?? 0));
  }
});

if (values.callers) {
  const chains = new Map<string, number>();
  for (const [id, t] of self) {
    if (byId.get(id)!.callFrame.functionName !== values.callers) continue;
    const chain: string[] = [];
    for (let cur = parent.get(id), k = 0; cur !== undefined && k < 5; cur = parent.get(cur), k++)
      chain.push(label(byId.get(cur)!));
    const key = chain.join("  <  ");
    chains.set(key, (chains.get(key) ?? 0) + t);
  }
  console.log(`self time of ${values.callers}, by the chain of its callers`);
  for (const [k, t] of [...chains.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${fmt(t)}  ${k}`);
  process.exit(0);
}

const show = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [k, t] of [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${fmt(t)}  ${k}`);
};
console.log(
  `${positionals[0]}: ${(total / 1000).toFixed(0)} ms sampled, ${(idle / 1000).toFixed(0)} ms idle or (program)`,
);
show("self time by package / folder", selfByPlace);
show("self time by function", selfByFn);
show("inclusive time of Hangar's functions", inclusive);
