// The control plane's builds for listeners: the newest revision of each `github`/`internal_source` deployment
// assigned to a listener is built in the sandbox as for the local runtime (AWAITING_BUILD, BUILDING), assembled
// into an image, pushed, and recorded as its `image_uri` (AWAITING_DEPLOY); the listener rolls it out from there.
// Build logs as for local builds; a failure is BUILD_FAILED with its reason.
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../../../lib/logger.js";
import { BuildError } from "../../domain/errors.js";
import type { LogSink } from "../../domain/log-sink.js";
import { Passes } from "../../domain/passes.js";
import {
  BUILT_SOURCES,
  FINAL_REVISION_STATUSES,
  PENDING_REVISION_STATUSES,
  type CpStore,
  type Deployment,
  type LogLevel,
  type Revision,
} from "../../domain/types.js";
import { buildDirOf, buildRevision } from "./builder.js";
import { buildAndPushImage, type ImageSettings } from "./image.js";
import type { Sandbox } from "./sandbox.js";
import type { TenantGate } from "./sandbox-gate.js";

export interface ImageBuildsOptions {
  store: CpStore;
  dataDir: string;
  settings: ImageSettings;
  sandbox: Sandbox;
  gate?: TenantGate;
  logs: LogSink;
  log: Logger;
  /** Period of the loop (default 1 s). */
  intervalMs?: number;
}

interface Job {
  revisionId: string;
  ac: AbortController;
  done: Promise<void>;
}

/** Statuses of a revision this loop builds (BUILDING: left by a control plane that stopped mid-build). */
const TO_BUILD = [...PENDING_REVISION_STATUSES.filter((s) => s !== "CREATING"), "BUILDING"];
const ALL = { limit: 10_000, offset: 0 };

/** The revision was superseded, or the loop stops. */
class Interrupted extends Error {}

/** Builds images for listeners, one at a time (a build takes a core, and images are large). */
export class ImageBuilds {
  private jobs = new Map<string, Job>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private passes = new Passes(
    () => this.reconcileAll(),
    (e) => this.o.log.error({ err: e }, "image build pass failed"),
    () => this.stopped,
  );
  /** One build at a time: the tail of the chain. */
  private slot: Promise<void> = Promise.resolve();

