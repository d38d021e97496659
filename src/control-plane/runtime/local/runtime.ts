// The local runtime: builds revisions in the data directory and runs each live one as a `hangar serve` child
// on a free loopback port (embedded storage per deployment, or the control plane's PostgreSQL + Redis for prod);
// `startLocalReconciler` runs the reconcile loop on it for the deployments without a listener.
import { ImageBuilds } from "./image-builds.js";
import type { ImageSettings } from "./image.js";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { describeEntry, protectSecrets, rootLogger, type Logger } from "../../../lib/logger.js";
import { buildDirOf, buildRevision, existingBuild } from "./builder.js";
import { childEnv, exited, forEachLine, HANGAR_BIN, SERVER_NODE_FLAGS, stopGroup } from "./proc.js";
import { LogSink } from "../../domain/log-sink.js";
import { BuildError, StartError } from "../../domain/errors.js";
import {
  Reconciler,
  storeSource,
  type DeploymentRoutes,
  type Runtime,
  type RuntimeInstance,
} from "../../domain/reconcile.js";
import { chownTree, sandboxFor, type Sandbox } from "./sandbox.js";
import { tenantGate, type TenantGate } from "./sandbox-gate.js";
import type { CpStore, Deployment, LogKind, LogLevel, Revision } from "../../domain/types.js";

/**
 * Settings of the control plane's own environment, when its operator set them, that its deployments take as their
 * default (a deployment's secret may set its own): HANGAR_GRAPH_THREADS (a machine of many deployments may want fewer
 * threads each) and HANGAR_SCHEMAS_AHEAD (`false`: a revision no longer compiles its graphs' types in the background
 * as it starts, seconds of CPU per graph, but on the first request that needs them).
 */
export function inheritedSettings(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of ["HANGAR_GRAPH_THREADS", "HANGAR_SCHEMAS_AHEAD"]) {
    const value = env[name];
    if (value) out[name] = value;
  }
  return out;
}

export { StartError } from "../../domain/errors.js";

const PINO_LEVELS: [number, LogLevel][] = [
  [50, "ERROR"],
  [40, "WARNING"],
  [30, "INFO"],
];

/**
 * A line of an Agent Server child (LOG_FORMAT=json): its level, and its message with context and an error's
 * stack; a line that is not a log entry (a graph printing) as it is, at `fallback`.
 */
export function childEntry(raw: string, fallback: LogLevel): { line: string; level: LogLevel } {
  if (!raw.startsWith("{")) return { line: raw, level: fallback };
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return { line: raw, level: fallback };
  }
  if (typeof entry?.level !== "number" || typeof entry.msg !== "string")
    return { line: raw, level: fallback };
  const level = PINO_LEVELS.find(([n]) => (entry.level as number) >= n)?.[1] ?? "DEBUG";
  return { line: describeEntry(entry), level };
}

export type RuntimeLog = (
  deploymentId: string,
  revisionId: string | null,
  kind: LogKind,
  level: LogLevel,
  message: string,
) => void;

export interface LocalRuntimeOptions {
  dataDir: string;
  /** The control plane's PostgreSQL + Redis: `prod` deployments run on them (own schema and key prefix). */
  databaseUrl?: string;
  redisUrl?: string;
  log: RuntimeLog;
  /** How long a start may take until `/ok` answers (default 60 s). */
  startTimeoutMs?: number;
  /** SIGTERM, then SIGKILL after this long (default 10 s). */
  stopGraceMs?: number;
  /** How builds and Agent Servers run; default: the data dir's sandbox (HANGAR_CP_SANDBOX*). */
  sandbox?: Sandbox;
  /** Without a sandbox: which organization's deployments may run here (one only). */
  gate?: TenantGate;
}

interface LocalInstance extends RuntimeInstance {
  child: ChildProcess;
  token: string;
  /** Stopped on purpose: its exit is not a crash. */
  stopping: boolean;
  /** Answered `/ok` once. */
  ready: boolean;
}

/**
 * Preloaded into every Agent Server child: if the control plane goes away without stopping it (SIGKILL, crash),
 * the child notices its parent changed and stops itself, so no orphan keeps serving.
 */
const WATCH_PARENT = `--import=data:text/javascript,${encodeURIComponent(
  'const p=process.ppid;const t=setInterval(()=>{if(process.ppid!==p){clearInterval(t);process.kill(process.pid,"SIGTERM")}},1000);t.unref();',
)}`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const key = (deploymentId: string, revisionId: string) => `${deploymentId}/${revisionId}`;

/** PostgreSQL schema and Redis key prefix of a `prod` deployment on the control plane's backend. */
export function clusterNames(deploymentId: string): { schema: string; redisPrefix: string } {
  return { schema: `d_${deploymentId.replace(/-/g, "")}`, redisPrefix: `d_${deploymentId}:` };
}

