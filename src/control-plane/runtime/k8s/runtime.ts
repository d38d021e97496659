// The reconciler's `Runtime` on Kubernetes (`hangar listener`): a revision's objects applied over its
// predecessor's through a `Cluster`, rolled back when the start fails or is interrupted before the switch.
import { KeyedLock } from "../../../lib/keyed-lock.js";
import { StartError } from "../../domain/errors.js";
import type { Runtime, RuntimeInstance } from "../../domain/reconcile.js";
import { BUILT_SOURCES, type Deployment, type LogLevel, type Revision } from "../../domain/types.js";
import { errorMessage, type Cluster } from "./client.js";
import { RenderError, renderRevision, serviceUrl, type HangarObject } from "./render.js";

export interface K8sRuntimeOptions {
  cluster: Cluster;
  /** The deployment's namespace (`namespaceFor` with the listener's record). */
  namespace: (d: Deployment) => string;
  /** The image of revisions without `image_uri`. */
  image: string;
  /** PostgreSQL and Redis for `prod` deployments. */
  databaseUrl?: string;
  redisUrl?: string;
  /** A deploy log line of a revision. */
  log: (deploymentId: string, revisionId: string, level: LogLevel, message: string) => void;
}

interface Applied extends RuntimeInstance {
  namespace: string;
  objects: HangarObject[];
}

/**
 * The reconciler's `Runtime` on Kubernetes. A deployment is one set of objects (Secret, Deployments, Service):
 * starting a revision applies its objects over its predecessor's and waits for the roll-out, so the predecessor
 * is not "stopped" beside it. Until the reconciler commits the switch (`takeOver`), the predecessor's objects are
 * kept to roll back to: a start that fails, or a revision stopped before the switch, re-applies them. Stopping
 * the revision that is applied, with nothing to roll back to, deletes the deployment's objects. The Service is
 * the deployment's stable address. `running()` is what this process applied; the listener stopping leaves the
 * objects running (a new listener process applies the live revisions again, which changes nothing that runs).
 */
export class K8sRuntime implements Runtime {
  /** Per deployment: the revision applied, and the one to roll back to until the switch is committed. */
  private live = new Map<string, { current: Applied; previous: Applied | null }>();
  /** Per deployment: one change of its objects at a time. */
  private queues = new KeyedLock();
  /** Deployments whose objects this process deleted (stopped with nothing to roll back to). */
  private deleted = new Set<string>();
  onExit?: (inst: RuntimeInstance, how: string) => void;

  constructor(private readonly o: K8sRuntimeOptions) {}

  private serial<T>(deploymentId: string, fn: () => Promise<T>): Promise<T> {
    return this.queues.run(deploymentId, fn);
  }

  /** Nothing to build: a listener runs images. */
  async build(): Promise<void> {}

  isBuilt(): boolean {
    return true;
  }

  /** A built source's revision comes with the image the control plane built (it did the build's statuses). */
  prebuilt(d: Deployment, r: Revision): boolean {
    return BUILT_SOURCES.includes(d.source) && !!r.source_revision_config.image_uri;
  }

