// The Kubernetes manifests of Hangar itself (deploy/kubernetes: a base and the overlays external-db and
// in-cluster), rendered as kustomize renders them (test/helpers/kustomize.ts): every object valid against the
// Kubernetes schemas (kubernetes-models' validate, and no field the API does not know), selectors and references
// resolved, settings parsed by Hangar's own settings, the secrets documented, and names, labels, ports and probes
// as `hangar listener` renders them. The commands and probes against real processes:
// test/postgres/k8s-manifests.test.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Deployment, StatefulSet } from "kubernetes-models/apps/v1";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1";
import { ConfigMap, Secret, Service, ServiceAccount } from "kubernetes-models/v1";
import { describe, expect, it } from "vitest";
import { LABELS, renderRevision } from "../../src/control-plane/runtime/k8s/render.ts";
import { envVars, loadSettings } from "../../src/lib/settings.ts";
import { deployment, revision } from "../helpers/k8s-fixtures.ts";
import { schemaErrors, wire } from "../helpers/k8s-schema.ts";
import { containersOf, kustomize, type K8sObject } from "../helpers/kustomize.ts";
import { ROOT } from "../helpers/server.ts";

const DEPLOY = join(ROOT, "deploy/kubernetes");
const OVERLAYS = ["external-db", "in-cluster"] as const;
const render = (overlay: string) => kustomize(join(DEPLOY, "overlays", overlay));

/** What validates each kind: the kubernetes-models class and the @kubernetes/client-node model. */
const MODELS: Record<string, [new (o: any) => { validate(): void }, string]> = {
  "v1/ServiceAccount": [ServiceAccount, "V1ServiceAccount"],
  "v1/ConfigMap": [ConfigMap, "V1ConfigMap"],
  "v1/Secret": [Secret, "V1Secret"],
  "v1/Service": [Service, "V1Service"],
  "apps/v1/Deployment": [Deployment, "V1Deployment"],
  "apps/v1/StatefulSet": [StatefulSet, "V1StatefulSet"],
  "policy/v1/PodDisruptionBudget": [PodDisruptionBudget, "V1PodDisruptionBudget"],
};

/** The Secret users create for the external-db overlay (the in-cluster overlay brings its own). */
const USER_SECRET = "hangar-secrets";
/** The placeholder image the overlays replace, and what they replace it with. */
const PLACEHOLDER = "hangar-app";
const OVERLAY_IMAGE = "registry.example.com/my-agent:1.0.0";

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const workloads = (objects: K8sObject[]) =>
  objects.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet");
const find = (objects: K8sObject[], kind: string, name: string) => {
  const o = objects.find((x) => x.kind === kind && x.metadata.name === name);
  expect(o, `${kind} ${name}`).toBeDefined();
  return o!;
};
/** Containers that run Hangar (the `hangar` command), with the workload they are in. */
const hangarContainers = (objects: K8sObject[]) =>
  workloads(objects).flatMap((w) =>
    containersOf(w)
      .filter((c) => c.command?.[0] === "hangar")
      .map((c) => ({ w, c })),
  );
const selects = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(selector).every(([k, v]) => labels[k] === v);

/** A Secret's keys and values (data is base64, stringData plain). */
function secretValues(s: K8sObject): Record<string, string> {
  const data = Object.entries((s.data ?? {}) as Record<string, string>).map(([k, v]) => [
    k,
    Buffer.from(v, "base64").toString("utf8"),
  ]);
  return { ...Object.fromEntries(data), ...(s.stringData ?? {}) };
}

/** The environment a container gets: its ConfigMaps and Secrets (the user's Secret: `userSecret`), then its env. */
function containerEnv(
  objects: K8sObject[],
  c: Record<string, any>,
  userSecret: Record<string, string>,
): Record<string, string> {
  const secret = (name: string) => {
    const own = objects.find((o) => o.kind === "Secret" && o.metadata.name === name);
    return own ? secretValues(own) : name === USER_SECRET ? userSecret : {};
  };
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, find(objects, "ConfigMap", from.configMapRef.name).data);
    if (from.secretRef) Object.assign(env, secret(from.secretRef.name));
  }
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    const value = ref ? secret(ref.name)[ref.key] : e.value;
    if (value !== undefined) env[e.name] = value;
  }
  return env;
}