export class LocalRuntime implements Runtime {
  private instances = new Map<string, LocalInstance>();
  onExit?: (inst: RuntimeInstance, how: string) => void;

  private sandbox: Sandbox;

  constructor(private opts: LocalRuntimeOptions) {
    this.sandbox = opts.sandbox ?? sandboxFor(opts.dataDir);
  }

  private onCluster(d: Deployment): boolean {
    return d.source_config.deployment_type === "prod" && !!this.opts.databaseUrl && !!this.opts.redisUrl;
  }

  /** Where a dev (or embedded prod) deployment keeps its data, shared by its revisions. */
  dataDirOf(deploymentId: string): string {
    return join(this.opts.dataDir, "deployments", deploymentId, "data");
  }

  async build(d: Deployment, r: Revision, signal: AbortSignal): Promise<void> {
    const refused = await this.opts.gate?.refusalFor(d);
    if (refused) {
      this.opts.log(d.id, r.id, "build", "ERROR", refused);
      throw new BuildError(refused);
    }
    await buildRevision({
      deployment: d,
      revision: r,
      dataDir: this.opts.dataDir,
      signal,
      sandbox: this.sandbox,
      log: (level, message) => this.opts.log(d.id, r.id, "build", level, message),
    });
  }

  isBuilt(_d: Deployment, r: Revision): boolean {
    return existingBuild(this.opts.dataDir, r.id) !== null;
  }

  running(): RuntimeInstance[] {
    return [...this.instances.values()]
      .filter((i) => i.ready && !i.stopping && !exited(i.child))
      .map(({ deploymentId, revisionId, url, startedAt }) => ({ deploymentId, revisionId, url, startedAt }));
  }

