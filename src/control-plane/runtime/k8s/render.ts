// Kubernetes objects of a revision (Secret, Deployments, Service), rendered with the model types of
// @kubernetes/client-node: names, labels, the backend (embedded or PostgreSQL + Redis), the official ResourceSpec.
import type {
  KubernetesObject,
  V1Container,
  V1Deployment,
  V1EnvVar,
  V1ObjectMeta,
  V1PodSpec,
  V1Probe,
  V1Secret,
  V1Service,
} from "@kubernetes/client-node";
import { VERSION } from "../../../lib/version.js";
import { ConfigError } from "../../../lib/errors.js";
import type { Deployment, Listener, Revision, Secret } from "../../domain/types.js";
import { k8s } from "./client-node.js";
import { resourceSpec, type Spec } from "./resource-spec.js";

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
export class RenderError extends ConfigError {}

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
  pullSecret: string;
  deployments: string[];
  service: string;
} {
  const base = baseName(deploymentId);
  return {
    secret: `${base}-env`,
    pullSecret: `${base}-pull`,
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
  // The credentials of the registry the control plane pushed the revision's image to (a built source).
  const pull = deployment.image_pull_secret?.dockerconfigjson;
  const secrets: V1Secret[] = [secret];
  if (pull) {
    secrets.push({
      apiVersion: "v1",
      kind: "Secret",
      metadata: meta(names.pullSecret),
      type: "kubernetes.io/dockerconfigjson",
      data: { ".dockerconfigjson": Buffer.from(pull).toString("base64") },
    });
  }
  const podSpec: Spec = pull
    ? { ...spec, imagePullSecrets: [...(spec.imagePullSecrets ?? []), { name: names.pullSecret }] }
    : spec;
  const pod = (component: Component): PodInput => ({
    deployment,
    revision,
    component,
    image: imageFor(revision, input.image),
    secretName: names.secret,
    env: backend.env,
    spec: podSpec,
  });
  if (backend.kind === "embedded") {
    const all = workload(meta(`${baseName(deployment.id)}-all`, "all"), pod("all"), 1);
    return [...secrets, all, service(meta(names.service, "all"), deployment.id, "all")];
  }
  const api = workload(meta(`${baseName(deployment.id)}-api`, "api"), pod("api"), spec.apiReplicas);
  const workers = workload(
    meta(`${baseName(deployment.id)}-workers`, "workers"),
    pod("workers"),
    spec.workerReplicas,
  );
  return [...secrets, api, workers, service(meta(names.service, "api"), deployment.id, "api")];
}

/** Prints objects as YAML documents, each opened by `---` (what `kubectl apply -f -` reads). */
export function toYaml(objects: KubernetesObject[]): string {
  return objects.map((o) => `---\n${k8s.dumpYaml(o)}`).join("");
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
    // Nothing Hangar does needs a capability or a privilege (its port is above 1024). The user is the image's own
    // (`hangar build` makes it uid 10001; an `--image` may have another) and the root file system stays writable,
    // since a project's graphs may write beside themselves; docs/kubernetes.md's manifests go further.
    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
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
    securityContext: { seccompProfile: { type: "RuntimeDefault" } },
    // Hangar calls no Kubernetes API: no token in the pods unless the deployment names a service account.
    automountServiceAccountToken: !!p.spec.serviceAccountName,
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
