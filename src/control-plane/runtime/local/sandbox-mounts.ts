// The filesystem view of a sandboxed process: which host folders bubblewrap hides (an empty tmpfs) and which it
// binds back (read-only or writable), in an order where each mount lands on what the previous ones made.
import { existsSync, realpathSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve, sep } from "node:path";
import { HANGAR_ROOT } from "./proc.js";

/** Whether `child` is `parent` or below it. */
const within = (parent: string, child: string) => {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith(sep) && rel !== "..");
};
const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};
const depth = (p: string) => p.split("/").filter(Boolean).length;

/** The top of the node_modules chain Hangar is installed in (or Hangar's own folder). */
function hangarTree(): string {
  const root = real(HANGAR_ROOT);
  const i = root.indexOf(`${sep}node_modules${sep}`);
  return i >= 0 ? root.slice(0, i) : root;
}

export interface Mount {
  /** `mask`: a file (a socket) hidden under /dev/null, where a tmpfs cannot go. */
  kind: "tmpfs" | "ro" | "rw" | "mask";
  path: string;
}

/**
 * The container engines' sockets and state, and Docker's credentials: tenants' processes never reach the daemon
 * that builds images (the Docker group could otherwise be one chmod away), nor the registry's credentials.
 */
export function engineHidden(env: NodeJS.ProcessEnv = process.env, dockerConfig?: string): string[] {
  const paths = [
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/docker",
    "/run/containerd",
    "/run/buildkit",
    "/run/podman",
    "/var/lib/docker",
    "/var/lib/containerd",
    "/etc/docker",
  ];
  const host = env.DOCKER_HOST;
  if (host?.startsWith("unix://")) paths.push(host.slice("unix://".length));
  if (env.DOCKER_CONFIG) paths.push(env.DOCKER_CONFIG);
  if (dockerConfig) paths.push(dockerConfig);
  return paths;
}

const isDir = (p: string) => {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
};

/**
 * The mounts over the read-only root: host folders that may hold other tenants' or the control plane's data
 * are hidden (empty tmpfs), then what the process needs is bound back, shallowest first.
 */
export function mountPlan(
  dataDir: string,
  spec: { writable: string[]; readable?: string[] },
  hide: string[],
): Mount[] {
  const all = [dataDir, tmpdir(), "/tmp", "/var/tmp", "/root", "/home", "/mnt", "/media", "/srv", "/var/log"]
    .concat(hide)
    .filter((p) => existsSync(p))
    .map(real);
  const hidden = all.filter(isDir);
  const masked = all.filter((p) => !isDir(p));
  const node = dirname(dirname(real(process.execPath)));
  const readable = [hangarTree(), node, ...(spec.readable ?? [])].map(real);
  const writable = spec.writable.map(real);
  const mounts: Mount[] = [
    ...[...new Set(hidden)].map((path) => ({ kind: "tmpfs" as const, path })),
    ...[...new Set(readable)].map((path) => ({ kind: "ro" as const, path })),
    ...[...new Set(writable)].map((path) => ({ kind: "rw" as const, path })),
    ...[...new Set(masked)].map((path) => ({ kind: "mask" as const, path })),
  ];
  // The deepest other mount at or above a path decides what is there before this one.
  const above = (m: Mount) =>
    mounts
      .filter((o) => o !== m && within(o.path, m.path) && (o.path !== m.path || o.kind === "tmpfs"))
      .sort((a, b) => depth(b.path) - depth(a.path))[0];
  const needed = mounts.filter((m) => {
    const a = above(m);
    if (m.kind === "rw") return true;
    // Under a tmpfs it is gone already.
    if (m.kind === "mask") return !a || a.kind !== "tmpfs";
    if (m.kind === "ro") return !!a && a.kind === "tmpfs"; // else visible through the root already
    return !a || a.kind !== "tmpfs"; // a tmpfs below another hides nothing more
  });
  const order = { tmpfs: 0, ro: 1, rw: 2, mask: 3 };
  return needed.sort((a, b) => depth(a.path) - depth(b.path) || order[a.kind] - order[b.kind]);
}

/** Temporary folders stay writable by everyone (sticky), as on the host. */
const STICKY = new Set(["/tmp", "/var/tmp", real(tmpdir())]);

/**
 * bubblewrap's arguments for a mount plan. Folders on the way from a tmpfs to a folder bound below it are made
 * first, traversable (bubblewrap would make them 0700, which the sandbox's uid could not pass).
 */
export function mountArgs(plan: Mount[]): string[] {
  const args: string[] = [];
  const made = new Set<string>();
  for (const m of plan) {
    if (m.kind === "tmpfs") {
      args.push("--perms", STICKY.has(m.path) ? "1777" : "0755", "--tmpfs", m.path);
      made.add(m.path);
      continue;
    }
    if (m.kind === "mask") {
      args.push("--ro-bind", "/dev/null", m.path);
      continue;
    }
    const tmpfs = plan
      .filter((o) => o.kind === "tmpfs" && o.path !== m.path && within(o.path, m.path))
      .sort((a, b) => depth(b.path) - depth(a.path))[0];
    if (tmpfs) {
      const rel = relative(tmpfs.path, dirname(m.path)).split(sep).filter(Boolean);
      let p = tmpfs.path;
      for (const part of rel) {
        p = join(p, part);
        if (made.has(p)) continue;
        made.add(p);
        args.push("--perms", "0755", "--dir", p);
      }
    }
    args.push(m.kind === "ro" ? "--ro-bind" : "--bind", m.path, m.path);
  }
  return args;
}
