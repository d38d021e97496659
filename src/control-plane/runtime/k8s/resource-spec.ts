// What Hangar honours of a deployment's `source_config.resource_spec` (the official ResourceSpec): replicas,
// requests and limits, labels and annotations, and the pod spec lists, in @kubernetes/client-node's model form.
import type {
  V1Container,
  V1LocalObjectReference,
  V1Pod,
  V1ResourceRequirements,
  V1Volume,
  V1VolumeMount,
} from "@kubernetes/client-node";
import type { Deployment } from "../../domain/types.js";
import { k8s } from "./client-node.js";

export interface Spec {
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
export function resourceSpec(deployment: Deployment): Spec {
  const r = (deployment.source_config.resource_spec ?? {}) as Record<string, any>;
  const int = (v: unknown, fallback: number) =>
    Number.isInteger(v) && (v as number) >= 0 ? (v as number) : fallback;
  const apiReplicas = int(r.min_scale, 1);
  const strings = (v: unknown) =>
    v && typeof v === "object"
      ? (Object.fromEntries(Object.entries(v).map(([k, x]) => [k, String(x)])) as Record<string, string>)
      : undefined;
  const list = <T>(v: unknown, type: ModelList): T[] | undefined =>
    Array.isArray(v) && v.length ? (asModels(v, type) as T[]) : undefined;
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

/** The lists of a pod spec that resource_spec may give, by the client model of their items. */
type ModelList = "V1LocalObjectReference" | "V1Volume" | "V1VolumeMount" | "V1Container";

/**
 * Items of a resource_spec list in the client's model form (its ObjectSerializer: known fields only, in the
 * model's types), through the client's public `loadYaml` of a Pod that holds them (JSON is YAML).
 */
function asModels(items: unknown[], type: ModelList): unknown[] {
  const spec =
    type === "V1LocalObjectReference"
      ? { imagePullSecrets: items }
      : type === "V1Volume"
        ? { volumes: items }
        : type === "V1VolumeMount"
          ? { containers: [{ volumeMounts: items }] }
          : { containers: items };
  const pod = k8s.loadYaml<V1Pod>(JSON.stringify({ apiVersion: "v1", kind: "Pod", spec }));
  const out =
    type === "V1LocalObjectReference"
      ? pod.spec?.imagePullSecrets
      : type === "V1Volume"
        ? pod.spec?.volumes
        : type === "V1VolumeMount"
          ? pod.spec?.containers?.[0]?.volumeMounts
          : pod.spec?.containers;
  return out ?? [];
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
