// Kubernetes rendering and `hangar listener`: a revision's objects are checked against the Kubernetes object
// schemas of @kubernetes/client-node (its generated models: field names and types, required fields, lossless
// serialization), then for content; the CLI's --dry-run output is checked the same way, against a fake control
// plane and against the real one. No cluster here: the apply path runs against a fake Kubernetes API server.
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as k8s from "@kubernetes/client-node";
import yaml from "js-yaml";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KubeCluster, type Cluster } from "../../src/control-plane/runtime/k8s/client.ts";
import {
  LABELS,
  RenderError,
  namespaceFor,
  renderRevision,
  serviceUrl,
  toYaml,
  type HangarObject,
} from "../../src/control-plane/runtime/k8s/render.ts";
import { K8sRuntime } from "../../src/control-plane/runtime/k8s/runtime.ts";
import {
  ControlPlaneClient,
  listenerReconciler,
  type Assignment,
} from "../../src/control-plane/runtime/k8s/listener.ts";
import type { Listener } from "../../src/control-plane/domain/types.ts";
import { startCp, cpClient, type CpProcess } from "../helpers/control-plane.ts";
import { deployment, now, revision } from "../helpers/k8s-fixtures.ts";
import { expectValidObject, schemaErrors, wire } from "../helpers/k8s-schema.ts";
import { BIN, ROOT, tempDir } from "../helpers/server.ts";
import { arrayLogger } from "../helpers/logs.ts";

// ---------------------------------------------------------------------------------------------------------------
// Fixtures

const byKind = (objects: any[], kind: string) => objects.filter((o) => o.kind === kind);
const decode = (data: Record<string, string>) =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, "base64").toString("utf8")]));

// ---------------------------------------------------------------------------------------------------------------

