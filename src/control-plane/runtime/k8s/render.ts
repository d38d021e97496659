// Kubernetes compute for listeners: renders a revision's objects (Secret, Deployments, Service) with the
// model types of @kubernetes/client-node; `KubeCluster` applies them to a cluster (server-side apply) and
// `K8sRuntime` is the reconciler's `Runtime` on top of it.
import {
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  dumpYaml,
  type KubernetesObject,
  type V1Container,
  type V1Deployment,
  type V1EnvVar,
  type V1LocalObjectReference,
  type V1ObjectMeta,
  type V1PodSpec,
  type V1Probe,
  type V1ResourceRequirements,
  type V1Secret,
  type V1Service,
  type V1Volume,
  type V1VolumeMount,
} from "@kubernetes/client-node";
import { ObjectSerializer } from "@kubernetes/client-node/dist/serializer.js";
import { VERSION } from "../../../server.js";
import { StartError, type Runtime, type RuntimeInstance } from "../../domain/reconcile.js";
import type { Deployment, Listener, LogLevel, Revision, Secret } from "../../domain/types.js";

/** The image used when a revision names none (`source_revision_config.image_uri`). */
export const DEFAULT_IMAGE = `ghcr.io/hangar/agent-server:${VERSION}`;
/** The port every Agent Server container listens on. */
export const CONTAINER_PORT = 8000;
/** Where the embedded storage of a single-process (`all`) deployment lives in its container. */
export const DATA_DIR = "/data";

export const LABELS = {
  deploymentId: "hangar.dev/deployment-id",
  revisionId: "hangar.dev/revision-id",
  component: "app.kubernetes.io/component",
  managedBy: "app.kubernetes.io/managed-by",
  name: "app.kubernetes.io/name",
} as const;

export type Component = "api" | "workers" | "all";
/** The objects a revision is made of. */
export type HangarObject = V1Secret | V1Deployment | V1Service;

export interface RenderInput {
  deployment: Deployment;
  revision: Revision;
  /** The deployment's secrets in clear (the API masks them; a listener gets them from its assignments). */
  secrets: Secret[];
  namespace: string;
  /** The image when the revision has no `image_uri`: it must hold `hangar` and the project (see docs/listener.md). */
  image: string;
  /** PostgreSQL and Redis for `prod` deployments (each deployment gets its own schema and key prefix). */
  databaseUrl?: string;
  redisUrl?: string;
}

/** A revision that cannot be rendered (a `prod` deployment without a database, ...): its message says why. */
export class RenderError extends Error {}

/** `hangar-<12 hex of the deployment id>`: DNS-1123 (and DNS-1035, for the Service) compliant, unique enough. */
export function baseName(deploymentId: string): string {
  const short = deploymentId
    .toLowerCase()
    .replace(/[^a-z0-9]/g, "")
    .slice(0, 12);
  return `hangar-${short}`;
}

/** The names of every object a deployment may have, whatever its topology (to prune and delete). */
export function objectNames(deploymentId: string): {
  secret: string;
  deployments: string[];
  service: string;
} {
  const base = baseName(deploymentId);
  return {
    secret: `${base}-env`,
    deployments: [`${base}-api`, `${base}-workers`, `${base}-all`],
    service: `${base}-api`,
  };
}

/** The deployment's namespace: its own `listener_config`, else the listener's first, else `default`. */
export function namespaceFor(
  deployment: Deployment,
  listener?: Pick<Listener, "compute_config"> | null,
): string {
  return (
    deployment.source_config.listener_config?.k8s_namespace ||
    listener?.compute_config.k8s_namespaces?.[0] ||
    "default"
  );
}

/** The revision's image, else the listener's. */
export function imageFor(revision: Revision, fallback: string): string {
  return revision.source_revision_config.image_uri || fallback;
}

/** The objects of a revision, in the order to apply them (the Secret first). */
export function renderRevision(input: RenderInput): HangarObject[] {
  const { deployment, revision, namespace } = input;
  const names = objectNames(deployment.id);
  const spec = resourceSpec(deployment);
  const backend = backendFor(input);
  const meta = (name: string, component?: Component): V1ObjectMeta => ({
    name,
    namespace,
    labels: { ...spec.labels, ...selectorLabels(deployment.id, component), [LABELS.revisionId]: revision.id },
    ...(spec.annotations ? { annotations: spec.annotations } : {}),
  });
  const secret: V1Secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(names.secret),
    type: "Opaque",
    data: Object.fromEntries(
      [...input.secrets, ...backend.secrets].map((s) => [s.name, Buffer.from(s.value).toString("base64")]),
    ),
  };
  const pod = (component: Component): PodInput => ({
    deployment,
    revision,
    component,
    image: imageFor(revision, input.image),
    secretName: names.secret,
    env: backend.env,
    spec,
  });
  if (backend.kind === "embedded") {
    const all = workload(meta(`${baseName(deployment.id)}-all`, "all"), pod("all"), 1);
    return [secret, all, service(meta(names.service, "all"), deployment.id, "all")];
  }
  const api = workload(meta(`${baseName(deployment.id)}-api`, "api"), pod("api"), spec.apiReplicas);
  const workers = workload(
    meta(`${baseName(deployment.id)}-workers`, "workers"),
    pod("workers"),
    spec.workerReplicas,
  );
  return [secret, api, workers, service(meta(names.service, "api"), deployment.id, "api")];
}

