// Cgroup limits (memory, CPU, number of processes) of sandboxed builds and Agent Servers: one cgroup per process
// below the control plane's own, on cgroup v1 (one hierarchy per controller) or v2 (unified).
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

export interface CgroupLimits {
  memoryMb: number;
  cpus: number;
  pids: number;
}

export interface Cgroup {
  /** The `cgroup.procs` files a process writes its pid to, to join. */
  procs: string[];
  /** Removes the cgroup (once its processes are gone; retried for a while otherwise). */
  remove(): void;
}

export interface CgroupSupport {
  describe(): string;
  create(name: string): Cgroup;
}

const ROOT = "/sys/fs/cgroup";
const PERIOD = 100_000;

/** The control plane's own cgroup per controller, from /proc/self/cgroup (v1 lines `N:ctrl,ctrl:/path`). */
function ownCgroups(): { v2?: string; v1: Map<string, string> } {
  const v1 = new Map<string, string>();
  let v2: string | undefined;
  for (const line of readFileSync("/proc/self/cgroup", "utf8").split("\n")) {
    const m = /^\d+:([^:]*):(.*)$/.exec(line);
    if (!m) continue;
    if (m[1] === "") v2 = m[2];
    for (const c of m[1].split(",")) if (c) v1.set(c, m[2]);
  }
  return { v2, v1 };
}

/** The folder of a v1 controller's hierarchy (`/sys/fs/cgroup/cpu` or `/sys/fs/cgroup/cpu,cpuacct`). */
function v1Mount(controller: string): string | null {
  const direct = join(ROOT, controller);
  if (existsSync(join(direct, "cgroup.procs"))) return direct;
  for (const name of readdirSync(ROOT)) {
    if (name.split(",").includes(controller) && existsSync(join(ROOT, name, "cgroup.procs"))) {
      return join(ROOT, name);
    }
  }
  return null;
}

function removeLater(dirs: string[]): void {
  let tries = 0;
  const attempt = () => {
    const left = dirs.filter((d) => {
      try {
        rmdirSync(d);
        return false;
      } catch (e) {
        return (e as NodeJS.ErrnoException).code !== "ENOENT";
      }
    });
    if (left.length && ++tries < 20) setTimeout(attempt, 500).unref();
    dirs = left;
  };
  attempt();
}

/**
 * Removes the `hangar-*` cgroups left behind under `base` (a control plane killed, or gone before its last
 * removal retry): only empty ones can go, and only those older than a minute (a newer one may be another
 * control plane's, about to be joined).
 */
function sweep(base: string): void {
  let names: string[];
  try {
    names = readdirSync(base).filter((n) => n.startsWith("hangar-"));
  } catch {
    return;
  }
  for (const name of names) {
    try {
      if (Date.now() - statSync(join(base, name)).mtimeMs > 60_000) rmdirSync(join(base, name));
    } catch {
      // in use, or already gone
    }
  }
}

function v1Support(limits: CgroupLimits): CgroupSupport | string {
  const own = ownCgroups().v1;
  const files: Record<string, [string, string][]> = {
    memory: [["memory.limit_in_bytes", String(limits.memoryMb * 1024 * 1024)]],
    cpu: [
      ["cpu.cfs_period_us", String(PERIOD)],
      ["cpu.cfs_quota_us", String(limits.cpus * PERIOD)],
    ],
    pids: [["pids.max", String(limits.pids)]],
  };
  const bases: [string, string][] = [];
  for (const c of Object.keys(files)) {
    const mount = v1Mount(c);
    if (!mount || !own.has(c)) return `no cgroup v1 ${c} controller`;
    bases.push([c, join(mount, own.get(c)!)]);
  }
  for (const [, base] of bases) sweep(base);
  return {
    describe: () =>
      `cgroup v1 limits: memory ${limits.memoryMb} MB, ${limits.cpus} CPU, ${limits.pids} processes`,
    create: (name) => {
      const dirs: string[] = [];
      try {
        for (const [c, base] of bases) {
          const dir = join(base, `hangar-${name}`);
          mkdirSync(dir, { recursive: true });
          dirs.push(dir);
          for (const [f, v] of files[c]) writeFileSync(join(dir, f), v);
        }
      } catch (e) {
        removeLater(dirs);
        throw e;
      }
      return { procs: dirs.map((d) => join(d, "cgroup.procs")), remove: () => removeLater(dirs) };
    },
  };
}

function v2Support(limits: CgroupLimits, path: string): CgroupSupport | string {
  const base = join(ROOT, path);
  const wanted = ["memory", "cpu", "pids"];
  const available = readFileSync(join(base, "cgroup.controllers"), "utf8").split(/\s+/);
  const missing = wanted.filter((c) => !available.includes(c));
  if (missing.length) return `cgroup v2 controllers missing: ${missing.join(", ")}`;
  sweep(base);
  try {
    // Only possible where the control plane's cgroup has no process of its own (the root, or a delegated one).
    writeFileSync(join(base, "cgroup.subtree_control"), wanted.map((c) => `+${c}`).join(" "));
  } catch (e) {
    return `cannot enable cgroup v2 controllers in ${base} (${(e as NodeJS.ErrnoException).code}); run the control plane in a delegated cgroup`;
  }
  return {
    describe: () =>
      `cgroup v2 limits: memory ${limits.memoryMb} MB, ${limits.cpus} CPU, ${limits.pids} processes`,
    create: (name) => {
      const dir = join(base, `hangar-${name}`);
      mkdirSync(dir, { recursive: true });
      try {
        writeFileSync(join(dir, "memory.max"), String(limits.memoryMb * 1024 * 1024));
        writeFileSync(join(dir, "cpu.max"), `${limits.cpus * PERIOD} ${PERIOD}`);
        writeFileSync(join(dir, "pids.max"), String(limits.pids));
      } catch (e) {
        removeLater([dir]);
        throw e;
      }
      return { procs: [join(dir, "cgroup.procs")], remove: () => removeLater([dir]) };
    },
  };
}

/** What this host offers: limits on v1 or v2, or none (with the reason, in `describe()`). */
export function detectCgroups(limits: CgroupLimits): CgroupSupport {
  let support: CgroupSupport | string;
  try {
    const own = ownCgroups();
    support =
      existsSync(join(ROOT, "cgroup.controllers")) && own.v2 !== undefined
        ? v2Support(limits, own.v2)
        : v1Support(limits);
    if (typeof support !== "string") support.create(`probe-${process.pid}`).remove();
  } catch (e) {
    support = `cgroups unusable: ${(e as Error).message}`;
  }
  if (typeof support !== "string") return support;
  const reason = support;
  return {
    describe: () => `no cgroup limits: ${reason}`,
    create: () => ({ procs: [], remove: () => {} }),
  };
}