  constructor(private readonly o: ImageBuildsOptions) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), this.o.intervalMs ?? 1_000);
    this.wake();
  }

  wake(): void {
    this.passes.wake();
  }

  /** Stops the loop and interrupts the builds (their revisions are built again at the next start). */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    for (const j of this.jobs.values()) j.ac.abort();
    await this.passes.current;
    await Promise.all([...this.jobs.values()].map((j) => j.done));
    await this.o.logs.flush();
  }

  private async reconcileAll(): Promise<void> {
    const { store } = this.o;
    const deployments = (await store.deploymentsOnListeners()).filter((d) =>
      BUILT_SOURCES.includes(d.source),
    );
    const known = new Set<string>();
    for (const d of deployments) {
      if (this.stopped) return;
      if (d.deleted_at) continue;
      known.add(d.id);
      const revisions = await store.listRevisions(d.id, ALL);
      const desired = revisions.find((r) => !FINAL_REVISION_STATUSES.includes(r.status));
      const job = this.jobs.get(d.id);
      if (job && job.revisionId !== desired?.id) job.ac.abort();
      if (!desired || job) continue;
      // Older revisions not started never will be (the API skips them too, when it adds one).
      if (revisions.some((r) => r.id !== desired.id && PENDING_REVISION_STATUSES.includes(r.status))) {
        await store.skipPendingRevisions(d.id, desired.id);
      }
      if (desired.source_revision_config.image_uri || !TO_BUILD.includes(desired.status)) continue;
      this.startJob(d, desired);
    }
    // Deleted, or no longer anyone's to build.
    for (const [id, job] of this.jobs) if (!known.has(id)) job.ac.abort();
  }

  private startJob(d: Deployment, r: Revision): void {
    const job: Job = { revisionId: r.id, ac: new AbortController(), done: Promise.resolve() };
    job.done = this.run(d, r, job.ac.signal)
      .catch((e) =>
        this.o.log.error({ err: e, deployment_id: d.id, revision_id: r.id }, "image build failed"),
      )
      .finally(() => {
        if (this.jobs.get(d.id) === job) this.jobs.delete(d.id);
        this.wake();
      });
    this.jobs.set(d.id, job);
  }

  /** Waits for the build slot (or the abort); returns its release. */
  private async takeSlot(signal: AbortSignal): Promise<() => void> {
    const previous = this.slot;
    let release!: () => void;
    this.slot = new Promise<void>((res) => (release = res));
    await Promise.race([previous, new Promise<void>((res) => signal.addEventListener("abort", () => res()))]);
    if (signal.aborted) {
      // Our turn comes after the previous one's: pass it on then.
      void previous.then(release);
      throw new Interrupted();
    }
    return release;
  }

  private async run(d: Deployment, r: Revision, signal: AbortSignal): Promise<void> {
    const { store, logs } = this.o;
    const blog = (level: LogLevel, m: string) => logs.write(d.id, r.id, "build", level, m);
    const dlog = (level: LogLevel, m: string) => logs.write(d.id, r.id, "deploy", level, m);
    const proceed = async (status: "AWAITING_BUILD" | "BUILDING" | "AWAITING_DEPLOY") => {
      if (signal.aborted || this.stopped) throw new Interrupted();
      const cur = await store.getRevision(d.id, r.id);
      if (!cur || FINAL_REVISION_STATUSES.includes(cur.status)) throw new Interrupted();
      await logs.flush();
      await store.setRevisionStatus(r.id, status);
    };
    try {
      await proceed("AWAITING_BUILD");
      const release = await this.takeSlot(signal);
      try {
        await proceed("BUILDING");
        dlog("INFO", `Building revision ${r.id} into an image for listener ${d.source_config.listener_id}`);
        const refused = await this.o.gate?.refusalFor(d);
        if (refused) throw new BuildError(refused);
        const build = await buildRevision({
          deployment: d,
          revision: r,
          dataDir: this.o.dataDir,
          signal,
          sandbox: this.o.sandbox,
          log: blog,
        });
        let image: string;
        try {
          image = await buildAndPushImage({
            settings: this.o.settings,
            deployment: d,
            revision: r,
            build,
            workDir: join(this.o.dataDir, "images", r.id),
            log: blog,
            signal,
          });
        } catch (e) {
          const err = e instanceof BuildError ? e : new BuildError(`Image error: ${(e as Error).message}`);
          blog("ERROR", `Build failed: ${err.message}`);
          throw err;
        } finally {
          // The image holds what the listener needs: the build folder goes.
          await rm(buildDirOf(this.o.dataDir, r.id), { recursive: true, force: true }).catch(() => {});
        }
        if (signal.aborted || this.stopped) throw new Interrupted();
        await store.setRevisionImage(r.id, image);
        dlog(
          "INFO",
          `Revision ${r.id} is the image ${image}: waiting for listener ${d.source_config.listener_id}`,
        );
      } finally {
        release();
      }
      await proceed("AWAITING_DEPLOY");
    } catch (e) {
      // The control plane is stopping: the revision is left as it is and built again at the next start.
      if (this.stopped) return;
      await logs.flush();
      const cur = await store.getRevision(d.id, r.id);
      if (!cur || FINAL_REVISION_STATUSES.includes(cur.status)) return;
      if (e instanceof Interrupted || signal.aborted) {
        await store.setRevisionStatus(r.id, "INTERRUPTED", "Superseded by a newer revision");
        dlog("INFO", `Revision ${r.id} interrupted: a newer revision supersedes it`);
      } else {
        const reason = e instanceof BuildError ? e.message : `Build error: ${(e as Error).message}`;
        await store.setRevisionStatus(r.id, "BUILD_FAILED", reason);
        dlog("ERROR", `Build of revision ${r.id} failed: ${reason}`);
        this.o.log.error(
          { deployment_id: d.id, revision_id: r.id },
          `build of revision ${r.id} failed: ${reason}`,
        );
      }
    }
  }
}