/** Prints objects as YAML documents, each opened by `---` (what `kubectl apply -f -` reads). */
export function toYaml(objects: KubernetesObject[]): string {
  return objects.map((o) => `---\n${dumpYaml(o)}`).join("");
}

/** The labels that select a deployment's pods (the selector of a Deployment is immutable: no revision here). */
export function selectorLabels(deploymentId: string, component?: Component): Record<string, string> {
  return {
    [LABELS.name]: "hangar",
    [LABELS.managedBy]: "hangar",
    [LABELS.deploymentId]: deploymentId,
    ...(component ? { [LABELS.component]: component } : {}),
  };
}

interface Backend {
  kind: "embedded" | "cluster";
  /** Added to the Secret. */
  secrets: Secret[];
  /** Plain environment of every container. */
  env: V1EnvVar[];
}

/**
 * Where the deployment keeps its state. Its own DATABASE_URL and REDIS_URL secrets win; a `prod` deployment
 * without them runs on the listener's database, in its own schema and Redis key prefix; a `dev` one on embedded
 * storage in one `all` process.
 */
function backendFor(input: RenderInput): Backend {
  const { deployment, secrets } = input;
  const own = (name: string) => secrets.some((s) => s.name === name && s.value);
  if (own("DATABASE_URL") || own("REDIS_URL")) {
    if (!own("DATABASE_URL") || !own("REDIS_URL")) {
      throw new RenderError(
        `the deployment's secrets set ${own("DATABASE_URL") ? "DATABASE_URL" : "REDIS_URL"} without ` +
          `${own("DATABASE_URL") ? "REDIS_URL" : "DATABASE_URL"}: the scale-out backend needs both`,
      );
    }
    return { kind: "cluster", secrets: [], env: [] };
  }
  if (deployment.source_config.deployment_type !== "prod") return { kind: "embedded", secrets: [], env: [] };
  if (!input.databaseUrl || !input.redisUrl) {
    throw new RenderError(
      "a prod deployment runs on PostgreSQL + Redis: give the listener --database-url and --redis-url, " +
        "or set the deployment's DATABASE_URL and REDIS_URL secrets",
    );
  }
  const id = deployment.id.toLowerCase();
  return {
    kind: "cluster",
    secrets: [
      { name: "DATABASE_URL", value: input.databaseUrl },
      { name: "REDIS_URL", value: input.redisUrl },
    ],
    env: [
      { name: "HANGAR_DATABASE_SCHEMA", value: `d_${id.replace(/-/g, "")}` },
      { name: "HANGAR_REDIS_PREFIX", value: `d_${id}:` },
    ],
  };
}

interface Spec {
  apiReplicas: number;
  workerReplicas: number;
  api?: V1ResourceRequirements;
  workers?: V1ResourceRequirements;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  serviceAccountName?: string;
  imagePullSecrets?: V1LocalObjectReference[];
  volumes?: V1Volume[];
  volumeMounts?: V1VolumeMount[];
  initContainers?: V1Container[];
  sidecars?: V1Container[];
}

/** What Hangar honours of `source_config.resource_spec` (the official ResourceSpec; `max_scale` is not used). */
function resourceSpec(deployment: Deployment): Spec {
  const r = (deployment.source_config.resource_spec ?? {}) as Record<string, any>;
  const int = (v: unknown, fallback: number) =>
    Number.isInteger(v) && (v as number) >= 0 ? (v as number) : fallback;
  const apiReplicas = int(r.min_scale, 1);
  const strings = (v: unknown) =>
    v && typeof v === "object"
      ? (Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) as Record<string, string>)
      : undefined;
  const list = <T>(v: unknown, type: string): T[] | undefined =>
    Array.isArray(v) && v.length ? v.map((x) => ObjectSerializer.deserialize(x, type) as T) : undefined;
  return {
    apiReplicas,
    workerReplicas: int(r.queue_min_scale, apiReplicas),
    api: resources(r.cpu, r.cpu_limit, r.memory_mb, r.memory_limit_mb),
    workers: resources(
      r.queue_cpu ?? r.cpu,
      r.queue_cpu_limit ?? (r.queue_cpu == null ? r.cpu_limit : undefined),
      r.queue_memory_mb ?? r.memory_mb,
      r.queue_memory_limit_mb ?? (r.queue_memory_mb == null ? r.memory_limit_mb : undefined),
    ),
    labels: strings(r.labels),
    annotations: strings(r.annotations),
    serviceAccountName: typeof r.service_account_name === "string" ? r.service_account_name : undefined,
    imagePullSecrets: list<V1LocalObjectReference>(r.image_pull_secrets, "V1LocalObjectReference"),
    volumes: list<V1Volume>(r.volumes, "V1Volume"),
    volumeMounts: list<V1VolumeMount>(r.volume_mounts, "V1VolumeMount"),
    initContainers: list<V1Container>(r.init_containers, "V1Container"),
    sidecars: list<V1Container>(r.sidecars, "V1Container"),
  };
}

