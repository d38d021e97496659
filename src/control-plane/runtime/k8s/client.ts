// Where a revision's Kubernetes objects go: `KubeCluster` applies them to a cluster (server-side apply, roll-out
// wait, deletion) with @kubernetes/client-node; `PrintCluster` prints them as YAML (the listener's dry run).
import type { KubeConfig, KubernetesObjectApi, V1Deployment } from "@kubernetes/client-node";
import { k8s } from "./client-node.js";
import { LABELS, objectNames, toYaml, type HangarObject } from "./render.js";
import { rootLogger, type Logger } from "../../../lib/logger.js";

/** Where a revision's objects go: a cluster (`KubeCluster`), or stdout for a dry run (`PrintCluster`). */
export interface Cluster {
  /** Applies the objects in order and waits until their Deployments rolled out; throws with the reason. */
  apply(objects: HangarObject[], signal?: AbortSignal): Promise<void>;
  /** Deletes every object a deployment may have in the namespace (absent ones are fine). */
  delete(deploymentId: string, namespace: string): Promise<void>;
}

export interface KubeClusterOptions {
  /** Default: the default kubeconfig (KUBECONFIG, ~/.kube/config, or the in-cluster service account). */
  kubeConfig?: KubeConfig;
  /** How long a rollout may take before the revision fails (ms, default 5 minutes). */
  rolloutTimeoutMs?: number;
  log?: Logger;
}

const FIELD_MANAGER = "hangar-listener";

/** A Kubernetes cluster: server-side apply, roll-out wait, deletion. */
export class KubeCluster implements Cluster {
  private readonly api: KubernetesObjectApi;
  private readonly rolloutTimeoutMs: number;
  private readonly log: Logger;

  constructor(opts: KubeClusterOptions = {}) {
    let kc = opts.kubeConfig;
    if (!kc) {
      kc = new k8s.KubeConfig();
      kc.loadFromDefault();
      // What loadFromDefault falls back to when it found nothing.
      const cluster = kc.getCurrentCluster();
      if (cluster?.name === "cluster" && cluster.server === "http://localhost:8080") {
        throw new Error(
          "no Kubernetes configuration found: set KUBECONFIG, create ~/.kube/config, or run the listener in " +
            "the cluster (with a service account)",
        );
      }
    }
    this.api = k8s.KubernetesObjectApi.makeApiClient(kc);
    this.rolloutTimeoutMs = opts.rolloutTimeoutMs ?? 5 * 60_000;
    this.log = opts.log ?? rootLogger();
  }

  /** Applies the objects, prunes the deployment's Deployments of another topology, waits until rolled out. */
  async apply(objects: HangarObject[], signal?: AbortSignal): Promise<void> {
    for (const o of objects) {
      await this.api.patch(o, undefined, undefined, FIELD_MANAGER, true, k8s.PatchStrategy.ServerSideApply);
      this.log.info(`applied ${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`);
    }
    const first = objects[0].metadata!;
    const deploymentId = first.labels![LABELS.deploymentId];
    const applied = new Set(objects.filter((o) => o.kind === "Deployment").map((o) => o.metadata?.name));
    for (const name of objectNames(deploymentId).deployments) {
      if (!applied.has(name)) await this.deleteIfPresent("apps/v1", "Deployment", name, first.namespace!);
    }
    for (const o of objects) if (o.kind === "Deployment") await this.waitRolledOut(o as V1Deployment, signal);
  }

  async delete(deploymentId: string, namespace: string): Promise<void> {
    const names = objectNames(deploymentId);
    await this.deleteIfPresent("v1", "Service", names.service, namespace);
    for (const name of names.deployments)
      await this.deleteIfPresent("apps/v1", "Deployment", name, namespace);
    await this.deleteIfPresent("v1", "Secret", names.secret, namespace);
    await this.deleteIfPresent("v1", "Secret", names.pullSecret, namespace);
  }

  private async deleteIfPresent(apiVersion: string, kind: string, name: string, namespace: string) {
    try {
      await this.api.delete({ apiVersion, kind, metadata: { name, namespace } });
      this.log.info(`deleted ${kind} ${namespace}/${name}`);
    } catch (e) {
      if ((e as { code?: number }).code !== 404) throw e;
    }
  }

  /** Until every replica runs the new template and is available; throws after the rollout timeout. */
  private async waitRolledOut(d: V1Deployment, signal?: AbortSignal): Promise<void> {
    const deadline = Date.now() + this.rolloutTimeoutMs;
    const header = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: d.metadata!.name!, namespace: d.metadata!.namespace },
    };
    for (;;) {
      if (signal?.aborted) throw new Error("interrupted");
      const live = await this.api.read<V1Deployment>(header);
      const want = live.spec?.replicas ?? 1;
      const s = live.status ?? {};
      if (
        (s.observedGeneration ?? 0) >= (live.metadata?.generation ?? 0) &&
        (s.updatedReplicas ?? 0) >= want &&
        (s.availableReplicas ?? 0) >= want &&
        (s.replicas ?? 0) <= want
      ) {
        return;
      }
      if (Date.now() > deadline) {
        const why = s.conditions?.find((c) => c.status === "False")?.message;
        throw new Error(
          `Deployment ${header.metadata.name} did not roll out in ${Math.round(this.rolloutTimeoutMs / 1000)}s` +
            ` (${s.availableReplicas ?? 0}/${want} available${why ? `: ${why}` : ""})`,
        );
      }
      await new Promise<void>((r) => {
        const t = setTimeout(r, 2000);
        signal?.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
      });
    }
  }
}

/** The dry run's cluster: prints the objects as YAML documents (`out`) instead of applying them. */
export class PrintCluster implements Cluster {
  constructor(
    private readonly out: (text: string) => void,
    private readonly log: Logger,
  ) {}

  async apply(objects: HangarObject[]): Promise<void> {
    this.out(toYaml(objects));
  }

  async delete(deploymentId: string, namespace: string): Promise<void> {
    this.log.info(
      { deployment_id: deploymentId },
      `the objects of deployment ${deploymentId} in namespace ${namespace} would be deleted (dry run)`,
    );
  }
}

/** A one-line reason from a Kubernetes client error (its body carries the API server's message). */
export function errorMessage(e: unknown): string {
  const err = e as { message?: string; body?: unknown; code?: number };
  try {
    const body = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
    if (body && typeof body === "object" && "message" in body)
      return `${err.code ?? ""} ${String(body.message)}`.trim();
  } catch {
    // fall through
  }
  return (err.message ?? String(e)).split("\n")[0];
}