describe("renderRevision", () => {
  it("catches what is not a Kubernetes object (the checker itself)", () => {
    const d = deployment();
    const [secret, dep] = wire(
      renderRevision({ deployment: d, revision: revision(d), secrets: [], namespace: "default", image: "x" }),
    );
    expect(schemaErrors({ ...secret, strngData: {} }, "V1Secret")).toEqual([
      "$.strngData: not a field of V1Secret",
    ]);
    const broken = structuredClone(dep);
    delete broken.spec.template.spec.containers[0].name;
    broken.spec.replicas = "2";
    broken.spec.template.spec.containers[0].ports[0].containerPort = 80.5;
    expect(schemaErrors(broken, "V1Deployment")).toEqual([
      "$.spec.replicas: expected an integer",
      "$.spec.replicas: expected a number",
      "$.spec.template.spec.containers[0].ports[0].containerPort: expected an integer",
      "$.spec.template.spec.containers[0].name: required by V1Container",
    ]);
  });

  it("renders a dev revision: Secret, one `all` Deployment on an emptyDir, Service", () => {
    const d = deployment({ secrets: [] }, { listener_config: { k8s_namespace: "agents" } });
    const r = revision(d);
    const objects = wire(
      renderRevision({
        deployment: d,
        revision: r,
        secrets: [
          { name: "OPENAI_API_KEY", value: "sk-test" },
          { name: "GREETING", value: "héllo: world\n" },
        ],
        namespace: namespaceFor(d),
        image: "ignored/base:1",
      }),
    );
    expect(objects.map((o) => o.kind)).toEqual(["Secret", "Deployment", "Service"]);
    objects.forEach(expectValidObject);

    const short = d.id.replace(/-/g, "").slice(0, 12);
    const [secret] = byKind(objects, "Secret");
    const [dep] = byKind(objects, "Deployment");
    const [svc] = byKind(objects, "Service");
    for (const o of objects) {
      expect(o.metadata.namespace).toBe("agents");
      expect(o.metadata.labels).toMatchObject({
        [LABELS.deploymentId]: d.id,
        [LABELS.revisionId]: r.id,
        [LABELS.managedBy]: "hangar",
      });
    }
    expect(secret.metadata.name).toBe(`hangar-${short}-env`);
    expect(decode(secret.data)).toEqual({ OPENAI_API_KEY: "sk-test", GREETING: "héllo: world\n" });

    expect(dep.metadata.name).toBe(`hangar-${short}-all`);
    expect(dep.spec.replicas).toBe(1);
    expect(dep.spec.strategy).toEqual({ type: "Recreate" });
    expect(dep.spec.template.metadata.labels[LABELS.revisionId]).toBe(r.id);
    expect(dep.spec.selector.matchLabels[LABELS.revisionId]).toBeUndefined();
    const [c] = dep.spec.template.spec.containers;
    // No capability, no privilege escalation, the runtime's seccomp profile, no service account token.
    expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } });
    expect(dep.spec.template.spec.securityContext).toEqual({ seccompProfile: { type: "RuntimeDefault" } });
    expect(dep.spec.template.spec.automountServiceAccountToken).toBe(false);
    expect(c.image).toBe("registry.example.com/agents/my-agent:1.2.3");
    expect([...c.command, ...c.args]).toEqual([
      "hangar",
      "serve",
      "--config",
      "langgraph.json",
      "--mode",
      "all",
      "--port",
      "8000",
      "--host",
      "0.0.0.0",
      "--data-dir",
      "/data",
    ]);
    expect(c.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
    for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
      expect(p.httpGet).toEqual({ path: "/ok", port: "http" });
    }
    expect(c.ports).toEqual([{ name: "http", containerPort: 8000, protocol: "TCP" }]);
    expect(c.volumeMounts).toEqual([{ name: "data", mountPath: "/data" }]);
    expect(dep.spec.template.spec.volumes).toEqual([{ name: "data", emptyDir: {} }]);
    expect(c.env.map((e: any) => e.name)).not.toContain("DATABASE_URL");

    expect(svc.metadata.name).toBe(`hangar-${short}-api`);
    expect(svc.spec.ports).toEqual([{ name: "http", port: 80, targetPort: "http", protocol: "TCP" }]);
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
  });

  it("renders a prod revision: API and worker Deployments on PostgreSQL + Redis, resources from resource_spec", () => {
    const d = deployment(
      {
        secret_references: [{ name: "LICENSE", secret_name: "corp-license", secret_key: "key" }],
      },
      {
        deployment_type: "prod",
        resource_spec: {
          min_scale: 3,
          cpu: 0.5,
          memory_mb: 1024,
          queue_min_scale: 2,
          queue_cpu: 1,
          queue_memory_mb: 2048,
          queue_memory_limit_mb: 3000,
          labels: { team: "agents" },
          annotations: { "example.com/owner": "me" },
          service_account_name: "agents-sa",
          image_pull_secrets: [{ name: "regcred" }],
        },
      },
    );
    const r = revision(d, {
      source_revision_config: { image_uri: null, langgraph_config_path: "app/langgraph.json" },
    });
    const objects = wire(
      renderRevision({
        deployment: d,
        revision: r,
        secrets: [{ name: "OPENAI_API_KEY", value: "sk-prod" }],
        namespace: namespaceFor(d, { compute_config: { k8s_namespaces: ["prod-agents", "other"] } }),
        image: "ghcr.io/acme/agent:7",
        databaseUrl: "postgres://u:p@db:5432/agents",
        redisUrl: "redis://redis:6379",
      }),
    );
    expect(objects.map((o) => o.kind)).toEqual(["Secret", "Deployment", "Deployment", "Service"]);
    objects.forEach(expectValidObject);
    for (const o of objects) {
      expect(o.metadata.namespace).toBe("prod-agents");
      expect(o.metadata.labels.team).toBe("agents");
      expect(o.metadata.annotations).toEqual({ "example.com/owner": "me" });
    }

    const [secret] = byKind(objects, "Secret");
    expect(decode(secret.data)).toEqual({
      OPENAI_API_KEY: "sk-prod",
      DATABASE_URL: "postgres://u:p@db:5432/agents",
      REDIS_URL: "redis://redis:6379",
    });
    const [api, workers] = byKind(objects, "Deployment");
    const short = d.id.replace(/-/g, "").slice(0, 12);
    expect(api.metadata.name).toBe(`hangar-${short}-api`);
    expect(workers.metadata.name).toBe(`hangar-${short}-workers`);
    expect(api.spec.replicas).toBe(3);
    expect(workers.spec.replicas).toBe(2);
    const ac = api.spec.template.spec.containers[0];
    const wc = workers.spec.template.spec.containers[0];
    expect(ac.image).toBe("ghcr.io/acme/agent:7");
    expect(ac.args).toEqual([
      "serve",
      "--config",
      "app/langgraph.json",
      "--mode",
      "api",
      "--port",
      "8000",
      "--host",
      "0.0.0.0",
    ]);
    expect(wc.args).toEqual([
      "serve",
      "--config",
      "app/langgraph.json",
      "--mode",
      "worker",
      "--port",
      "8000",
      "--host",
      "0.0.0.0",
    ]);
    for (const c of [ac, wc]) {
      expect(c.command).toEqual(["hangar"]);
      expect(c.envFrom).toEqual([{ secretRef: { name: secret.metadata.name } }]);
      expect(c.readinessProbe.httpGet).toEqual({ path: "/ok", port: "http" });
      expect(c.livenessProbe.httpGet).toEqual({ path: "/ok", port: "http" });
      expect(c.volumeMounts).toBeUndefined();
      const env = Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
      expect(env).toMatchObject({
        HANGAR_DEPLOYMENT_ID: d.id,
        HANGAR_REVISION_ID: r.id,
        HANGAR_DATABASE_SCHEMA: `d_${d.id.replace(/-/g, "")}`,
        HANGAR_REDIS_PREFIX: `d_${d.id}:`,
        LICENSE: { secretKeyRef: { name: "corp-license", key: "key" } },
      });
    }
    expect(ac.resources).toEqual({
      requests: { cpu: "500m", memory: "1024Mi" },
      limits: { cpu: "1000m", memory: "2048Mi" },
    });
    expect(wc.resources).toEqual({
      requests: { cpu: "1000m", memory: "2048Mi" },
      limits: { cpu: "2000m", memory: "3000Mi" },
    });
    for (const dep of [api, workers]) {
      expect(dep.spec.template.spec.serviceAccountName).toBe("agents-sa");
      expect(dep.spec.template.spec.imagePullSecrets).toEqual([{ name: "regcred" }]);
      expect(dep.spec.template.spec.volumes).toBeUndefined();
      expect(dep.spec.strategy).toEqual({ type: "RollingUpdate" });
    }
    const [svc] = byKind(objects, "Service");
    expect(svc.spec.selector).toEqual(api.spec.selector.matchLabels);
    expect(svc.spec.selector[LABELS.component]).toBe("api");
  });

  it("a deployment's own DATABASE_URL and REDIS_URL secrets win; a prod one without a database fails clearly", () => {
    const d = deployment({}, { deployment_type: "dev" });
    const own = wire(
      renderRevision({
        deployment: d,
        revision: revision(d),
        secrets: [
          { name: "DATABASE_URL", value: "postgres://mine" },
          { name: "REDIS_URL", value: "redis://mine" },
        ],
        namespace: "default",
        image: "x",
        databaseUrl: "postgres://listener",
        redisUrl: "redis://listener",
      }),
    );
    own.forEach(expectValidObject);
    expect(byKind(own, "Deployment").map((o) => o.spec.template.spec.containers[0].args[4])).toEqual([
      "api",
      "worker",
    ]);
    expect(decode(byKind(own, "Secret")[0].data)).toEqual({
      DATABASE_URL: "postgres://mine",
      REDIS_URL: "redis://mine",
    });
    expect(JSON.stringify(own)).not.toContain("HANGAR_DATABASE_SCHEMA");

    const p = deployment({}, { deployment_type: "prod" });
    expect(() =>
      renderRevision({ deployment: p, revision: revision(p), secrets: [], namespace: "default", image: "x" }),
    ).toThrow(RenderError);
    expect(() =>
      renderRevision({
        deployment: d,
        revision: revision(d),
        secrets: [{ name: "DATABASE_URL", value: "postgres://mine" }],
        namespace: "default",
        image: "x",
      }),
    ).toThrow(/without REDIS_URL/);
  });

  it("picks the namespace", () => {
    const d = deployment();
    expect(namespaceFor(d)).toBe("default");
    expect(namespaceFor(d, { compute_config: { k8s_namespaces: ["a", "b"] } })).toBe("a");
    d.source_config.listener_config = { k8s_namespace: "c" };
    expect(namespaceFor(d, { compute_config: { k8s_namespaces: ["a"] } })).toBe("c");
  });
});

