// What the benches read of processes and threads from /proc (Linux): their `stat` fields, CPU and process groups.
import { readdirSync, readFileSync } from "node:fs";

/** The fields of a /proc `stat` file after "(comm) ": [0] state, [2] pgrp, [11] utime, [12] stime (clock ticks). */
function statFields(path: string): string[] {
  const stat = readFileSync(path, "utf-8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** User + system CPU in ms of a `stat` file's process or thread (100 ticks per second). */
function cpuMs(path: string): number {
  const f = statFields(path);
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** User + system CPU of one process, all its threads (graph threads included), in ms. */
export function processCpuMs(pid: number): number {
  return cpuMs(`/proc/${pid}/stat`);
}

/** CPU (user + system, ms) of each thread of a process, by thread id (a thread that ended meanwhile is left out). */
export function threadCpu(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), cpuMs(`/proc/${pid}/task/${tid}/stat`));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** The pids of process group `pgid`. */
export function groupPids(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (Number(statFields(`/proc/${d}/stat`)[2]) === pgid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU (user + system, ms) of every process of process group `pgid`, their threads included. */
export function groupCpuMs(pgid: number): number {
  let ms = 0;
  for (const pid of groupPids(pgid)) {
    try {
      ms += processCpuMs(pid);
    } catch {
      // The process ended meanwhile.
    }
  }
  return ms;
}