  async start(d: Deployment, r: Revision, signal?: AbortSignal): Promise<RuntimeInstance> {
    const build = existingBuild(this.opts.dataDir, r.id);
    if (!build) throw new StartError(`the build of revision ${r.id} is missing`);
    const log = (level: LogLevel, message: string) => this.opts.log(d.id, r.id, "deploy", level, message);
    const refused = await this.opts.gate?.refusalFor(d);
    if (refused) throw new StartError(refused);
    const token = randomBytes(24).toString("hex");
    const secrets = Object.fromEntries((d.secrets ?? []).map((s) => [s.name, s.value]));
    protectSecrets(Object.values(secrets)); // this process's log never shows them either
    const args = [
      ...SERVER_NODE_FLAGS,
      WATCH_PARENT,
      HANGAR_BIN,
      "serve",
      "--config",
      build.configPath,
      "--port",
      "0",
    ];
    args.push("--host", "127.0.0.1");
    const writable: string[] = [];
    const extra: Record<string, string> = {
      // Its web console at `<deployment URL>/console/` (its API's auth applies to what it loads); a secret may
      // turn it off.
      HANGAR_CONSOLE: "true",
      // The control plane's own settings its deployments take as their default (a secret may set its own).
      ...inheritedSettings(),
      ...secrets,
      // Beside its predecessor on the same data, it takes over unfinished runs only when told (takeOver).
      HANGAR_RECOVER_ON_START: "false",
      HANGAR_INTERNAL_TOKEN: token,
      // Read line by line below: each entry's level and message go to the deployment's log.
      LOG_FORMAT: "json",
    };
    if (this.onCluster(d)) {
      const names = clusterNames(d.id);
      Object.assign(extra, {
        DATABASE_URL: this.opts.databaseUrl!,
        REDIS_URL: this.opts.redisUrl!,
        HANGAR_DATABASE_SCHEMA: names.schema,
        HANGAR_REDIS_PREFIX: names.redisPrefix,
      });
      log("INFO", `Starting revision ${r.id} on PostgreSQL + Redis (schema ${names.schema})`);
    } else {
      const dataDir = this.dataDirOf(d.id);
      mkdirSync(dataDir, { recursive: true });
      args.push("--data-dir", dataDir);
      writable.push(dataDir);
      log("INFO", `Starting revision ${r.id} on embedded storage`);
    }
    // Sandboxed (where the host can): the deployment's own uid, its build read-only, its data dir writable, a
    // private /tmp (HOME), nothing of the control plane's data, other deployments or their processes.
    const uid = this.sandbox.uidFor(d.id);
    if (this.sandbox.enabled) for (const w of writable) await chownTree(w, uid);
    const cage = this.sandbox.wrap({
      name: `serve-${r.id}-${token.slice(0, 8)}`,
      uid,
      cwd: dirname(build.configPath),
      writable,
      readable: [build.dir],
      cmd: process.execPath,
      args,
      env: childEnv(extra, this.sandbox.enabled ? "/tmp" : undefined),
    });
    const child = spawn(cage.cmd, cage.args, {
      cwd: cage.cwd,
      env: cage.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.once("exit", () => cage.done());
    const inst: LocalInstance = {
      deploymentId: d.id,
      revisionId: r.id,
      url: "",
      startedAt: Date.now(),
      child,
      token,
      stopping: false,
      ready: false,
    };
    this.instances.set(key(d.id, r.id), inst);

    let announced: (url: string) => void = () => {};
    const listening = new Promise<string>((res) => (announced = res));
    const tail: string[] = [];
    const output = (raw: string, fallback: LogLevel) => {
      const { line, level } = childEntry(raw, fallback);
      tail.push(line);
      if (tail.length > 20) tail.shift();
      log(level, line);
      const m = /listening on (https?:\/\/\S+)/.exec(line);
      if (m && !inst.url) {
        inst.url = m[1];
        announced(m[1]);
      }
    };
    forEachLine(child.stdout!, (l) => output(l, "INFO"));
    forEachLine(child.stderr!, (l) => output(l, /\b(error|failed|exception)\b/i.test(l) ? "ERROR" : "INFO"));
    const exit = new Promise<string>((res) =>
      child.once("exit", (code, sig) => res(sig ? `signal ${sig}` : `exit code ${code}`)),
    );
    void exit.then((how) => {
      if (this.instances.get(key(d.id, r.id)) === inst) this.instances.delete(key(d.id, r.id));
      if (inst.stopping) return;
      if (inst.ready) {
        log("ERROR", `Agent Server of revision ${r.id} exited unexpectedly (${how})`);
        this.onExit?.(inst, how);
      }
    });

    const timeoutMs = this.opts.startTimeoutMs ?? 60_000;
    const deadline = Date.now() + timeoutMs;
    const fail = async (reason: string): Promise<never> => {
      inst.stopping = true;
      await stopGroup(child, this.opts.stopGraceMs ?? 10_000);
      throw new StartError(reason);
    };
    const aborted = new Promise<string>((res) => {
      if (signal?.aborted) res("aborted");
      signal?.addEventListener("abort", () => res("aborted"), { once: true });
    });
    const first = await Promise.race([
      listening.then((url) => ({ url })),
      exit.then((how) => ({ exited: how })),
      aborted.then(() => ({ aborted: true })),
      sleep(timeoutMs).then(() => ({ timeout: true })),
    ]);
    if ("exited" in first) {
      const said = tail.find((l) => l.startsWith("hangar serve: "));
      return fail(
        `the Agent Server exited while starting (${first.exited})${said ? `: ${said.slice(14)}` : ""}`,
      );
    }
    if ("aborted" in first) return fail("start interrupted");
    if ("timeout" in first) return fail(`the Agent Server did not start within ${timeoutMs / 1000} s`);
    while (!(await answersOk(inst.url))) {
      if (exited(child)) return fail(`the Agent Server exited while starting (${await exit})`);
      if (signal?.aborted) return fail("start interrupted");
      if (Date.now() >= deadline) {
        return fail(`the Agent Server did not answer ${inst.url}/ok within ${timeoutMs / 1000} s`);
      }
      await sleep(200);
    }
    inst.ready = true;
    log("INFO", `Revision ${r.id} answers at ${inst.url}`);
    return { deploymentId: d.id, revisionId: r.id, url: inst.url, startedAt: inst.startedAt };
  }

  async takeOver(ri: RuntimeInstance): Promise<void> {
    const inst = this.instances.get(key(ri.deploymentId, ri.revisionId));
    if (!inst) return;
    const log = (level: LogLevel, m: string) =>
      this.opts.log(ri.deploymentId, ri.revisionId, "deploy", level, m);
    try {
      const res = await fetch(`${inst.url}/internal/recover`, {
        method: "POST",
        headers: { "x-hangar-internal-token": inst.token },
        signal: AbortSignal.timeout(30_000),
      });
      if (!res.ok) {
        log("WARNING", `Could not resume unfinished runs: ${res.status} ${await res.text()}`);
        return;
      }
      const { recovered } = (await res.json()) as { recovered: number };
      if (recovered) log("INFO", `Resumed ${recovered} run(s) left unfinished by the previous revision`);
    } catch (e) {
      log("WARNING", `Could not resume unfinished runs: ${(e as Error).message}`);
    }
  }

  async stop(deploymentId: string, revisionId: string): Promise<void> {
    const inst = this.instances.get(key(deploymentId, revisionId));
    if (!inst) return;
    inst.stopping = true;
    this.opts.log(deploymentId, revisionId, "deploy", "INFO", `Stopping revision ${revisionId}`);
    await stopGroup(inst.child, this.opts.stopGraceMs ?? 10_000);
    this.instances.delete(key(deploymentId, revisionId));
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.instances.values()].map(async (inst) => {
        inst.stopping = true;
        await stopGroup(inst.child, this.opts.stopGraceMs ?? 10_000);
      }),
    );
    this.instances.clear();
  }