// ---------------------------------------------------------------------------------------------------------------
// A fake control plane: the listener endpoints, recording what the listener sends and keeping what it reports
// (revision statuses, the active revision, removals), as the real one does.

interface FakeCp {
  url: string;
  listenerId: string;
  key: string;
  listener: Listener;
  assignments: Assignment[];
  requests: { method: string; path: string; body: any }[];
  close: () => Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<any> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text ? JSON.parse(text) : undefined;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function fakeControlPlane(): Promise<FakeCp> {
  const listenerId = randomUUID();
  const listener: Listener = {
    id: listenerId,
    tenant_id: randomUUID(),
    version: null,
    compute_type: "k8s",
    compute_id: "test-cluster",
    compute_config: { k8s_namespaces: ["agents"] },
    created_at: now,
    updated_at: now,
  };
  const cp = { listenerId, key: "test-key", listener, assignments: [], requests: [] } as unknown as FakeCp;
  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    cp.requests.push({ method: req.method!, path: req.url!, body });
    const send = (status: number, payload?: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(payload === undefined ? "" : JSON.stringify(payload));
    };
    if (req.headers["x-api-key"] !== cp.key) return send(401, { detail: "Invalid API key" });
    const base = `/v2/listeners/${listenerId}`;
    if (!req.url!.startsWith(base))
      return send(404, { detail: `Listener ID ${req.url!.split("/")[3]} not found.` });
    const rest = req.url!.slice(base.length);
    if (req.method === "GET" && rest === "") return send(200, listener);
    // The control plane's shape: the deployment's fields, secrets in clear, its revisions beside them.
    const out = (a: Assignment) => ({ ...a.deployment, revisions: a.revisions });
    if (req.method === "GET" && rest === "/assignments") {
      return send(200, { resources: cp.assignments.map(out) });
    }
    const one = /^\/assignments\/([^/]+)$/.exec(rest);
    const a = one && cp.assignments.find((x) => x.deployment.id === one[1]);
    if (one && !a) return send(404, { detail: `Deployment ID ${one[1]} not found.` });
    if (req.method === "GET" && a) return send(200, out(a));
    if (req.method === "PATCH" && a) {
      Object.assign(a.deployment, body);
      return send(200, out(a));
    }
    if (req.method === "DELETE" && a) {
      cp.assignments = cp.assignments.filter((x) => x !== a);
      return send(204);
    }
    const status = /^\/revisions\/([^/]+)\/status$/.exec(rest);
    if (req.method === "POST" && status) {
      for (const x of cp.assignments) {
        const r = x.revisions.find((y) => y.id === status[1]);
        if (!r) continue;
        Object.assign(r, { status: body.status, status_message: body.message ?? null });
        if (body.status === "DEPLOYED") x.deployment.active_revision_id = r.id;
        return send(200, r);
      }
      return send(404, { detail: `Revision ID ${status[1]} not found.` });
    }
    if (req.method === "POST" && rest === "/logs") return send(204);
    send(404, { detail: "Not Found" });
  });
  cp.url = await listen(server);
  cp.close = () => new Promise<void>((res) => server.close(() => res()));
  return cp;
}