/** Requests from cores and MB; limits default to twice the requests (as the official ResourceSpec says). */
function resources(cpu: unknown, cpuLimit: unknown, memoryMb: unknown, memoryLimitMb: unknown) {
  const num = (v: unknown) => (typeof v === "number" && v > 0 ? v : undefined);
  const cores = (v: number) => `${Math.round(Math.round(v * 10) * 100)}m`;
  const requests: Record<string, string> = {};
  const limits: Record<string, string> = {};
  const c = num(cpu);
  const cl = num(cpuLimit) ?? (c !== undefined ? c * 2 : undefined);
  const m = num(memoryMb);
  const ml = num(memoryLimitMb) ?? (m !== undefined ? m * 2 : undefined);
  if (c !== undefined) requests.cpu = cores(c);
  if (cl !== undefined) limits.cpu = cores(cl);
  if (m !== undefined) requests.memory = `${Math.round(m)}Mi`;
  if (ml !== undefined) limits.memory = `${Math.round(ml)}Mi`;
  if (!Object.keys(requests).length && !Object.keys(limits).length) return undefined;
  const out: V1ResourceRequirements = {};
  if (Object.keys(requests).length) out.requests = requests;
  if (Object.keys(limits).length) out.limits = limits;
  return out;
}

interface PodInput {
  deployment: Deployment;
  revision: Revision;
  component: Component;
  image: string;
  secretName: string;
  env: V1EnvVar[];
  spec: Spec;
}

function probe(overrides: Partial<V1Probe>): V1Probe {
  return { httpGet: { path: "/ok", port: "http" }, timeoutSeconds: 3, ...overrides };
}

/** The Agent Server container: `hangar serve --mode <api|worker|all>` on port 8000. */
function container(p: PodInput): V1Container {
  const mode = p.component === "workers" ? "worker" : p.component;
  const config = p.revision.source_revision_config.langgraph_config_path || "langgraph.json";
  const args = [
    "serve",
    "--config",
    config,
    "--mode",
    mode,
    "--port",
    String(CONTAINER_PORT),
    "--host",
    "0.0.0.0",
  ];
  if (p.component === "all") args.push("--data-dir", DATA_DIR);
  const env: V1EnvVar[] = [
    { name: "HANGAR_DEPLOYMENT_ID", value: p.deployment.id },
    { name: "HANGAR_REVISION_ID", value: p.revision.id },
    ...p.env,
    ...(p.deployment.secret_references ?? []).map((r) => ({
      name: r.name,
      valueFrom: { secretKeyRef: { name: r.secret_name, key: r.secret_key } },
    })),
  ];
  const mounts = [
    ...(p.component === "all" ? [{ name: "data", mountPath: DATA_DIR }] : []),
    ...(p.spec.volumeMounts ?? []),
  ];
  const resources = p.component === "workers" ? p.spec.workers : p.spec.api;
  return {
    name: p.component === "workers" ? "worker" : "api-server",
    image: p.image,
    imagePullPolicy: "IfNotPresent",
    command: ["hangar"],
    args,
    ports: [{ name: "http", containerPort: CONTAINER_PORT, protocol: "TCP" }],
    envFrom: [{ secretRef: { name: p.secretName } }],
    env,
    // Start-up includes migrations and waiting for the database: up to 2 minutes before liveness applies.
    startupProbe: probe({ periodSeconds: 2, failureThreshold: 60 }),
    readinessProbe: probe({ periodSeconds: 5, failureThreshold: 3 }),
    livenessProbe: probe({ periodSeconds: 10, failureThreshold: 3 }),
    ...(resources ? { resources } : {}),
    ...(mounts.length ? { volumeMounts: mounts } : {}),
  };
}