describe.each(OVERLAYS)("deploy/kubernetes/overlays/%s", (overlay) => {
  const objects = render(overlay);

  it("renders objects valid against the Kubernetes schemas", () => {
    expect(objects.length).toBeGreaterThan(0);
    for (const o of objects) {
      const key = `${o.apiVersion}/${o.kind}`;
      const model = MODELS[key];
      expect(model, `${key} ${o.metadata.name}: a kind this test validates`).toBeDefined();
      const [Model, type] = model;
      expect(() => new Model(o).validate(), `${key} ${o.metadata.name}`).not.toThrow();
      expect(schemaErrors(o, type), `${key} ${o.metadata.name}`).toEqual([]);
      expect(o.metadata.name).toMatch(DNS1123_LABEL);
      // The namespace is the user's choice (kubectl -n, or `namespace:` in an overlay of theirs).
      expect(o.metadata.namespace).toBeUndefined();
      for (const labels of [o.metadata.labels, o.spec?.template?.metadata?.labels].filter(Boolean)) {
        for (const v of Object.values(labels as Record<string, string>)) expect(v).toMatch(LABEL_VALUE);
      }
    }
    // What the test validates is what an overlay holds: no kind left unchecked, and both components there.
    const names = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(names).toEqual(
      expect.arrayContaining([
        "Deployment/hangar-api",
        "Deployment/hangar-workers",
        "Service/hangar-api",
        "PodDisruptionBudget/hangar-api",
        "PodDisruptionBudget/hangar-workers",
        "ConfigMap/hangar-config",
      ]),
    );
  });

  it("selects each workload's own pods; the Services and budgets select exactly the pods they are for", () => {
    const pods = (w: K8sObject) => w.spec.template.metadata.labels as Record<string, string>;
    for (const w of workloads(objects)) {
      expect(selects(w.spec.selector.matchLabels, pods(w)), w.metadata.name).toBe(true);
      // No other workload's pods match its selector (a Deployment would fight over them).
      const others = workloads(objects).filter(
        (x) => x !== w && selects(w.spec.selector.matchLabels, pods(x)),
      );
      expect(others.map((x) => x.metadata.name)).toEqual([]);
    }
    const expected: Record<string, string[]> = {
      "Service/hangar-api": ["hangar-api"],
      "PodDisruptionBudget/hangar-api": ["hangar-api"],
      "PodDisruptionBudget/hangar-workers": ["hangar-workers"],
      "Service/hangar-postgres": ["hangar-postgres"],
      "Service/hangar-redis": ["hangar-redis"],
    };
    for (const o of objects.filter((x) => x.kind === "Service" || x.kind === "PodDisruptionBudget")) {
      const selector = o.kind === "Service" ? o.spec.selector : o.spec.selector.matchLabels;
      const matched = workloads(objects).filter((w) => selects(selector, pods(w)));
      expect(
        matched.map((w) => w.metadata.name),
        `${o.kind}/${o.metadata.name}`,
      ).toEqual(expected[`${o.kind}/${o.metadata.name}`]);
      if (o.kind !== "Service") continue;
      // Each port's target is a named port of the selected pods' containers.
      for (const p of o.spec.ports) {
        const named = matched.flatMap((w) => containersOf(w).flatMap((c) => c.ports ?? []));
        expect(named.map((x: any) => x.name)).toContain(p.targetPort);
      }
    }
  });

  it("runs the overlay's image in every Hangar container; nothing is left on the placeholder", () => {
    const hangar = hangarContainers(objects);
    // api-server and worker, each Deployment's migrate init container.
    expect(hangar.map(({ c }) => c.name).sort()).toEqual(["api-server", "migrate", "migrate", "worker"]);
    for (const { c } of hangar) expect(c.image).toBe(OVERLAY_IMAGE);
    for (const c of workloads(objects).flatMap(containersOf)) expect(c.image).not.toBe(PLACEHOLDER);
  });

  it("resolves every reference: ConfigMaps, Secrets (keys the README documents), volumes, service accounts", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const guide = readFileSync(join(ROOT, "docs/kubernetes.md"), "utf8");
    const has = (kind: string, name: string) =>
      objects.some((o) => o.kind === kind && o.metadata.name === name);
    for (const w of workloads(objects)) {
      const spec = w.spec.template.spec;
      const where = w.metadata.name;
      if (spec.serviceAccountName) expect(has("ServiceAccount", spec.serviceAccountName), where).toBe(true);
      const volumes = [
        ...(spec.volumes ?? []).map((v: any) => v.name),
        ...(w.spec.volumeClaimTemplates ?? []).map((v: any) => v.metadata.name),
      ];
      for (const c of containersOf(w)) {
        for (const m of c.volumeMounts ?? []) expect(volumes, `${where} ${c.name}`).toContain(m.name);
        for (const from of c.envFrom ?? []) {
          const ref = from.configMapRef ?? from.secretRef;
          const kind = from.configMapRef ? "ConfigMap" : "Secret";
          if (!ref.optional)
            expect(has(kind, ref.name), `${where} ${c.name}: ${kind} ${ref.name}`).toBe(true);
        }
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef;
          if (!ref) continue;
          const own = objects.find((o) => o.kind === "Secret" && o.metadata.name === ref.name);
          if (own && !ref.optional) expect(Object.keys(secretValues(own))).toContain(ref.key);
          if (!own) {
            // A Secret the user creates: its name and keys are documented.
            expect(ref.name, `${where} ${c.name}: ${e.name}`).toBe(USER_SECRET);
            expect(readme, `README documents ${ref.key}`).toContain(`\`${ref.key}\``);
            expect(guide, `docs/kubernetes.md documents ${ref.key}`).toContain(ref.key);
          }
          // Hangar reads the variable under the name the key has.
          if (c.command?.[0] === "hangar") expect(e.name).toBe(ref.key);
        }
      }
    }
  });

  it("runs every container as non-root on a read-only root file system, with requests and limits", () => {
    for (const w of workloads(objects)) {
      const pod = w.spec.template.spec;
      expect(pod.securityContext?.runAsNonRoot, w.metadata.name).toBe(true);
      expect(pod.securityContext?.runAsUser).toBeGreaterThan(0);
      expect(pod.securityContext?.seccompProfile?.type).toBe("RuntimeDefault");
      expect(pod.automountServiceAccountToken).toBe(false);
      for (const c of containersOf(w)) {
        const where = `${w.metadata.name} ${c.name}`;
        expect(c.securityContext, where).toMatchObject({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
          capabilities: { drop: ["ALL"] },
        });
        expect(c.securityContext.runAsUser ?? pod.securityContext.runAsUser, where).toBeGreaterThan(0);
        expect(c.resources?.requests?.cpu, where).toBeDefined();
        expect(c.resources?.requests?.memory, where).toBeDefined();
        expect(c.resources?.limits?.memory, where).toBeDefined();
      }
    }
  });

  it("gives Hangar settings it accepts, and a SIGTERM grace beyond BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS", () => {
    const known = new Set(envVars().flatMap(({ v }) => [v.name, ...v.aliases]));
    const config = find(objects, "ConfigMap", "hangar-config").data as Record<string, string>;
    const documented = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
    for (const key of Object.keys(config)) {
      expect(known.has(key), `${key}: a variable Hangar reads`).toBe(true);
      expect(documented).toContain(`\`${key}\``);
    }
    expect(config.BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS).toBeDefined();
    const userSecret = {
      DATABASE_URI: "postgres://hangar:secret@db.example:5432/hangar",
      REDIS_URI: "redis://cache.example:6379",
      HANGAR_API_KEYS: "key-1,key-2",
    };
    for (const { w, c } of hangarContainers(objects)) {
      const env = containerEnv(objects, c, userSecret);
      const s = loadSettings(env);
      expect(s.cluster.databaseUrl, `${w.metadata.name} ${c.name}`).toBeDefined();
      if (c.name === "migrate") continue;
      expect(s.cluster.redisUrl).toBeDefined();
      expect(() => s.server && s.logging).not.toThrow();
      // The pod is killed this long after SIGTERM: the runs' grace, plus time to hand the rest back and close.
      const margin = w.spec.template.spec.terminationGracePeriodSeconds - s.cluster.shutdownGraceSeconds;
      expect(
        margin,
        `${w.metadata.name}: terminationGracePeriodSeconds - shutdown grace`,
      ).toBeGreaterThanOrEqual(10);
      expect(margin).toBeLessThanOrEqual(30);
    }
  });
});

