// The reconcile loop: brings each deployment of a target to its desired revision (build, start, switch the
// router, stop the predecessor), keeps its live revision running, and removes deleted deployments.
// One loop for every target: where the deployments come from and where reports go is a `ReconcileSource` (the
// store for the local control plane, the control plane's listener API for `hangar listener`), where revisions run
// is a `Runtime` (local child processes; Kubernetes), and where a deployment's URL points is `Routes` (the
// control plane's router; nothing for Kubernetes, whose Service is the stable address).
import { KeyedLock, SingleFlight } from "../../lib/keyed-lock.js";
import { BuildError, StartError } from "./errors.js";
import { Passes } from "./passes.js";
import type { Logger } from "../../lib/logger.js";
import type { LogSink } from "./log-sink.js";
import {
  FINAL_REVISION_STATUSES,
  PENDING_REVISION_STATUSES,
  STARTED_REVISION_STATUSES,
  type CpStore,
  type Deployment,
  type DeploymentStatus,
  type LogLevel,
  type LogLine,
  type Revision,
  type RevisionStatus,
} from "./types.js";
import { HangarError } from "../../lib/errors.js";

/** A deployment with the revisions the reconciler looks at, newest first. */
export interface DeploymentState {
  deployment: Deployment;
  /** At least every revision not final and not DEPLOYED, the latest and the active one (all, from the store). */
  revisions: Revision[];
}

/** What the reconciler reads and writes: the deployments of its target and their revisions. */
export interface ReconcileSource {
  /** The target's deployments, deleted ones included (until purged). */
  deployments(): Promise<Deployment[]>;
  /** One deployment (deleted ones included) with its revisions; null when it is gone. */
  deployment(id: string): Promise<DeploymentState | null>;
  revision(deploymentId: string, revisionId: string): Promise<Revision | null>;
  setRevisionStatus(
    deploymentId: string,
    revisionId: string,
    status: RevisionStatus,
    message?: string | null,
  ): Promise<void>;
  /** Marks the revisions that have not started (CREATING, QUEUED, AWAITING_BUILD), but one, SKIPPED. */
  skipPendingRevisions(deploymentId: string, exceptRevisionId: string): Promise<void>;
  updateDeployment(id: string, patch: DeploymentPatch): Promise<void>;
  /** A deleted deployment's objects and data are gone: its records go. */
  purge(deploymentId: string): Promise<void>;
  appendLogs(lines: LogLine[]): Promise<void>;
}

/** What the reconciler changes on a deployment. */
export interface DeploymentPatch {
  active_revision_id?: string;
  status?: DeploymentStatus;
  /** Where clients reach the deployment, when they reach its Agent Server directly (`Routes.direct`). */
  address?: string;
}

/** Where a deployment's URL points (the control plane's `DeploymentRouter`). */
export interface Routes {
  /**
   * Whether clients reach a deployment at its target's URL itself (a Kubernetes Service), rather than at the control
   * plane's `/deployments/<id>` (its router): the target's URL is then the deployment's address to publish.
   */
  readonly direct: boolean;
  setTarget(deploymentId: string, url: string | null): void;
  target(deploymentId: string): string | null;
  /** Waits until no request is in flight to `url`, or `timeoutMs` passed; true when drained. */
  drain(url: string, timeoutMs: number): Promise<boolean>;
}

/**
 * The Routes of the control plane's own router (`DeploymentRouter`, which the local reconciler is given): they
 * also learn how to tell a deployment without a live revision (503) from a missing one (404).
 */
export interface DeploymentRoutes extends Routes {
  setLookup(exists: (deploymentId: string) => Promise<boolean>): void;
}

/** Routes of a target whose deployments keep one address whatever revision serves (a Kubernetes Service). */
export class StableAddress implements Routes {
  readonly direct = true;
  private targets = new Map<string, string>();
  setTarget(deploymentId: string, url: string | null): void {
    if (url) this.targets.set(deploymentId, url);
    else this.targets.delete(deploymentId);
  }
  target(deploymentId: string): string | null {
    return this.targets.get(deploymentId) ?? null;
  }
  async drain(): Promise<boolean> {
    return true;
  }
}

export interface RuntimeInstance {
  deploymentId: string;
  revisionId: string;
  /** Where its Agent Server answers (the router's target). */
  url: string;
  /** Epoch ms. */
  startedAt: number;
}

