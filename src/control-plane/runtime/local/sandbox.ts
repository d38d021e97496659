// The sandbox of tenants' build commands and Agent Servers on the control plane's machine: own PID, IPC and
// mount namespaces (bubblewrap), a distinct unprivileged uid per deployment (setpriv), cgroup limits, no env.
import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { lchown, lstat, readdir } from "node:fs/promises";
import { delimiter, dirname, join, resolve } from "node:path";
import { settings, type Settings } from "../../../lib/settings.js";
import { CHILD_PATH } from "./proc.js";
import { engineHidden, mountArgs, mountPlan } from "./sandbox-mounts.js";
import { type CgroupLimits, type CgroupSupport, detectCgroups } from "./sandbox-cgroup.js";
import { ConfigError } from "../../../lib/errors.js";

/** The sandbox's settings, from HANGAR_CP_SANDBOX* variables. */
export interface SandboxSettings {
  /** `auto` (default): on where the host can; `on`: refuse to start otherwise; `off`: never (one tenant). */
  mode: "auto" | "on" | "off";
  uidFirst: number;
  uidLast: number;
  limits: CgroupLimits;
  /** More host paths hidden from sandboxes (HANGAR_CP_SANDBOX_HIDE, `:`-separated). */
  hide: string[];
}

/** A setting the sandbox cannot work with, reported at start-up. */
export class SandboxConfigError extends ConfigError {}

/** The sandbox's settings from the HANGAR_CP_SANDBOX* variables (default: this process's). */
export function sandboxSettings(env: Settings["sandbox"] = settings().sandbox): SandboxSettings {
  return {
    mode: env.mode,
    uidFirst: env.uids.first,
    uidLast: env.uids.last,
    limits: { memoryMb: env.memoryMb, cpus: env.cpus, pids: env.pids },
    hide: [
      ...env.hide.filter((s) => s.startsWith("/")),
      ...engineHidden(process.env, settings().controlPlane.imageDockerConfig),
    ],
  };
}

/** What one sandboxed process may see and do. */
export interface SandboxSpec {
  /** Names its cgroup (`hangar-<name>`). */
  name: string;
  uid: number;
  cwd: string;
  /** Host folders it may write (bound at the same path). */
  writable: string[];
  /** Host folders it may read beside the system (bound read-only at the same path). */
  readable?: string[];
  cmd: string;
  args: string[];
  env: Record<string, string>;
}

/** A command line that runs a spec sandboxed; `done()` releases its cgroup once it exited. */
export interface SandboxedCommand {
  cmd: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  done(): void;
}

/** How this control plane runs tenants' processes: sandboxed, or (with the reason) not. */
export interface Sandbox {
  readonly enabled: boolean;
  /** Why it is not enabled; empty when it is. */
  readonly reason: string;
  /** One line for the start-up output. */
  describe(): string;
  /** The uid (and gid) of a deployment's builds and Agent Servers: allocated once, kept in the data dir. */
  uidFor(deploymentId: string): number;
  wrap(spec: SandboxSpec): SandboxedCommand;
}

function which(name: string): string | null {
  for (const dir of CHILD_PATH.split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // next
    }
  }
  return null;
}

/** Puts the shell into each cgroup, then runs the rest of its arguments. */
const JOIN_CGROUPS =
  'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ > "$1" || exit 125; shift; n=$((n-1)); done; exec "$@"';

class UidTable {
  private file: string;
  constructor(
    dataDir: string,
    private first: number,
    private last: number,
  ) {
    this.file = join(dataDir, "sandbox-uids.json");
  }
  uidFor(deploymentId: string): number {
    let table: { next: number; uids: Record<string, number> } = { next: this.first, uids: {} };
    try {
      table = JSON.parse(readFileSync(this.file, "utf8"));
    } catch {
      // first use
    }
    const known = table.uids[deploymentId];
    if (known) return known;
    const uid = Math.max(table.next, this.first);
    if (uid > this.last) {
      throw new SandboxConfigError(
        `HANGAR_CP_SANDBOX_UIDS: the range ${this.first}-${this.last} is used up (one uid per deployment)`,
      );
    }
    table.uids[deploymentId] = uid;
    table.next = uid + 1;
    mkdirSync(dirname(this.file), { recursive: true });
    writeFileSync(`${this.file}.tmp`, JSON.stringify(table));
    renameSync(`${this.file}.tmp`, this.file);
    return uid;
  }
}

