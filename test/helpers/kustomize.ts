// A small kustomize for the tests of deploy/kubernetes (there is no kustomize binary here): renders a
// kustomization directory as `kubectl kustomize` does, for the fields the manifests use — `resources` (files and
// directories), `patches` (strategic-merge patch files, merging pod spec lists by their merge keys) and `images` —
// and refuses every other field or patch directive, so an overlay cannot rely on what this does not implement.
import { readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import yaml from "js-yaml";

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: any;
}

const FIELDS = new Set(["apiVersion", "kind", "resources", "patches", "images"]);

/**
 * Lists a strategic-merge patch merges item by item, by their merge key, as Kubernetes declares them for pod specs.
 * Any other list in a patch is refused (Kubernetes merges some, replaces others: not worth guessing here).
 */
const MERGE_KEYS: Record<string, string> = {
  containers: "name",
  initContainers: "name",
  env: "name",
  volumes: "name",
  volumeMounts: "mountPath",
};

/** The YAML documents of a file, as objects (empty documents left out). */
export function readObjects(path: string): K8sObject[] {
  return yaml.loadAll(readFileSync(path, "utf8")).filter(Boolean) as K8sObject[];
}

const id = (o: K8sObject) => `${o.apiVersion} ${o.kind} ${o.metadata?.name}`;

/** The objects of the kustomization in `dir`, in the order kustomize lists them (resources, then patched). */
export function kustomize(dir: string): K8sObject[] {
  const file = join(dir, "kustomization.yaml");
  const k = yaml.load(readFileSync(file, "utf8")) as Record<string, any>;
  if (k.apiVersion !== "kustomize.config.k8s.io/v1beta1" || k.kind !== "Kustomization") {
    throw new Error(`${file}: not a kustomize.config.k8s.io/v1beta1 Kustomization`);
  }
  for (const key of Object.keys(k)) {
    if (!FIELDS.has(key))
      throw new Error(`${file}: "${key}" is not implemented by test/helpers/kustomize.ts`);
  }
  const objects: K8sObject[] = [];
  for (const r of (k.resources ?? []) as string[]) {
    const path = resolve(dir, r);
    objects.push(...(statSync(path).isDirectory() ? kustomize(path) : readObjects(path)));
  }
  const seen = new Set<string>();
  for (const o of objects) {
    if (seen.has(id(o))) throw new Error(`${file}: ${id(o)} is defined twice`);
    seen.add(id(o));
  }
  for (const p of (k.patches ?? []) as Record<string, unknown>[]) {
    if (Object.keys(p).some((key) => key !== "path")) {
      throw new Error(`${file}: patches other than {path} are not implemented by test/helpers/kustomize.ts`);
    }
    for (const patch of readObjects(resolve(dir, p.path as string))) {
      const i = objects.findIndex((o) => id(o) === id(patch));
      if (i < 0) throw new Error(`${file}: patch ${p.path as string}: no ${id(patch)} to patch`);
      objects[i] = merge(objects[i], patch, p.path as string) as K8sObject;
    }
  }
  for (const image of (k.images ?? []) as ImageRule[]) setImage(objects, image, file);
  return objects;
}

const isObject = (v: unknown): v is Record<string, any> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A strategic-merge patch of `base` by `patch` (null deletes a field). */
function merge(base: unknown, patch: unknown, where: string, key = ""): unknown {
  if (Array.isArray(patch)) {
    const mergeKey = MERGE_KEYS[key];
    if (!mergeKey) throw new Error(`${where}: merging the list "${key}" is not implemented`);
    const out = [...((base as unknown[]) ?? [])] as Record<string, unknown>[];
    for (const item of patch as Record<string, unknown>[]) {
      const i = out.findIndex((x) => x[mergeKey] === item[mergeKey]);
      if (i < 0) out.push(item);
      else out[i] = merge(out[i], item, where) as Record<string, unknown>;
    }
    return out;
  }
  if (!isObject(patch) || !isObject(base)) return patch;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith("$")) throw new Error(`${where}: the directive ${k} is not implemented`);
    if (v === null) delete out[k];
    else out[k] = merge(base[k], v, where, k);
  }
  return out;
}

interface ImageRule {
  name: string;
  newName?: string;
  newTag?: string;
  digest?: string;
}

/** The containers of every pod template (Deployments, StatefulSets, Jobs...) and Pod. */
export function containersOf(o: K8sObject): Record<string, any>[] {
  const spec = o.kind === "Pod" ? o.spec : o.spec?.template?.spec;
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? [])];
}

/** The `images` transformer: an image named `name` (any tag or digest) gets the new name, tag or digest. */
function setImage(objects: K8sObject[], rule: ImageRule, file: string): void {
  const unknown = Object.keys(rule).filter((k) => !["name", "newName", "newTag", "digest"].includes(k));
  if (unknown.length) throw new Error(`${file}: images: ${unknown.join(", ")} is not implemented`);
  for (const c of objects.flatMap(containersOf)) {
    const m = /^([^@]+?)(?::([^:/@]+))?(?:@(.+))?$/.exec(c.image as string);
    if (!m || m[1] !== rule.name) continue;
    const name = rule.newName ?? m[1];
    c.image = rule.digest
      ? `${name}@${rule.digest}`
      : rule.newTag
        ? `${name}:${rule.newTag}`
        : `${name}${m[2] ? `:${m[2]}` : ""}${m[3] ? `@${m[3]}` : ""}`;
  }
}