/** Where revisions run. */
export interface Runtime {
  /** Builds the revision (throws BuildError with the reason); writes its build log. */
  build(d: Deployment, r: Revision, signal: AbortSignal): Promise<void>;
  /** Whether the revision's build is still there (a restart can start it without building again). */
  isBuilt(d: Deployment, r: Revision): boolean;
  /**
   * Whether the revision was built elsewhere (the control plane's image of a built source, for a listener): its
   * roll-out starts at AWAITING_DEPLOY, leaving the build's statuses as the builder wrote them.
   */
  prebuilt?(d: Deployment, r: Revision): boolean;
  /** Starts the revision beside whatever runs; resolves once it answers `/ok` (throws StartError). */
  start(d: Deployment, r: Revision, signal?: AbortSignal): Promise<RuntimeInstance>;
  /** Once its predecessor stopped (or there was none): it resumes what the predecessor left unfinished. */
  takeOver(inst: RuntimeInstance): Promise<void>;
  stop(deploymentId: string, revisionId: string): Promise<void>;
  /** Instances started, answering, and not being stopped. */
  running(): RuntimeInstance[];
  /** Removes what a deleted deployment kept (builds, data, objects); throws to be retried at the next pass. */
  remove(d: Deployment, revisionIds: string[]): Promise<void>;
  /** The reconciler stops: what it stops (local children) or leaves running (a cluster's objects). */
  stopAll(): Promise<void>;
  /** Set by the reconciler: an instance ended without being stopped. */
  onExit?: (inst: RuntimeInstance, how: string) => void;
}

export interface ReconcilerOptions {
  source: ReconcileSource;
  runtime: Runtime;
  router: Routes;
  logs: LogSink;
  /** The control plane's (or listener's) log: revision lifecycle lines with deployment_id and revision_id. */
  log: Logger;
  /** A pass could not list the deployments (default: logged with its stack). */
  onPassError?: (e: unknown) => void;
  /** A revision failed (BUILD_FAILED, DEPLOY_FAILED), could not start again, or a deletion failed. */
  onFailure?: (message: string) => void;
  /** Period of the loop (default 1 s). */
  intervalMs?: number;
  /** How long a switch waits for requests in flight to the old revision before stopping it (default 10 s). */
  drainMs?: number;
  /** Builds running at once; the others wait in AWAITING_BUILD (default 2). */
  maxConcurrentBuilds?: number;
}

/** The revision was superseded (a newer one, or its status was set final by someone else). */
class Interrupted extends HangarError {
  static override readonly code = "interrupted";
}

interface Job {
  revisionId: string;
  ac: AbortController;
  /** Past the point of no return: the switch is under way. */
  committing: boolean;
  done: Promise<void>;
}

interface Restore {
  revisionId: string;
  ac: AbortController;
  done: Promise<void>;
}

const PENDING = PENDING_REVISION_STATUSES;
const STARTED = STARTED_REVISION_STATUSES;
const isFinal = (s: RevisionStatus) => FINAL_REVISION_STATUSES.includes(s);
const ALL = { limit: 10_000, offset: 0 };

/** The reconciler's source on the control plane's store: the local machine (null) or a listener's deployments. */
export function storeSource(store: CpStore, listenerId: string | null): ReconcileSource {
  return {
    deployments: () => store.deploymentsFor(listenerId),
    deployment: async (id) => {
      const deployment = await store.getDeploymentById(id);
      return deployment ? { deployment, revisions: await store.listRevisions(id, ALL) } : null;
    },
    revision: (deploymentId, revisionId) => store.getRevision(deploymentId, revisionId),
    setRevisionStatus: (_d, revisionId, status, message) =>
      store.setRevisionStatus(revisionId, status, message),
    skipPendingRevisions: async (id, except) => void (await store.skipPendingRevisions(id, except)),
    // The control plane's own deployments are reached through its router: their custom_url is set at creation.
    updateDeployment: async (id, { address: _address, ...patch }) =>
      void (await store.updateDeployment(id, patch)),
    purge: (id) => store.purgeDeployment(id),
    appendLogs: (lines) => store.appendLogs(lines),
  };
}