describe("overlays/in-cluster", () => {
  it("points DATABASE_URI and REDIS_URI at its own PostgreSQL and Redis, with the database's user and password", () => {
    const objects = render("in-cluster");
    const secrets = secretValues(find(objects, "Secret", USER_SECRET));
    const db = new URL(secrets.DATABASE_URI);
    const postgres = find(objects, "StatefulSet", "hangar-postgres");
    const env = containerEnv(objects, postgres.spec.template.spec.containers[0], {});
    expect(db.protocol).toBe("postgres:");
    expect(db.hostname).toBe("hangar-postgres");
    expect(find(objects, "Service", "hangar-postgres").spec.ports[0].port).toBe(Number(db.port));
    expect([db.username, decodeURIComponent(db.password), db.pathname.slice(1)]).toEqual([
      env.POSTGRES_USER,
      env.POSTGRES_PASSWORD,
      env.POSTGRES_DB,
    ]);
    const redis = new URL(secrets.REDIS_URI);
    expect(redis.hostname).toBe("hangar-redis");
    expect(find(objects, "Service", "hangar-redis").spec.ports[0].port).toBe(Number(redis.port));
    // The data outlives the pod: a PersistentVolumeClaim per replica.
    expect(postgres.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBeDefined();
    // One pod of each, patched by container name (the base's limits kept).
    for (const name of ["hangar-api", "hangar-workers"]) {
      const d = find(objects, "Deployment", name);
      expect(d.spec.replicas).toBe(1);
      const main = d.spec.template.spec.containers[0];
      expect(main.resources.requests).toEqual({ cpu: "100m", memory: "256Mi" });
      expect(main.resources.limits.memory).toBeDefined();
    }
  });
});

describe("agreement with what `hangar listener` renders", () => {
  // A prod deployment of the same image, on its own DATABASE_URL and REDIS_URL: API and worker Deployments.
  const prod = deployment(
    { source_revision_config: { image_uri: OVERLAY_IMAGE } },
    { deployment_type: "prod" },
  );
  const listener: any[] = wire(
    renderRevision({
      deployment: prod,
      revision: revision(prod),
      secrets: [
        { name: "DATABASE_URL", value: "postgres://db.example/hangar" },
        { name: "REDIS_URL", value: "redis://cache.example:6379" },
      ],
      namespace: "default",
      image: "unused",
    }),
  );
  const ours = render("external-db");

  it.each(["api", "workers"])(
    "the %s Deployment: name, pod labels, container, command, port and probes",
    (part) => {
      const theirs = listener.find((o) => o.kind === "Deployment" && o.metadata.name.endsWith(`-${part}`));
      const mine = find(ours, "Deployment", `hangar-${part}`);
      expect(theirs, `the listener's ${part} Deployment`).toBeDefined();
      expect(theirs.metadata.name).toMatch(new RegExp(`^hangar-[0-9a-f]{12}-${part}$`));
      for (const key of [LABELS.name, LABELS.component]) {
        expect(mine.spec.template.metadata.labels[key], key).toBe(theirs.spec.template.metadata.labels[key]);
      }
      const their = theirs.spec.template.spec.containers[0];
      const my = mine.spec.template.spec.containers.find((c: any) => c.name === their.name);
      expect(my, `a container named ${their.name}`).toBeDefined();
      for (const field of [
        "command",
        "args",
        "ports",
        "imagePullPolicy",
        "startupProbe",
        "readinessProbe",
        "livenessProbe",
      ]) {
        expect(my[field], `${part} container: ${field}`).toEqual(their[field]);
      }
    },
  );

  it("the Service: name, port name and target, selected component; neither selects the other's pods", () => {
    const theirs = listener.find((o) => o.kind === "Service");
    const mine = find(ours, "Service", "hangar-api");
    expect(theirs.metadata.name).toMatch(/^hangar-[0-9a-f]{12}-api$/);
    expect(mine.spec.type).toBe(theirs.spec.type);
    expect(mine.spec.selector[LABELS.component]).toBe(theirs.spec.selector[LABELS.component]);
    const [mp, tp] = [mine.spec.ports[0], theirs.spec.ports[0]];
    expect([mp.name, mp.targetPort, mp.protocol]).toEqual([tp.name, tp.targetPort, tp.protocol]);
    // The port differs on purpose: 8000 here, as the official image; the listener's Services answer on 80.
    expect(mp.port).toBe(8000);
    // Both in one namespace: each Service and Deployment selects only its own pods.
    for (const d of listener.filter((o) => o.kind === "Deployment")) {
      expect(selects(mine.spec.selector, d.spec.template.metadata.labels)).toBe(false);
    }
    for (const d of workloads(ours)) {
      expect(selects(theirs.spec.selector, d.spec.template.metadata.labels)).toBe(false);
      for (const t of listener.filter((o) => o.kind === "Deployment")) {
        expect(selects(t.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(false);
      }
    }
  });
});