/** Runs `hangar listener <args>`; stdout and stderr apart. */
function runListenerCli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((res) => {
    const proc = spawn(process.execPath, [BIN, "listener", ...args], {
      cwd: ROOT,
      env: { ...process.env, HANGAR_API_KEY: "", HANGAR_CONTROL_PLANE_URL: "", HANGAR_LISTENER_ID: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout!.on("data", (d) => (stdout += d));
    proc.stderr!.on("data", (d) => (stderr += d));
    proc.once("exit", (code) => res({ code, stdout, stderr }));
  });
}

/** The YAML documents of the output, as plain JSON (what `kubectl apply -f -` would send). */
const documents = (out: string): any[] => yaml.loadAll(out).filter((d) => d != null);

describe("hangar listener", () => {
  let cp: FakeCp;
  beforeAll(async () => {
    cp = await fakeControlPlane();
  });
  afterAll(() => cp.close());
  afterEach(() => {
    cp.requests.length = 0;
  });

  it("--dry-run --once prints valid Kubernetes objects of the revisions to run, and reports nothing", async () => {
    const dev = deployment(
      { secrets: [{ name: "K", value: "v" }] },
      { listener_config: { k8s_namespace: "agents" } },
    );
    const devRev = revision(dev);
    const prod = deployment({ name: "prod-agent" }, { deployment_type: "prod" });
    const prodLive = revision(prod, { status: "DEPLOYED" });
    const prodFailed = revision(prod, { status: "DEPLOY_FAILED" });
    prod.active_revision_id = prodLive.id;
    const building = deployment({ name: "not-yet" });
    cp.assignments = [
      { deployment: dev, revisions: [devRev] },
      // A newer revision failed: the active one is what runs.
      { deployment: prod, revisions: [prodFailed, prodLive] },
      { deployment: building, revisions: [revision(building, { status: "CREATING" })] },
    ];
    const { code, stdout, stderr } = await runListenerCli([
      "--control-plane",
      cp.url,
      "--api-key",
      cp.key,
      "--listener-id",
      cp.listenerId,
      "--dry-run",
      "--once",
      "--database-url",
      "postgres://db/agents",
      "--redis-url",
      "redis://redis",
    ]);
    expect(stderr).not.toMatch(/error/i);
    expect(code).toBe(0);
    expect(stdout.startsWith("---\n")).toBe(true);
    // Deployments are reconciled concurrently: each one's objects come together, in either order.
    const docs = documents(stdout).sort(
      (a, b) =>
        Number(a.metadata.labels[LABELS.deploymentId] === prod.id) -
        Number(b.metadata.labels[LABELS.deploymentId] === prod.id),
    );
    expect(docs.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      `Secret/hangar-${dev.id.replace(/-/g, "").slice(0, 12)}-env`,
      `Deployment/hangar-${dev.id.replace(/-/g, "").slice(0, 12)}-all`,
      `Service/hangar-${dev.id.replace(/-/g, "").slice(0, 12)}-api`,
      `Secret/hangar-${prod.id.replace(/-/g, "").slice(0, 12)}-env`,
      `Deployment/hangar-${prod.id.replace(/-/g, "").slice(0, 12)}-api`,
      `Deployment/hangar-${prod.id.replace(/-/g, "").slice(0, 12)}-workers`,
      `Service/hangar-${prod.id.replace(/-/g, "").slice(0, 12)}-api`,
    ]);
    docs.forEach(expectValidObject);
    // The library reads them back as its own models.
    const devFirst = documents(stdout)[0].metadata.labels[LABELS.deploymentId] === dev.id;
    const models = k8s.loadAllYaml(stdout).map((o) => o.constructor.name);
    expect(devFirst ? models : [...models.slice(4), ...models.slice(0, 4)]).toEqual([
      "V1Secret",
      "V1Deployment",
      "V1Service",
      "V1Secret",
      "V1Deployment",
      "V1Deployment",
      "V1Service",
    ]);
    // Exactly what the renderer gives: dev in its own namespace, prod (its active revision) in the listener's.
    const devObjects = renderRevision({
      deployment: dev,
      revision: devRev,
      secrets: [{ name: "K", value: "v" }],
      namespace: "agents",
      image: "unused",
    });
    const prodObjects = renderRevision({
      deployment: prod,
      revision: prodLive,
      secrets: [],
      namespace: "agents",
      image: "unused",
      databaseUrl: "postgres://db/agents",
      redisUrl: "redis://redis",
    });
    expect(docs).toEqual(wire([...devObjects, ...prodObjects]));
    expect(stdout).toBe(
      devFirst ? toYaml(devObjects) + toYaml(prodObjects) : toYaml(prodObjects) + toYaml(devObjects),
    );
    // A dry run reports nothing.
    expect(cp.requests.filter((r) => r.method !== "GET")).toEqual([]);
  });

  it("says in one line what is wrong: key, listener, control plane, missing flags", async () => {
    const base = ["--dry-run", "--once", "--control-plane", cp.url];
    const other = randomUUID();
    const closed = createServer();
    const deadUrl = await listen(closed);
    await new Promise((res) => closed.close(res));
    const [badKey, unknown, down, missing] = await Promise.all([
      runListenerCli([...base, "--api-key", "wrong", "--listener-id", cp.listenerId]),
      runListenerCli([...base, "--api-key", cp.key, "--listener-id", other]),
      runListenerCli([
        "--dry-run",
        "--once",
        "--control-plane",
        deadUrl,
        "--api-key",
        "k",
        "--listener-id",
        other,
      ]),
      runListenerCli(["--dry-run", "--once"]),
    ]);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr.trim()).toBe(
      `hangar listener: the control plane at ${cp.url} refused the API key (401: Invalid API key)`,
    );
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe(
      `hangar listener: listener ${other} not found on the control plane at ${cp.url}`,
    );
    expect(down.code).toBe(1);
    expect(down.stderr.trim()).toBe(
      `hangar listener: cannot reach the control plane at ${deadUrl} (ECONNREFUSED)`,
    );
    expect(missing.code).toBe(2);
    expect(missing.stderr.trim()).toMatch(/^hangar listener: --control-plane <url> is required/);
    expect((badKey.stdout + unknown.stdout + down.stdout + missing.stdout).trim()).toBe("");
  });

  it("without --dry-run: the reconcile loop rolls out on a cluster and reports every status, DEPLOY_FAILED, removals", async () => {
    const applied: HangarObject[][] = [];
    const deleted: string[] = [];
    const idOf = (objects: HangarObject[]) => objects[0].metadata!.labels![LABELS.deploymentId];
    const cluster: Cluster = {
      apply: async (objects) => {
        applied.push(objects);
        if (idOf(objects) === bad.id) throw new Error("quota exceeded");
      },
      delete: async (id) => void deleted.push(id),
    };
    const good = deployment();
    const bad = deployment({ name: "bad" });
    const noDb = deployment({ name: "no-db" }, { deployment_type: "prod" });
    const src = deployment({ name: "src", source: "github", source_revision_config: {} });
    const failed = deployment({ name: "failed-before" });
    const gone = deployment({ name: "gone", deleted_at: now });
    const goodRev = revision(good);
    const badRev = revision(bad, { status: "AWAITING_DEPLOY" });
    const noDbRev = revision(noDb);
    const srcRev = revision(src);
    cp.assignments = [
      { deployment: good, revisions: [goodRev] },
      { deployment: bad, revisions: [badRev] },
      { deployment: noDb, revisions: [noDbRev] },
      { deployment: src, revisions: [srcRev] },
      { deployment: failed, revisions: [revision(failed, { status: "BUILD_FAILED" })] },
      { deployment: gone, revisions: [] },
    ];
    const logs: string[] = [];
    const failures: string[] = [];
    const client = new ControlPlaneClient({ url: cp.url, apiKey: cp.key, listenerId: cp.listenerId });
    const reconciler = listenerReconciler({
      client,
      cluster,
      image: "unused",
      log: arrayLogger(logs),
      onFailure: (m) => failures.push(m),
    });
    await reconciler.once();

    // Rolled out once each (concurrently: in any order); the failed first revision's objects are deleted again.
    expect(applied.map((o) => [idOf(o), o.map((x) => x.kind)]).sort()).toEqual(
      [
        [good.id, ["Secret", "Deployment", "Service"]],
        [bad.id, ["Secret", "Deployment", "Service"]],
      ].sort(),
    );
    expect(deleted.sort()).toEqual([bad.id, gone.id].sort());
    const statuses = (rid: string) =>
      cp.requests
        .filter((r) => r.path.endsWith(`/revisions/${rid}/status`))
        .map((r) => (r.body.message ? [r.body.status, r.body.message] : r.body.status));
    const steps = ["AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"];
    expect(statuses(goodRev.id)).toEqual([...steps, "DEPLOYED"]);
    expect(statuses(badRev.id)).toEqual([...steps, ["DEPLOY_FAILED", "roll-out failed: quota exceeded"]]);
    expect(statuses(noDbRev.id)).toEqual([
      ...steps,
      ["DEPLOY_FAILED", expect.stringMatching(/^a prod deployment runs on PostgreSQL \+ Redis/)],
    ]);
    expect(statuses(srcRev.id)).toEqual([
      ...steps,
      [
        "DEPLOY_FAILED",
        expect.stringMatching(/^a listener runs images: revision \S+ of this 'github' deployment has none/),
      ],
    ]);
    expect(failures).toHaveLength(3);
    // The switch: the deployment's active revision and status, as the local reconciler sets them, and the address
    // its Service gives it (the control plane's router does not serve a listener's deployments).
    expect(cp.requests.filter((r) => r.method === "PATCH")).toEqual([
      {
        method: "PATCH",
        path: `/v2/listeners/${cp.listenerId}/assignments/${good.id}`,
        body: { active_revision_id: goodRev.id, status: "READY", url: serviceUrl(good.id, "agents") },
      },
    ]);
    expect(cp.requests.filter((r) => r.method === "DELETE").map((r) => r.path)).toEqual([
      `/v2/listeners/${cp.listenerId}/assignments/${gone.id}`,
    ]);
    const logLines = cp.requests.filter((r) => r.path.endsWith("/logs")).flatMap((r) => r.body.lines);
    expect(logLines.every((l: any) => l.kind === "deploy")).toBe(true);
    expect(logLines.map((l: any) => l.message)).toContain("roll-out failed: quota exceeded");
    expect(logLines.map((l: any) => l.message)).toContain(
      `Revision ${goodRev.id} rolled out; in-cluster URL ${serviceUrl(good.id, "agents")}`,
    );

    // Done once: the next pass does not roll the same revisions out again, nor report anything.
    cp.requests.length = 0;
    applied.length = 0;
    await reconciler.once();
    expect(applied).toEqual([]);
    expect(cp.requests.filter((r) => r.method !== "GET")).toEqual([]);
    await reconciler.stop();

    // A new listener process applies the live revision again (nothing else), and reports no status.
    const again = listenerReconciler({ client, cluster, image: "unused", log: arrayLogger(logs) });
    await again.once();
    await again.stop();
    expect(applied.map(idOf)).toEqual([good.id]);
    expect(cp.requests.filter((r) => r.method !== "GET" && !r.path.endsWith("/logs"))).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// K8sRuntime against a fake Kubernetes API server: server-side apply, roll-out wait, deletion; and its in-place
// updates (a new revision applied over its predecessor's objects, rolled back while the switch is not committed).

describe("K8sRuntime", () => {
  let server: Server;
  let url: string;
  const calls: { method: string; path: string; type?: string; body: any }[] = [];
  const store = new Map<string, any>();

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const body = await readBody(req).catch(() => undefined);
      const path = req.url!.split("?")[0];
      calls.push({ method: req.method!, path: req.url!, type: req.headers["content-type"], body });
      const json = (status: number, payload: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(payload));
      };
      // Discovery, as the generic object API asks for it.
      if (req.method === "GET" && (path === "/api/v1" || path === "/apis/apps/v1")) {
        const resources =
          path === "/api/v1"
            ? [
                { name: "secrets", kind: "Secret", namespaced: true, singularName: "", verbs: [] },
                { name: "services", kind: "Service", namespaced: true, singularName: "", verbs: [] },
              ]
            : [{ name: "deployments", kind: "Deployment", namespaced: true, singularName: "", verbs: [] }];
        return json(200, {
          kind: "APIResourceList",
          apiVersion: "v1",
          groupVersion: path.slice(path.indexOf("/", 1) + 1),
          resources,
        });
      }
      if (req.method === "PATCH") {
        const obj = { ...body, metadata: { ...body.metadata, generation: 1 } };
        if (obj.kind === "Deployment") {
          const n = obj.spec.replicas;
          obj.status = {
            observedGeneration: 1,
            replicas: n,
            updatedReplicas: n,
            availableReplicas: n,
            readyReplicas: n,
          };
        }
        store.set(path, obj);
        return json(200, obj);
      }
      if (req.method === "GET" && store.has(path)) return json(200, store.get(path));
      if (req.method === "DELETE") {
        if (!store.delete(path))
          return json(404, {
            kind: "Status",
            apiVersion: "v1",
            status: "Failure",
            reason: "NotFound",
            code: 404,
          });
        return json(200, { kind: "Status", apiVersion: "v1", status: "Success" });
      }
      json(404, { kind: "Status", apiVersion: "v1", status: "Failure", reason: "NotFound", code: 404 });
    });
    url = await listen(server);
  });
  afterAll(() => new Promise<void>((res) => server.close(() => res())));

  it("applies a revision's objects with server-side apply, waits for the roll-out, deletes them", async () => {
    const dir = tempDir("hangar-kubeconfig-");
    const kubeconfig = join(dir, "config");
    writeFileSync(
      kubeconfig,
      yaml.dump({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "fake", cluster: { server: url, "insecure-skip-tls-verify": true } }],
        users: [{ name: "me", user: { token: "t" } }],
        contexts: [{ name: "fake", context: { cluster: "fake", user: "me", namespace: "agents" } }],
        "current-context": "fake",
      }),
    );
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(kubeconfig);
    const runtime = new K8sRuntime({
      cluster: new KubeCluster({ kubeConfig: kc, log: arrayLogger([]) }),
      namespace: () => "agents",
      image: "x",
      log: () => {},
    });
    const d = deployment({ secrets: [{ name: "A", value: "b" }] });
    const r = revision(d);
    const objects = renderRevision({
      deployment: d,
      revision: r,
      secrets: [{ name: "A", value: "b" }],
      namespace: "agents",
      image: "x",
    });
    const short = d.id.replace(/-/g, "").slice(0, 12);

    const inst = await runtime.start(d, r);
    expect(inst.url).toBe(`http://hangar-${short}-api.agents.svc.cluster.local`);
    expect(runtime.running()).toEqual([inst]);
    const patches = calls.filter((c) => c.method === "PATCH");
    expect(patches.map((c) => c.path)).toEqual([
      `/api/v1/namespaces/agents/secrets/hangar-${short}-env?fieldManager=hangar-listener&force=true`,
      `/apis/apps/v1/namespaces/agents/deployments/hangar-${short}-all?fieldManager=hangar-listener&force=true`,
      `/api/v1/namespaces/agents/services/hangar-${short}-api?fieldManager=hangar-listener&force=true`,
    ]);
    for (const p of patches) {
      expect(p.type).toBe("application/apply-patch+yaml");
      expectValidObject(p.body);
    }
    expect(patches.map((p) => p.body)).toEqual(wire(objects));
    // The other topology's Deployments are pruned (absent here: 404 is fine), the roll-out is read.
    expect(calls.filter((c) => c.method === "DELETE").map((c) => c.path.split("/").pop())).toEqual([
      `hangar-${short}-api`,
      `hangar-${short}-workers`,
    ]);
    expect(calls.some((c) => c.method === "GET" && c.path.endsWith(`/deployments/hangar-${short}-all`))).toBe(
      true,
    );

    calls.length = 0;
    await runtime.remove(d);
    expect(runtime.running()).toEqual([]);
    expect(
      calls.filter((c) => c.method === "DELETE").map((c) => c.path.split("/").slice(-2).join("/")),
    ).toEqual([
      `services/hangar-${short}-api`,
      `deployments/hangar-${short}-api`,
      `deployments/hangar-${short}-workers`,
      `deployments/hangar-${short}-all`,
      `secrets/hangar-${short}-env`,
      `secrets/hangar-${short}-pull`,
    ]);
    expect(store.size).toBe(0);
  });

  it("applies a new revision over the live one, rolls back while the switch is not committed", async () => {
    const applied: string[] = [];
    const deleted: string[] = [];
    const failing = new Set<string>();
    const revOf = (objects: HangarObject[]) => objects[0].metadata!.labels![LABELS.revisionId];
    const runtime = new K8sRuntime({
      cluster: {
        apply: async (objects) => {
          applied.push(revOf(objects));
          if (failing.has(revOf(objects))) throw new Error("ImagePullBackOff");
        },
        delete: async (id) => void deleted.push(id),
      },
      namespace: () => "agents",
      image: "x",
      log: () => {},
    });
    const d = deployment();
    const [r1, r2, r3, r4] = [revision(d), revision(d), revision(d), revision(d)];
    const i1 = await runtime.start(d, r1);
    await runtime.takeOver(i1);
    // Stopping the predecessor after a switch leaves the objects (they are the new revision's).
    const i2 = await runtime.start(d, r2);
    expect(runtime.running()).toEqual([i2]);
    await runtime.stop(d.id, r1.id);
    await runtime.takeOver(i2);
    // A start that fails rolls back to the live revision.
    failing.add(r3.id);
    await expect(runtime.start(d, r3)).rejects.toThrow("roll-out failed: ImagePullBackOff");
    expect(runtime.running()).toEqual([i2]);
    // A revision stopped before the switch is committed (superseded): rolled back too.
    await runtime.start(d, r4);
    await runtime.stop(d.id, r4.id);
    expect(runtime.running()).toEqual([i2]);
    expect(applied).toEqual([r1.id, r2.id, r3.id, r2.id, r4.id, r2.id]);
    expect(deleted).toEqual([]);
    // The live revision stopped, nothing to roll back to (deployment gone from the listener): its objects go.
    await runtime.stop(d.id, r2.id);
    expect(deleted).toEqual([d.id]);
    expect(runtime.running()).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Against the real control plane: a listener, an external_docker deployment assigned to it, --dry-run.

describe("hangar listener against hangar control-plane", () => {
  let cpProc: CpProcess;
  const key = `hk-${randomUUID()}`;
  beforeAll(async () => {
    cpProc = await startCp({
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: key, HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise" },
    });
  });
  afterAll(() => cpProc?.stop());

  it("prints the objects of the deployment assigned to the listener", async () => {
    const api = cpClient(cpProc.url, { "X-Api-Key": key });
    const l = await api.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: `cluster-${randomUUID()}`,
      compute_config: { k8s_namespaces: ["agents"] },
    });
    expect(l.status, JSON.stringify(l.body)).toBe(201);
    const d = await api.post("/v2/deployments", {
      name: `listener-${randomUUID().slice(0, 8)}`,
      source: "external_docker",
      source_config: { listener_id: l.body.id, deployment_type: "dev" },
      source_revision_config: { image_uri: "registry.example.com/agent:1" },
      secrets: [{ name: "OPENAI_API_KEY", value: "sk-real" }],
    });
    expect(d.status, JSON.stringify(d.body)).toBe(201);

    const out = await runListenerCli([
      "--control-plane",
      cpProc.url,
      "--api-key",
      key,
      "--listener-id",
      l.body.id,
      "--dry-run",
      "--once",
    ]);
    expect(out.code, out.stderr).toBe(0);
    const docs = documents(out.stdout);
    expect(docs.map((o) => o.kind)).toEqual(["Secret", "Deployment", "Service"]);
    docs.forEach(expectValidObject);
    for (const o of docs) {
      expect(o.metadata.namespace).toBe("agents");
      expect(o.metadata.labels[LABELS.deploymentId]).toBe(d.body.id);
      expect(o.metadata.labels[LABELS.revisionId]).toBe(d.body.latest_revision_id);
    }
    expect(decode(docs[0].data)).toEqual({ OPENAI_API_KEY: "sk-real" });
    expect(docs[1].spec.template.spec.containers[0].image).toBe("registry.example.com/agent:1");
    // Nothing reported: the revision is still QUEUED.
    const rev = await api.get(`/v2/deployments/${d.body.id}/revisions/${d.body.latest_revision_id}`);
    expect(rev.body.status).toBe("QUEUED");

    // Rolled out (on a cluster stand-in) by the listener's reconcile loop: the control plane takes the reports.
    const applied: string[] = [];
    const removed: string[] = [];
    const reconciler = listenerReconciler({
      client: new ControlPlaneClient({ url: cpProc.url, apiKey: key, listenerId: l.body.id }),
      cluster: {
        apply: async (objects) => void applied.push(...objects.map((o) => o.kind!)),
        delete: async (id) => void removed.push(id),
      },
      image: "unused",
      log: arrayLogger([]),
    });
    await reconciler.once();
    expect(applied).toEqual(["Secret", "Deployment", "Service"]);
    const after = await api.get(`/v2/deployments/${d.body.id}/revisions/${d.body.latest_revision_id}`);
    expect(after.body.status).toBe("DEPLOYED");
    const live = (await api.get(`/v2/deployments/${d.body.id}`)).body;
    expect(live.active_revision_id).toBe(d.body.latest_revision_id);
    expect(live.status).toBe("READY");
    const logs = await api.post(`/v1/projects/${d.body.id}/deploy_logs`, { limit: 100, order: "asc" });
    const messages = logs.body.logs.map((x: any) => x.message);
    expect(messages).toContain(
      `Revision ${d.body.latest_revision_id} rolled out; in-cluster URL ${serviceUrl(d.body.id, "agents")}`,
    );
    expect(messages).toContain(`Revision ${d.body.latest_revision_id} deployed`);

    // Deleted: the listener deletes the objects and tells the control plane, which forgets the deployment.
    expect((await api.del(`/v2/deployments/${d.body.id}`)).status).toBeLessThan(300);
    await reconciler.once();
    await reconciler.stop();
    expect(removed).toEqual([d.body.id]);
    const left = await cpClient(cpProc.url, { "X-Api-Key": key }).get(
      `/v2/listeners/${l.body.id}/assignments`,
    );
    expect(left.body.resources).toEqual([]);
  });

  it("a source deployment names a listener only when the control plane builds images (HANGAR_CP_IMAGE_REGISTRY)", async () => {
    const api = cpClient(cpProc.url, { "X-Api-Key": key });
    const l = await api.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: `cluster-${randomUUID()}`,
      compute_config: { k8s_namespaces: ["agents"] },
    });
    const upload = await api.post("/v2/uploads/upload-url");
    const d = await api.post("/v2/deployments", {
      name: `source-${randomUUID().slice(0, 8)}`,
      source: "internal_source",
      source_config: { listener_id: l.body.id, deployment_type: "dev" },
      source_revision_config: {
        langgraph_config_path: "langgraph.json",
        source_tarball_path: upload.body.source_tarball_path,
      },
      secrets: [],
    });
    expect(d.status, JSON.stringify(d.body)).toBe(422);
    expect(d.body.detail[0].loc).toEqual(["body", "source_config", "listener_id"]);
    expect(d.body.detail[0].msg).toContain("HANGAR_CP_IMAGE_REGISTRY is not set");
  });
});
