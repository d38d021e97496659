// Checks Kubernetes objects against the object schemas of @kubernetes/client-node: its generated models give
// every field's name and type (attributeTypeMap) and which fields are required (their declarations), and its
// serializer must carry an object through without loss. Plus the name and label rules the API server applies.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import { ObjectSerializer } from "@kubernetes/client-node/dist/serializer.js";
import { expect } from "vitest";
import type { HangarObject } from "../../src/control-plane/runtime/k8s/render.ts";

const MODELS_DIR = join(
  dirname(createRequire(import.meta.url).resolve("@kubernetes/client-node")),
  "gen/models",
);
const requiredCache = new Map<string, Set<string>>();

/** The required fields of a model: the non-optional properties of its generated declaration. */
function requiredFields(type: string): Set<string> {
  let req = requiredCache.get(type);
  if (!req) {
    const dts = readFileSync(join(MODELS_DIR, `${type}.d.ts`), "utf8");
    req = new Set([...dts.matchAll(/^\s+'([^']+)':/gm)].map((m) => m[1]));
    requiredCache.set(type, req);
  }
  return req;
}

type Attr = { name: string; baseName: string; type: string; format: string };
const modelOf = (type: string): { getAttributeTypeMap(): Attr[] } | undefined => {
  const m = (k8s as any)[type];
  return typeof m?.getAttributeTypeMap === "function" ? m : undefined;
};

/** Every problem of `value` (wire form: JSON names) against the library's model `type`, recursively. */
export function schemaErrors(value: unknown, type: string, path = "$"): string[] {
  const errors: string[] = [];
  const isObj = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
  if (value === undefined || value === null) return errors;
  const arr = /^Array<(.+)>$/.exec(type);
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  if (type === "any") return errors;
  if (type === "string" || type === "boolean") {
    if (typeof value !== type) errors.push(`${path}: expected ${type}, got ${JSON.stringify(value)}`);
  } else if (type === "number") {
    if (typeof value !== "number" || !Number.isFinite(value)) errors.push(`${path}: expected a number`);
  } else if (type === "IntOrString") {
    if (typeof value !== "string" && !Number.isInteger(value)) errors.push(`${path}: expected int or string`);
  } else if (type === "Date") {
    if (typeof value !== "string" || Number.isNaN(Date.parse(value))) errors.push(`${path}: expected a date`);
  } else if (arr) {
    if (!Array.isArray(value)) errors.push(`${path}: expected an array`);
    else value.forEach((v, i) => errors.push(...schemaErrors(v, arr[1], `${path}[${i}]`)));
  } else if (map) {
    if (!isObj(value)) errors.push(`${path}: expected a map`);
    else
      for (const [k, v] of Object.entries(value as object))
        errors.push(...schemaErrors(v, map[1], `${path}.${k}`));
  } else {
    const model = modelOf(type);
    if (!model) return [`${path}: unknown type ${type}`];
    if (!isObj(value)) return [`${path}: expected a ${type} object`];
    const attrs = model.getAttributeTypeMap();
    for (const [k, v] of Object.entries(value as object)) {
      const attr = attrs.find((a) => a.baseName === k);
      if (!attr) errors.push(`${path}.${k}: not a field of ${type}`);
      else {
        if (attr.format === "int32" || attr.format === "int64") {
          if (!Number.isInteger(v)) errors.push(`${path}.${k}: expected an integer`);
        }
        errors.push(...schemaErrors(v, attr.type, `${path}.${k}`));
      }
    }
    for (const name of requiredFields(type)) {
      const attr = attrs.find((a) => a.name === name)!;
      if ((value as any)[attr.baseName] === undefined)
        errors.push(`${path}.${attr.baseName}: required by ${type}`);
    }
  }
  return errors;
}

export const TYPES: Record<string, string> = {
  "v1/Secret": "V1Secret",
  "v1/Service": "V1Service",
  "apps/v1/Deployment": "V1Deployment",
};

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** Checks one object (plain JSON, as sent to the API server) against its model, and what the API server checks. */
export function expectValidObject(raw: any): void {
  const type = TYPES[`${raw.apiVersion}/${raw.kind}`];
  expect(type, `${raw.apiVersion} ${raw.kind}`).toBeDefined();
  expect(schemaErrors(raw, type)).toEqual([]);
  // Lossless through the library's serializer (it drops every field its model does not know).
  const model = ObjectSerializer.deserialize(raw, type);
  expect(JSON.parse(JSON.stringify(ObjectSerializer.serialize(model, type)))).toEqual(raw);
  // Names, labels and Secret keys as the API server validates them.
  expect(raw.metadata.name).toMatch(DNS1123_LABEL);
  expect(raw.metadata.name.length).toBeLessThanOrEqual(63);
  expect(raw.metadata.namespace).toMatch(DNS1123_LABEL);
  const labelSets = [
    raw.metadata.labels,
    raw.spec?.template?.metadata?.labels,
    raw.spec?.selector?.matchLabels,
  ];
  for (const labels of labelSets.filter(Boolean)) {
    for (const v of Object.values(labels) as string[]) {
      expect(v).toMatch(LABEL_VALUE);
      expect(v.length).toBeLessThanOrEqual(63);
    }
  }
  if (raw.kind === "Secret") {
    for (const [k, v] of Object.entries(raw.data ?? {})) {
      expect(k).toMatch(/^[-._a-zA-Z0-9]+$/);
      expect(v).toMatch(/^[A-Za-z0-9+/]*={0,2}$/);
    }
  }
  if (raw.kind === "Deployment") {
    // The selector must select the template's pods.
    for (const [k, v] of Object.entries(raw.spec.selector.matchLabels))
      expect(raw.spec.template.metadata.labels[k]).toBe(v);
    for (const c of raw.spec.template.spec.containers) {
      expect(c.name).toMatch(DNS1123_LABEL);
      for (const p of c.ports ?? []) expect(p.name.length).toBeLessThanOrEqual(15);
      const mounts = (c.volumeMounts ?? []).map((m: any) => m.name);
      const volumes = (raw.spec.template.spec.volumes ?? []).map((v: any) => v.name);
      for (const m of mounts) expect(volumes).toContain(m);
    }
  }
}

/** The wire form of rendered objects. */
export const wire = (objects: HangarObject[]): any[] =>
  objects.map((o) =>
    JSON.parse(JSON.stringify(ObjectSerializer.serialize(o, TYPES[`${o.apiVersion}/${o.kind}`]))),
  );