  /** SIGKILLs every child at once (the control plane exits without having stopped them). */
  killAllNow(): void {
    for (const inst of this.instances.values()) {
      inst.stopping = true;
      try {
        process.kill(-inst.child.pid!, "SIGKILL");
      } catch {
        // gone
      }
    }
  }

  async remove(d: Deployment, revisionIds: string[]): Promise<void> {
    for (const id of revisionIds)
      await rm(buildDirOf(this.opts.dataDir, id), { recursive: true, force: true });
    await rm(join(this.opts.dataDir, "deployments", d.id), { recursive: true, force: true });
    if (d.source_config.deployment_type === "prod" && this.opts.databaseUrl && this.opts.redisUrl) {
      await dropClusterData(d.id, this.opts.databaseUrl, this.opts.redisUrl);
    }
  }
}

async function answersOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(2_000) });
    await res.arrayBuffer().catch(() => {});
    return res.ok;
  } catch {
    return false;
  }
}

/** Drops a prod deployment's PostgreSQL schema and Redis keys. */
export async function dropClusterData(
  deploymentId: string,
  databaseUrl: string,
  redisUrl: string,
): Promise<void> {
  const { schema, redisPrefix } = clusterNames(deploymentId);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end().catch(() => {});
  }
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

export interface LocalReconcilerContext {
  store: CpStore;
  /** The control plane's data directory: builds in `builds/`, deployments' data in `deployments/`. */
  dataDir: string;
  publicUrl?: string | (() => string);
  /** The control plane's log (default the process's logger). */
  log?: Logger;
  /** The control plane's PostgreSQL + Redis: `prod` deployments run on them. */
  databaseUrl?: string;
  redisUrl?: string;
  /** Where deployments' URLs point: the control plane's router (registerDeploymentRoutes, before listen). */
  router: DeploymentRoutes;
  intervalMs?: number;
  drainMs?: number;
  startTimeoutMs?: number;
  stopGraceMs?: number;
  maxConcurrentBuilds?: number;
  /** How builds and Agent Servers run; default: the data dir's sandbox (HANGAR_CP_SANDBOX*). */
  sandbox?: Sandbox;
  /** Where images of built sources assigned to listeners go (HANGAR_CP_IMAGE_*); unset: none are built. */
  images?: ImageSettings;
}

export interface LocalReconciler {
  wake(): void;
  stop(): Promise<void>;
  router: DeploymentRoutes;
}

/**
 * Starts the local reconciler: deployments without a listener are built in `<dataDir>/builds` and run as
 * `hangar serve` children, reached through the router at `/deployments/<id>`.
 */
export function startLocalReconciler(ctx: LocalReconcilerContext): LocalReconciler {
  const log = ctx.log ?? rootLogger();
  const router = ctx.router;
  const store = ctx.store;
  router.setLookup(async (id) => {
    const d = await store.getDeploymentById(id);
    return !!d && !d.deleted_at;
  });
  const logs = new LogSink(store, (m) => log.warn(`control plane: ${m}`));
  const sandbox = ctx.sandbox ?? sandboxFor(ctx.dataDir);
  const runtime = new LocalRuntime({
    sandbox,
    gate: tenantGate(store, sandbox),
    dataDir: ctx.dataDir,
    databaseUrl: ctx.databaseUrl,
    redisUrl: ctx.redisUrl,
    startTimeoutMs: ctx.startTimeoutMs,
    stopGraceMs: ctx.stopGraceMs,
    log: (d, r, kind, level, message) => logs.write(d, r, kind, level, message),
  });
  const reconciler = new Reconciler({
    source: storeSource(store, null),
    runtime,
    router,
    logs,
    log,
    intervalMs: ctx.intervalMs,
    drainMs: ctx.drainMs,
    maxConcurrentBuilds: ctx.maxConcurrentBuilds,
  });
  // Builds for listeners: the same sandbox, their own loop (they run nothing here once built).
  const images = ctx.images
    ? new ImageBuilds({
        store,
        dataDir: ctx.dataDir,
        settings: ctx.images,
        sandbox,
        gate: tenantGate(store, sandbox),
        logs: new LogSink(store, (m) => log.warn(`control plane: ${m}`)),
        log,
        intervalMs: ctx.intervalMs,
      })
    : undefined;
  // Last resort when the control plane exits without stop(): no child outlives it.
  const onExit = () => runtime.killAllNow();
  process.once("exit", onExit);
  reconciler.start();
  images?.start();
  let stopping: Promise<void> | undefined;
  return {
    router,
    wake: () => {
      reconciler.wake();
      images?.wake();
    },
    stop: () =>
      (stopping ??= (async () => {
        await Promise.all([reconciler.stop(), images?.stop()]);
        process.off("exit", onExit);
      })()),
  };
}