class LinuxSandbox implements Sandbox {
  readonly enabled = true;
  readonly reason = "";
  private uids: UidTable;
  constructor(
    private dataDir: string,
    private settings: SandboxSettings,
    private tools: { bwrap: string; unshare: string; setpriv: string; sh: string },
    private cgroups: CgroupSupport,
  ) {
    this.uids = new UidTable(dataDir, settings.uidFirst, settings.uidLast);
  }
  describe(): string {
    const s = this.settings;
    return (
      `on (bubblewrap: own PID, IPC and mount namespaces; uids ${s.uidFirst}-${s.uidLast}, one per deployment; ` +
      `${this.cgroups.describe()})`
    );
  }
  uidFor(deploymentId: string): number {
    return this.uids.uidFor(deploymentId);
  }
  wrap(spec: SandboxSpec): SandboxedCommand {
    const cg = this.cgroups.create(spec.name);
    const mounts = mountArgs(mountPlan(this.dataDir, spec, this.settings.hide));
    const { bwrap, unshare, setpriv, sh } = this.tools;
    const uid = String(spec.uid);
    const args = [
      "-c",
      JOIN_CGROUPS,
      "hangar-sandbox",
      String(cg.procs.length),
      ...cg.procs,
      // If the control plane dies, so does the sandbox (unshare's child, then everything in its PID namespace).
      setpriv,
      "--pdeathsig",
      "KILL",
      "--",
      // unshare waits for its child and ignores SIGTERM, so a stop reaches the process itself (same process
      // group) and the leader stays until it exited.
      unshare,
      "--fork",
      "--pid",
      "--kill-child",
      "--",
      bwrap,
      "--die-with-parent",
      "--unshare-pid",
      "--unshare-ipc",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--proc",
      "/proc",
      ...mounts,
      "--chdir",
      spec.cwd,
      "--cap-add",
      "CAP_SETUID",
      "--cap-add",
      "CAP_SETGID",
      "--",
      setpriv,
      "--reuid",
      uid,
      "--regid",
      uid,
      "--clear-groups",
      "--no-new-privs",
      "--inh-caps=-all",
      "--bounding-set=-all",
      "--",
      spec.cmd,
      ...spec.args,
    ];
    return { cmd: sh, args, env: spec.env, cwd: "/", done: () => cg.remove() };
  }
}

/** Runs tenants' processes as the control plane's own user (single tenant only). */
class NoSandbox implements Sandbox {
  readonly enabled = false;
  constructor(readonly reason: string) {}
  describe(): string {
    return `OFF (${this.reason}): builds and deployments run as the control plane's user, so this control plane runs the deployments of one organization only`;
  }
  uidFor(): number {
    return process.getuid?.() ?? 0;
  }
  wrap(spec: SandboxSpec): SandboxedCommand {
    return { cmd: spec.cmd, args: spec.args, env: spec.env, cwd: spec.cwd, done: () => {} };
  }
}

/**
 * Finds out whether this host can sandbox (root, bubblewrap, unshare and setpriv, namespaces that work: a probe
 * runs `true` in a sandbox) and returns the sandbox, or the reason it cannot. HANGAR_CP_SANDBOX=on makes a
 * host that cannot an error; =off turns it off.
 */
export function detectSandbox(dataDir: string, env: Settings["sandbox"] = settings().sandbox): Sandbox {
  const settings = sandboxSettings(env);
  if (settings.mode === "off") return new NoSandbox("HANGAR_CP_SANDBOX=off");
  const refuse = (reason: string): Sandbox => {
    if (settings.mode === "on") throw new SandboxConfigError(`HANGAR_CP_SANDBOX=on, but ${reason}`);
    return new NoSandbox(reason);
  };
  if (process.platform !== "linux") return refuse(`the sandbox needs Linux (this is ${process.platform})`);
  if (process.getuid?.() !== 0) return refuse("the control plane does not run as root");
  const tools = {
    bwrap: which("bwrap"),
    unshare: which("unshare"),
    setpriv: which("setpriv"),
    sh: which("sh"),
  };
  const missing = Object.entries(tools)
    .filter(([, p]) => !p)
    .map(([n]) => (n === "bwrap" ? "bwrap (Debian package bubblewrap)" : `${n} (util-linux)`));
  if (missing.length) return refuse(`missing: ${missing.join(", ")}`);
  const cgroups = detectCgroups(settings.limits);
  mkdirSync(dataDir, { recursive: true });
  const sandbox = new LinuxSandbox(
    resolve(dataDir),
    settings,
    tools as Record<keyof typeof tools, string>,
    cgroups,
  );
  const probe = sandbox.wrap({
    name: `probe-${process.pid}`,
    uid: settings.uidFirst,
    cwd: "/",
    writable: [],
    cmd: "/bin/sh",
    args: ["-c", "exit 0"],
    env: { PATH: CHILD_PATH },
  });
  const r = spawnSync(probe.cmd, probe.args, {
    env: probe.env,
    cwd: probe.cwd,
    encoding: "utf8",
    timeout: 20_000,
  });
  probe.done();
  if (r.status !== 0) {
    const why = (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim().split("\n")[0];
    return refuse(`a sandbox could not start here: ${why}`);
  }
  return sandbox;
}

/** Gives a tree to a uid (the owner of a build folder or a data dir), links themselves, not their targets. */
export async function chownTree(path: string, uid: number): Promise<void> {
  if (process.getuid?.() !== 0) return;
  const st = await lstat(path);
  if (st.uid !== uid || st.gid !== uid) await lchown(path, uid, uid);
  if (!st.isDirectory()) return;
  for (const name of await readdir(path)) await chownTree(join(path, name), uid);
}

const detected = new Map<string, Sandbox>();

/** The sandbox of a data directory with this process's HANGAR_CP_SANDBOX* settings, found out once. */
export function sandboxFor(dataDir: string): Sandbox {
  const key = resolve(dataDir);
  let s = detected.get(key);
  if (!s) detected.set(key, (s = detectSandbox(key)));
  return s;
}