export class Reconciler {
  private jobs = new Map<string, Job>();
  private restores = new Map<string, Restore>();
  /** Per deployment: its removal, while it runs. */
  private deleting = new SingleFlight();
  /** Per deployment: one switch, restore, removal or pass over it at a time. */
  private locks = new KeyedLock();
  /** Per revision: restarts after crashes wait longer each time. */
  private backoff = new Map<string, { attempts: number; notBefore: number }>();
  private timer: NodeJS.Timeout | undefined;
  private passes = new Passes(
    () => this.reconcileAll(),
    (e) => {
      if (this.o.onPassError) this.o.onPassError(e);
      else this.o.log.error({ err: e }, "reconcile pass failed");
    },
    () => this.stopped,
  );
  private stopped = false;
  private buildsRunning = 0;
  private buildQueue: (() => void)[] = [];

  constructor(private o: ReconcilerOptions) {}

  /** Waits for a build slot (or the abort); returns its release. */
  private async buildSlot(signal: AbortSignal): Promise<() => void> {
    const max = this.o.maxConcurrentBuilds ?? 2;
    while (this.buildsRunning >= max) {
      if (signal.aborted) throw new Interrupted();
      await new Promise<void>((res) => {
        this.buildQueue.push(res);
        signal.addEventListener("abort", () => res(), { once: true });
      });
    }
    if (signal.aborted) throw new Interrupted();
    this.buildsRunning++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.buildsRunning--;
      // Every waiter looks again (one may have been aborted meanwhile).
      const waiting = this.buildQueue;
      this.buildQueue = [];
      for (const wake of waiting) wake();
    };
  }

  start(): void {
    this.o.runtime.onExit = (inst, how) => {
      const b = this.backoff.get(inst.revisionId) ?? { attempts: 0, notBefore: 0 };
      if (Date.now() - inst.startedAt > 60_000) b.attempts = 0;
      b.attempts++;
      b.notBefore = Date.now() + Math.min(60_000, 1_000 * 2 ** (b.attempts - 1));
      this.backoff.set(inst.revisionId, b);
      this.o.log.warn(
        { deployment_id: inst.deploymentId, revision_id: inst.revisionId },
        `revision ${inst.revisionId} of deployment ${inst.deploymentId} exited (${how}); restarting`,
      );
      this.wake();
    };
    this.timer = setInterval(() => this.wake(), this.o.intervalMs ?? 1_000);
    this.wake();
  }

  /** Runs a pass now (or right after the one running). */
  wake(): void {
    this.passes.wake();
  }

  /**
   * One pass without the timer, then waits for what it started (roll-outs, restarts, deletions) to end.
   * Throws what made the pass fail (the deployments could not be listed).
   */
  async once(): Promise<void> {
    await this.passes.once();
    for (;;) {
      const busy = [
        ...[...this.jobs.values()].map((j) => j.done),
        ...[...this.restores.values()].map((r) => r.done),
        ...this.deleting.tasks(),
      ];
      if (!busy.length) break;
      await Promise.all(busy);
    }
    // What they logged last (a failure's reason) is stored too, not left to the sink's timer.
    await this.o.logs.flush();
  }

  private failed(
    message: string,
    context: { deployment_id?: string; revision_id?: string; err?: unknown },
  ): void {
    this.o.log.error(context, message);
    this.o.onFailure?.(message);
  }

  /** Stops the loop, interrupts builds and starts (their revisions are redone on the next start), stops every child. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const j of this.jobs.values()) j.ac.abort();
    for (const r of this.restores.values()) r.ac.abort();
    await this.passes.current;
    await Promise.all([
      ...[...this.jobs.values()].map((j) => j.done),
      ...[...this.restores.values()].map((r) => r.done),
      ...this.deleting.tasks(),
    ]);
    await this.o.runtime.stopAll();
    await this.o.logs.flush();
  }

  /** A line of the deployment's log, and of this process's (errors are logged by `failed`, with the reason). */
  private dlog(d: string, r: string | null, level: LogLevel, message: string): void {
    this.o.logs.write(d, r, "deploy", level, message);
    if (level === "ERROR") return;
    const context = { deployment_id: d, revision_id: r ?? undefined };
    if (level === "WARNING") this.o.log.warn(context, message);
    else if (level === "DEBUG") this.o.log.debug(context, message);
    else this.o.log.info(context, message);
  }

  private withLock<T>(id: string, fn: () => Promise<T>): Promise<T> {
    return this.locks.run(id, fn);
  }

  private async reconcileAll(): Promise<void> {
    const deployments = await this.o.source.deployments();
    for (const d of deployments) {
      if (this.stopped) return;
      // Busy with a switch or a deletion: the next pass looks again.
      if (this.locks.busy(d.id)) continue;
      await this.withLock(d.id, () => this.reconcile(d.id)).catch((e) =>
        this.failed(`deployment ${d.id}: ${(e as Error).message ?? e}`, { deployment_id: d.id, err: e }),
      );
    }
    // Instances of deployments the source no longer lists for this target.
    const known = new Set(deployments.map((d) => d.id));
    for (const inst of this.o.runtime.running()) {
      if (known.has(inst.deploymentId) || this.locks.busy(inst.deploymentId)) continue;
      this.o.router.setTarget(inst.deploymentId, null);
      await this.o.runtime.stop(inst.deploymentId, inst.revisionId);
    }
  }

  /** One deployment, under its lock. */
  private async reconcile(id: string): Promise<void> {
    const { source, runtime } = this.o;
    const state = await source.deployment(id);
    if (!state) return;
    const { deployment: d, revisions } = state;
    if (d.deleted_at) {
      void this.deleting.start(id, () =>
        this.remove(d).catch((e) =>
          this.failed(`deleting deployment ${id} failed: ${(e as Error).message ?? e}`, {
            deployment_id: id,
            err: e,
          }),
        ),
      );
      return;
    }
    // The desired revision: the newest one not failed, skipped or interrupted.
    const desired = revisions.find((r) => !isFinal(r.status));
    const job = this.jobs.get(id);
    if (job && !job.committing && job.revisionId !== desired?.id) job.ac.abort();

    if (desired) {
      // Older revisions still pending or left mid-way (by a control plane that stopped) never will be.
      if (
        revisions.some((r) => r.id !== desired.id && r.id !== job?.revisionId && PENDING.includes(r.status))
      ) {
        await source.skipPendingRevisions(id, desired.id);
      }
      for (const r of revisions) {
        if (r.id === desired.id || r.id === job?.revisionId || r.id === d.active_revision_id) continue;
        if (!STARTED.includes(r.status)) continue;
        await source.setRevisionStatus(id, r.id, "INTERRUPTED", `Superseded by revision ${desired.id}`);
      }
    }

    await this.ensureActive(d, revisions);

    // Instances nobody wants any more (e.g. of an interrupted roll-out).
    const restoring = this.restores.get(id)?.revisionId;
    for (const inst of runtime.running()) {
      if (inst.deploymentId !== id) continue;
      if ([d.active_revision_id, job?.revisionId, restoring].includes(inst.revisionId)) continue;
      await runtime.stop(id, inst.revisionId);
    }

    if (job || !desired || desired.status === "CREATING" || desired.status === "UNKNOWN") return;
    if (desired.id === d.active_revision_id) {
      // Switched, but stopped before the revision's own status was written.
      if (desired.status !== "DEPLOYED") await source.setRevisionStatus(id, desired.id, "DEPLOYED");
      return;
    }
    this.startJob(d, desired);
  }

  /** Keeps the live revision running: started again after a control plane restart or a crash. */
  private async ensureActive(d: Deployment, revisions: Revision[]): Promise<void> {
    const activeId = d.active_revision_id;
    if (!activeId || this.jobs.get(d.id)?.committing) return;
    const inst = this.o.runtime.running().find((i) => i.deploymentId === d.id && i.revisionId === activeId);
    if (inst) {
      if (this.o.router.target(d.id) !== inst.url) this.o.router.setTarget(d.id, inst.url);
      return;
    }
    if (this.restores.has(d.id)) return;
    // Its process is gone: 503 rather than a dead target until it answers again.
    this.o.router.setTarget(d.id, null);
    const r = revisions.find((x) => x.id === activeId) ?? (await this.o.source.revision(d.id, activeId));
    if (!r) return;
    const b = this.backoff.get(r.id);
    if (b && Date.now() < b.notBefore) return;
    const ac = new AbortController();
    const restore: Restore = { revisionId: r.id, ac, done: Promise.resolve() };
    restore.done = this.restore(d, r, ac.signal).finally(() => {
      if (this.restores.get(d.id) === restore) this.restores.delete(d.id);
    });
    this.restores.set(d.id, restore);
  }

  private async restore(d: Deployment, r: Revision, signal: AbortSignal): Promise<void> {
    const { runtime, source, router } = this.o;
    const dlog = (level: LogLevel, m: string) => this.dlog(d.id, r.id, level, m);
    try {
      dlog("INFO", `Revision ${r.id} is the live revision but is not running: starting it again`);
      if (!runtime.isBuilt(d, r)) {
        dlog("INFO", `The build of revision ${r.id} is gone: building it again`);
        await runtime.build(d, r, signal);
      }
      const inst = await runtime.start(d, r, signal);
      let live = false;
      await this.withLock(d.id, async () => {
        const cur = (await source.deployment(d.id))?.deployment;
        if (this.stopped || signal.aborted || !cur || cur.deleted_at || cur.active_revision_id !== r.id)
          return;
        if (this.jobs.get(d.id)?.committing) return;
        router.setTarget(d.id, inst.url);
        if (cur.status !== "READY") await source.updateDeployment(d.id, { status: "READY" });
        live = true;
      });
      if (!live) {
        await runtime.stop(d.id, r.id);
        return;
      }
      await runtime.takeOver(inst);
      dlog("INFO", `Revision ${r.id} serves again at ${inst.url}`);
    } catch (e) {
      if (this.stopped || signal.aborted) return;
      const b = this.backoff.get(r.id) ?? { attempts: 0, notBefore: 0 };
      b.attempts++;
      b.notBefore = Date.now() + Math.min(60_000, 1_000 * 2 ** (b.attempts - 1));
      this.backoff.set(r.id, b);
      dlog("ERROR", `Could not start revision ${r.id} again: ${(e as Error).message}`);
      this.failed(`deployment ${d.id}: could not start revision ${r.id} again: ${(e as Error).message}`, {
        deployment_id: d.id,
        revision_id: r.id,
      });
    }
  }

  private startJob(d: Deployment, r: Revision): void {
    const job: Job = {
      revisionId: r.id,
      ac: new AbortController(),
      committing: false,
      done: Promise.resolve(),
    };
    job.done = this.rollOut(d, r, job)
      .catch((e) =>
        this.failed(`revision ${r.id}: ${(e as Error).message ?? e}`, {
          deployment_id: d.id,
          revision_id: r.id,
          err: e,
        }),
      )
      .finally(() => {
        if (this.jobs.get(d.id) === job) this.jobs.delete(d.id);
        this.wake();
      });
    this.jobs.set(d.id, job);
  }

  /** Builds and starts a revision, switches the deployment to it, stops the predecessor. */
  private async rollOut(d: Deployment, r: Revision, job: Job): Promise<void> {
    const { source, runtime, router } = this.o;
    const signal = job.ac.signal;
    const dlog = (level: LogLevel, m: string) => this.dlog(d.id, r.id, level, m);
    /** Throws Interrupted when the revision is no longer wanted; else writes its next status. */
    const proceed = async (status?: RevisionStatus) => {
      if (signal.aborted || this.stopped) throw new Interrupted();
      const cur = await source.revision(d.id, r.id);
      if (!cur || isFinal(cur.status)) throw new Interrupted();
      if (!status) return;
      // A client that sees the status finds the log lines that led to it.
      await this.o.logs.flush();
      await source.setRevisionStatus(d.id, r.id, status);
    };
    let started = false;
    let switched = false;
    try {
      if (!runtime.prebuilt?.(d, r)) {
        await proceed("AWAITING_BUILD");
        const release = await this.buildSlot(signal);
        try {
          await proceed("BUILDING");
          dlog("INFO", `Building revision ${r.id}`);
          await runtime.build(d, r, signal);
        } finally {
          release();
        }
      }
      await proceed("AWAITING_DEPLOY");
      await proceed("DEPLOYING");
      dlog("INFO", `Deploying revision ${r.id}`);
      started = true;
      const inst = await runtime.start(d, r, signal);
      await proceed();
      job.committing = true;
      await this.restores.get(d.id)?.done;
      await this.withLock(d.id, async () => {
        await proceed();
        const revisions = (await source.deployment(d.id))?.revisions ?? [];
        if (revisions.find((x) => !isFinal(x.status))?.id !== r.id) throw new Interrupted();
        const running = runtime.running().filter((i) => i.deploymentId === d.id);
        if (!running.some((i) => i.revisionId === r.id)) {
          throw new StartError("the Agent Server exited right after it started");
        }
        router.setTarget(d.id, inst.url);
        switched = true;
        dlog("INFO", `The deployment URL now goes to revision ${r.id}`);
        for (const old of running.filter((i) => i.revisionId !== r.id)) {
          if (!(await router.drain(old.url, this.o.drainMs ?? 10_000))) {
            dlog("WARNING", `Requests to revision ${old.revisionId} still in flight; stopping it anyway`);
          }
          await runtime.stop(d.id, old.revisionId);
        }
        await runtime.takeOver(inst);
        await source.updateDeployment(d.id, {
          active_revision_id: r.id,
          status: "READY",
          ...(router.direct ? { address: inst.url } : {}),
        });
        dlog("INFO", `Revision ${r.id} deployed`);
        await this.o.logs.flush();
        await source.setRevisionStatus(d.id, r.id, "DEPLOYED");
        this.jobs.delete(d.id);
        this.o.log.info(
          { deployment_id: d.id, revision_id: r.id },
          `deployment ${d.id}: revision ${r.id} deployed at ${inst.url}`,
        );
      });
    } catch (e) {
      if (switched) {
        dlog("ERROR", `Switching to revision ${r.id} failed: ${(e as Error).message}`);
        throw e;
      }
      if (started) await runtime.stop(d.id, r.id).catch(() => {});
      // The control plane is stopping: the revision is left as it is and redone on the next start.
      if (this.stopped) return;
      await this.o.logs.flush();
      if (e instanceof Interrupted || signal.aborted) {
        const cur = await source.revision(d.id, r.id);
        if (cur && !isFinal(cur.status) && cur.status !== "DEPLOYED") {
          await source.setRevisionStatus(d.id, r.id, "INTERRUPTED", "Superseded by a newer revision");
        }
        dlog("INFO", `Revision ${r.id} interrupted: a newer revision supersedes it`);
      } else if (e instanceof BuildError) {
        await source.setRevisionStatus(d.id, r.id, "BUILD_FAILED", e.message);
        dlog("ERROR", `Build of revision ${r.id} failed: ${e.message}`);
        this.failed(`deployment ${d.id}: build of revision ${r.id} failed: ${e.message}`, {
          deployment_id: d.id,
          revision_id: r.id,
        });
      } else {
        const reason = e instanceof StartError ? e.message : `deploy error: ${(e as Error).message}`;
        await source.setRevisionStatus(d.id, r.id, "DEPLOY_FAILED", reason);
        dlog("ERROR", `Deploy of revision ${r.id} failed: ${reason}`);
        this.failed(`deployment ${d.id}: deploy of revision ${r.id} failed: ${reason}`, {
          deployment_id: d.id,
          revision_id: r.id,
        });
      }
    }
  }

  /**
   * A deleted deployment: its processes stop, its URL goes, its builds, data and objects are removed, then its
   * records (when removing failed, the next pass tries again: nothing is left behind unknown).
   */
  private async remove(d: Deployment): Promise<void> {
    const job = this.jobs.get(d.id);
    const restore = this.restores.get(d.id);
    job?.ac.abort();
    restore?.ac.abort();
    await job?.done;
    await restore?.done;
    await this.withLock(d.id, async () => {
      const { runtime, source, router } = this.o;
      router.setTarget(d.id, null);
      for (const inst of runtime.running()) {
        if (inst.deploymentId === d.id) await runtime.stop(d.id, inst.revisionId);
      }
      const revisions = (await source.deployment(d.id))?.revisions ?? [];
      try {
        await runtime.remove(
          d,
          revisions.map((r) => r.id),
        );
      } catch (e) {
        this.failed(`deployment ${d.id}: removing it failed (retried): ${(e as Error).message}`, {
          deployment_id: d.id,
        });
        return;
      }
      this.o.logs.forget(d.id);
      await source.purge(d.id);
      for (const r of revisions) this.backoff.delete(r.id);
      this.o.log.info({ deployment_id: d.id }, `deployment ${d.id} deleted`);
    });
  }
}