/** A Deployment of one component. `all` (embedded storage) is one replica, replaced rather than rolled. */
function workload(metadata: V1ObjectMeta, p: PodInput, replicas: number): V1Deployment {
  const volumes = [
    // Not durable: the embedded database lives as long as the pod (docs/listener.md).
    ...(p.component === "all" ? [{ name: "data", emptyDir: {} }] : []),
    ...(p.spec.volumes ?? []),
  ];
  const podSpec: V1PodSpec = {
    containers: [container(p), ...(p.spec.sidecars ?? [])],
    terminationGracePeriodSeconds: 30,
    ...(p.spec.initContainers ? { initContainers: p.spec.initContainers } : {}),
    ...(p.spec.serviceAccountName ? { serviceAccountName: p.spec.serviceAccountName } : {}),
    ...(p.spec.imagePullSecrets ? { imagePullSecrets: p.spec.imagePullSecrets } : {}),
    ...(volumes.length ? { volumes } : {}),
  };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata,
    spec: {
      replicas: p.component === "all" ? 1 : replicas,
      selector: { matchLabels: selectorLabels(p.deployment.id, p.component) },
      strategy: p.component === "all" ? { type: "Recreate" } : { type: "RollingUpdate" },
      template: {
        metadata: {
          labels: { ...metadata.labels },
          ...(metadata.annotations ? { annotations: metadata.annotations } : {}),
        },
        spec: podSpec,
      },
    },
  };
}

/** The deployment's in-cluster address: port 80 to the API pods' 8000. */
function service(metadata: V1ObjectMeta, deploymentId: string, component: Component): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata,
    spec: {
      type: "ClusterIP",
      selector: selectorLabels(deploymentId, component),
      ports: [{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }],
    },
  };
}

/** The in-cluster URL of a deployment's API. */
export function serviceUrl(deploymentId: string, namespace: string): string {
  return `http://${objectNames(deploymentId).service}.${namespace}.svc.cluster.local`;
}

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
  log?: (msg: string) => void;
}

const FIELD_MANAGER = "hangar-listener";

/** A Kubernetes cluster: server-side apply, roll-out wait, deletion. */
export class KubeCluster implements Cluster {
  private readonly api: KubernetesObjectApi;
  private readonly rolloutTimeoutMs: number;
  private readonly log: (msg: string) => void;

  constructor(opts: KubeClusterOptions = {}) {
    let kc = opts.kubeConfig;
    if (!kc) {
      kc = new KubeConfig();
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
    this.api = KubernetesObjectApi.makeApiClient(kc);
    this.rolloutTimeoutMs = opts.rolloutTimeoutMs ?? 5 * 60_000;
    this.log = opts.log ?? ((m) => console.error(m));
  }

  /** Applies the objects, prunes the deployment's Deployments of another topology, waits until rolled out. */
  async apply(objects: HangarObject[], signal?: AbortSignal): Promise<void> {
    for (const o of objects) {
      await this.api.patch(o, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
      this.log(`applied ${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`);
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
  }

  private async deleteIfPresent(apiVersion: string, kind: string, name: string, namespace: string) {
    try {
      await this.api.delete({ apiVersion, kind, metadata: { name, namespace } });
      this.log(`deleted ${kind} ${namespace}/${name}`);
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
    private readonly log: (msg: string) => void,
  ) {}

  async apply(objects: HangarObject[]): Promise<void> {
    this.out(toYaml(objects));
  }

  async delete(deploymentId: string, namespace: string): Promise<void> {
    this.log(
      `the objects of deployment ${deploymentId} in namespace ${namespace} would be deleted (dry run)`,
    );
  }
}

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
  /** Per deployment: the tail of its queue (one change of its objects at a time). */
  private queues = new Map<string, Promise<unknown>>();
  /** Deployments whose objects this process deleted (stopped with nothing to roll back to). */
  private deleted = new Set<string>();
  onExit?: (inst: RuntimeInstance, how: string) => void;

  constructor(private readonly o: K8sRuntimeOptions) {}

  private serial<T>(deploymentId: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queues.get(deploymentId) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => {});
    this.queues.set(deploymentId, tail);
    void tail.then(() => {
      if (this.queues.get(deploymentId) === tail) this.queues.delete(deploymentId);
    });
    return run;
  }

  /** Nothing to build: a listener runs images. */
  async build(): Promise<void> {}

  isBuilt(): boolean {
    return true;
  }

  start(d: Deployment, r: Revision, signal?: AbortSignal): Promise<RuntimeInstance> {
    return this.serial(d.id, async () => {
      if (d.source !== "external_docker" && d.source !== "internal_docker") {
        throw new StartError(
          `a listener runs images: '${d.source}' deployments are built and run by the control plane ` +
            "(deploy an image of the project as 'external_docker')",
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
    await Promise.all(this.queues.values());
    this.live.clear();
  }
}

function publicPart({ deploymentId, revisionId, url, startedAt }: RuntimeInstance): RuntimeInstance {
  return { deploymentId, revisionId, url, startedAt };
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