  start(d: Deployment, r: Revision, signal?: AbortSignal): Promise<RuntimeInstance> {
    return this.serial(d.id, async () => {
      if (d.source !== "external_docker" && d.source !== "internal_docker" && !this.prebuilt(d, r)) {
        throw new StartError(
          `a listener runs images: revision ${r.id} of this '${d.source}' deployment has none (the control ` +
            "plane builds one when HANGAR_CP_IMAGE_REGISTRY is set; or deploy an image as 'external_docker')",
        );
      }
      const namespace = this.o.namespace(d);
      let objects: HangarObject[];
      try {
        objects = renderRevision({
          deployment: d,
          revision: r,
          // In clear: the store's record, or the listener's assignment.
          secrets: d.secrets,
          namespace,
          image: this.o.image,
          databaseUrl: this.o.databaseUrl,
          redisUrl: this.o.redisUrl,
        });
      } catch (e) {
        if (e instanceof RenderError) throw new StartError(e.message);
        throw e;
      }
      const log = (level: LogLevel, m: string) => this.o.log(d.id, r.id, level, m);
      this.deleted.delete(d.id);
      const slot = this.live.get(d.id);
      const previous =
        slot?.previous ?? (slot && slot.current.revisionId !== r.id ? slot.current : null) ?? null;
      log("INFO", `Applying the objects of revision ${r.id} in namespace ${namespace}`);
      try {
        await this.o.cluster.apply(objects, signal);
        if (signal?.aborted) throw new Error("interrupted");
      } catch (e) {
        const reason = signal?.aborted ? "roll-out interrupted" : `roll-out failed: ${errorMessage(e)}`;
        log("ERROR", reason);
        await this.undo(d.id, r.id, previous, namespace);
        throw new StartError(reason);
      }
      const inst: Applied = {
        deploymentId: d.id,
        revisionId: r.id,
        url: serviceUrl(d.id, namespace),
        startedAt: Date.now(),
        namespace,
        objects,
      };
      this.live.set(d.id, { current: inst, previous });
      log("INFO", `Revision ${r.id} rolled out; in-cluster URL ${inst.url}`);
      return publicPart(inst);
    });
  }

  /** The objects of `revisionId` go: its predecessor's are applied again, or, without one, they are deleted. */
  private async undo(
    deploymentId: string,
    revisionId: string,
    previous: Applied | null,
    namespace: string,
  ): Promise<void> {
    const log = (level: LogLevel, m: string) => this.o.log(deploymentId, revisionId, level, m);
    if (previous) {
      log("INFO", `Rolling back to revision ${previous.revisionId}`);
      try {
        await this.o.cluster.apply(previous.objects);
        this.live.set(deploymentId, { current: previous, previous: null });
      } catch (e) {
        // The reconciler applies the live revision again (it is no longer running here).
        this.live.delete(deploymentId);
        log("ERROR", `Rolling back to revision ${previous.revisionId} failed: ${errorMessage(e)}`);
      }
      return;
    }
    this.live.delete(deploymentId);
    log("INFO", `Deleting the objects of revision ${revisionId} in namespace ${namespace}`);
    try {
      await this.o.cluster.delete(deploymentId, namespace);
      this.deleted.add(deploymentId);
    } catch (e) {
      log("ERROR", `Deleting the objects of revision ${revisionId} failed: ${errorMessage(e)}`);
    }
  }

  /** The switch is committed: no rolling back any more. */
  async takeOver(inst: RuntimeInstance): Promise<void> {
    const slot = this.live.get(inst.deploymentId);
    if (slot?.current.revisionId === inst.revisionId) slot.previous = null;
  }

  stop(deploymentId: string, revisionId: string): Promise<void> {
    return this.serial(deploymentId, async () => {
      const slot = this.live.get(deploymentId);
      if (!slot) return;
      // A predecessor replaced in place: its objects are its successor's now.
      if (slot.current.revisionId !== revisionId) {
        if (slot.previous?.revisionId === revisionId) slot.previous = null;
        return;
      }
      await this.undo(deploymentId, revisionId, slot.previous, slot.current.namespace);
    });
  }

  running(): RuntimeInstance[] {
    return [...this.live.values()].map((s) => publicPart(s.current));
  }

  remove(d: Deployment): Promise<void> {
    return this.serial(d.id, async () => {
      const namespace = this.live.get(d.id)?.current.namespace ?? this.o.namespace(d);
      this.live.delete(d.id);
      // Stopping its revision deleted them already.
      if (this.deleted.delete(d.id)) return;
      await this.o.cluster.delete(d.id, namespace);
    });
  }

  /** The listener stops: what runs in the cluster keeps running. */
  async stopAll(): Promise<void> {
    await this.queues.idle();
    this.live.clear();
  }
}

function publicPart({ deploymentId, revisionId, url, startedAt }: RuntimeInstance): RuntimeInstance {
  return { deploymentId, revisionId, url, startedAt };
}
