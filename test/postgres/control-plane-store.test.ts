// The control plane's store contract, checked on both backends (SQLite in a temp dir; PostgreSQL in a fresh
// random schema, dropped afterwards): ordering, paging, conflicts, deleted deployments, uploads' single use, log
// queries. Then PostgreSQL only: concurrent start-ups (migrations, bootstrap), the one-line connection error,
// and `hangar control-plane` with DATABASE_URL through the CLI.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bootstrap } from "../../src/control-plane/admin.ts";
import { openCpPostgresStore } from "../../src/control-plane/store/postgres.ts";
import { openCpSqliteStore } from "../../src/control-plane/store/sqlite.ts";
import { createLogger } from "../../src/lib/logger.ts";
import {
  CpConflictError,
  type CpStore,
  type Deployment,
  type LogLine,
  type Revision,
} from "../../src/control-plane/domain/types.ts";
import { DATABASE_URL, ident, testPg } from "../helpers/backend.ts";
import { cpAdmin, cpClient, createdKey, startCp, type CpProcess } from "../helpers/control-plane.ts";
import { cleanupDir, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const dirs: string[] = [];
const pgSchemas: string[] = [];
const freshSchema = () => {
  const s = `t_cpstore_${randomUUID().replace(/-/g, "").slice(0, 12)}`;
  pgSchemas.push(s);
  return s;
};

afterAll(async () => {
  const db = testPg();
  await db.connect();
  try {
    for (const s of pgSchemas) await db.query(`DROP SCHEMA IF EXISTS ${ident(s)} CASCADE`);
  } finally {
    await db.end();
  }
  for (const d of dirs) cleanupDir(d);
});

const newDir = () => {
  const d = tempDir("hangar-cp-store-");
  dirs.push(d);
  return d;
};

const BACKENDS: [string, (dataDir: string) => Promise<CpStore>][] = [
  ["sqlite", async (dataDir) => openCpSqliteStore(dataDir)],
  [
    "postgres",
    (dataDir) => openCpPostgresStore({ url: DATABASE_URL, schema: freshSchema(), dataDir, poolSize: 4 }),
  ],
];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(BACKENDS)("CpStore contract: %s", (_name, open) => {
  let store: CpStore;
  let dataDir: string;
  let tenant: string;
  let other: string;

  beforeAll(async () => {
    dataDir = newDir();
    store = await open(dataDir);
    const org = await store.createOrganization("o", "self_hosted_enterprise");
    tenant = (await store.createWorkspace(org.id, "a")).id;
    other = (await store.createWorkspace(org.id, "b")).id;
  });
  afterAll(async () => {
    await store?.close();
  });

  const deployment = (name: string, extra: Partial<Deployment> = {}) =>
    store.createDeployment(
      {
        id: randomUUID(),
        tenant_id: tenant,
        name,
        source: "github",
        source_config: { repo_url: "https://x/y.git", deployment_type: "dev" },
        source_revision_config: { langgraph_config_path: "langgraph.json" },
        secrets: [{ name: "K", value: "v" }],
        status: "READY",
        ...extra,
      },
      {
        id: randomUUID(),
        status: "QUEUED",
        source: "github",
        source_revision_config: { langgraph_config_path: "langgraph.json" },
      },
    );

  const revision = (status: Revision["status"] = "QUEUED") => ({
    id: randomUUID(),
    status,
    source: "github" as const,
    source_revision_config: { langgraph_config_path: "l.json", repo_ref: "main" },
  });

  it("tenancy: organizations, workspaces in creation order, keys by hash only, duplicate keys refused", async () => {
    const org = await store.createOrganization("acme", "plus");
    expect(await store.getOrganization(org.id)).toEqual(org);
    expect(await store.getOrganization(randomUUID())).toBeNull();
    const w1 = await store.createWorkspace(org.id, "one");
    await sleep(2);
    const w2 = await store.createWorkspace(org.id, "two");
    expect(await store.getWorkspace(w1.id)).toEqual(w1);
    expect((await store.listWorkspaces(org.id)).map((w) => w.id)).toEqual([w1.id, w2.id]);
    const key = `key-${randomUUID()}`;
    const k = await store.createApiKey(key, org.id, w1.id);
    expect(k.hash).not.toContain(key);
    expect(await store.findApiKey(key)).toEqual(k);
    expect(await store.findApiKey("nope")).toBeNull();
    await expect(store.createApiKey(key, org.id, null)).rejects.toBeInstanceOf(CpConflictError);
    const orgKey = await store.createApiKey(`org-${randomUUID()}`, org.id, null);
    expect(orgKey.workspace_id).toBeNull();
    expect(await store.countOrganizations()).toBe(2);
  });

  it("deployments: newest first, paging, filters, JSON round trip, name conflicts among live ones only", async () => {
    const a = await deployment("alpha", {
      secret_references: [{ name: "E", secret_name: "s", secret_key: "k" }],
    });
    const b = await deployment("Beta", {
      source_config: { repo_url: "https://x/y.git", deployment_type: "prod", resource_spec: { cpu: 1 } },
    });
    const c = await deployment("gamma");
    expect(a.latest_revision_id).toBeTruthy();
    expect(a.active_revision_id).toBeNull();
    expect(a.secret_references).toEqual([{ name: "E", secret_name: "s", secret_key: "k" }]);
    expect(c.secret_references).toBeNull();
    expect(b.source_config).toEqual({
      repo_url: "https://x/y.git",
      deployment_type: "prod",
      resource_spec: { cpu: 1 },
    });
    expect(await store.getDeployment(tenant, a.id)).toEqual(a);
    expect(await store.getDeployment(other, a.id)).toBeNull();
    const page = { limit: 10, offset: 0 };
    expect((await store.listDeployments(tenant, page)).map((d) => d.name)).toEqual([
      "gamma",
      "Beta",
      "alpha",
    ]);
    expect((await store.listDeployments(tenant, { limit: 1, offset: 1 })).map((d) => d.name)).toEqual([
      "Beta",
    ]);
    expect((await store.listDeployments(tenant, { ...page, name: "beta" })).length).toBe(0);
    expect((await store.listDeployments(tenant, { ...page, name: "Beta" })).map((d) => d.id)).toEqual([b.id]);
    expect((await store.listDeployments(tenant, { ...page, name_contains: "ETA" })).map((d) => d.id)).toEqual(
      [b.id],
    );
    expect((await store.listDeployments(tenant, { ...page, name_contains: "%" })).length).toBe(0);
    expect(
      (await store.listDeployments(tenant, { ...page, deployment_type: "prod" })).map((d) => d.id),
    ).toEqual([b.id]);
    expect((await store.listDeployments(tenant, { ...page, status: "UNUSED" })).length).toBe(0);
    expect(
      (await store.listDeployments(tenant, { ...page, deployment_ids: [a.id, c.id, "x"] })).map((d) => d.id),
    ).toEqual([c.id, a.id]);
    expect(await store.listDeployments(tenant, { ...page, deployment_ids: [] })).toEqual([]);
    expect(await store.listDeployments(other, page)).toEqual([]);

    await expect(deployment("alpha")).rejects.toThrow(
      new CpConflictError("A deployment named 'alpha' already exists."),
    );
    await expect(store.updateDeployment(c.id, { name: "alpha" })).rejects.toThrow(
      "A deployment named 'alpha' already exists.",
    );
    const renamed = await store.updateDeployment(c.id, {
      name: "delta",
      status: "UNUSED",
      secrets: [],
      source_config: { ...c.source_config, build_on_push: true },
    });
    expect(renamed).toMatchObject({ name: "delta", status: "UNUSED", secrets: [], created_at: c.created_at });
    expect(renamed.source_config.build_on_push).toBe(true);
    expect(await store.getDeploymentById(c.id)).toEqual(renamed);
    await expect(store.updateDeployment(randomUUID(), { name: "x" })).rejects.toThrow(/does not exist/);

    // Deleted: out of the API's view, still the reconcilers'; its name is free again.
    const deleted = await store.updateDeployment(a.id, {
      deleted_at: new Date().toISOString(),
      status: "AWAITING_DELETE",
    });
    expect(deleted.deleted_at).toBeTruthy();
    expect(await store.getDeployment(tenant, a.id)).toBeNull();
    expect((await store.getDeploymentById(a.id))?.deleted_at).toBe(deleted.deleted_at);
    expect((await store.listDeployments(tenant, page)).map((d) => d.id)).not.toContain(a.id);
    expect((await store.deploymentsFor(null)).map((d) => d.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    const again = await deployment("alpha");
    expect(again.id).not.toBe(a.id);
    expect(await store.getDeploymentById("not-a-uuid")).toBeNull();
  });

  it("revisions: the latest is the deployment's; newest first, status filter, pending ones skipped", async () => {
    const d = await deployment(`revs-${randomUUID()}`);
    const r2 = await store.addRevision(d.id, revision());
    const r3 = await store.addRevision(d.id, revision("BUILDING"));
    const cur = (await store.getDeploymentById(d.id))!;
    expect(cur.latest_revision_id).toBe(r3.id);
    expect(cur.source_revision_config).toEqual(r3.source_revision_config);
    expect(r3).toMatchObject({ deployment_id: d.id, status: "BUILDING", status_message: null });
    const all = await store.listRevisions(d.id, { limit: 10, offset: 0 });
    expect(all.map((r) => r.id)).toEqual([r3.id, r2.id, d.latest_revision_id]);
    expect((await store.listRevisions(d.id, { limit: 1, offset: 1 })).map((r) => r.id)).toEqual([r2.id]);
    expect(
      (await store.listRevisions(d.id, { limit: 10, offset: 0, status: ["BUILDING", "DEPLOYED"] })).map(
        (r) => r.id,
      ),
    ).toEqual([r3.id]);
    expect(await store.listRevisions(d.id, { limit: 10, offset: 0, status: [] })).toEqual([]);
    expect(await store.getRevision(d.id, r2.id)).toEqual(r2);
    expect(await store.getRevision(randomUUID(), r2.id)).toBeNull();

    const r4 = await store.addRevision(d.id, revision());
    const skipped = await store.skipPendingRevisions(d.id, r4.id);
    expect(skipped).toEqual([d.latest_revision_id, r2.id]);
    expect(await store.getRevision(d.id, r2.id)).toMatchObject({
      status: "SKIPPED",
      status_message: `Superseded by revision ${r4.id}`,
    });
    expect((await store.getRevision(d.id, r3.id))?.status).toBe("BUILDING");
    await store.setRevisionStatus(r3.id, "BUILD_FAILED", "npm install failed");
    expect(await store.getRevision(d.id, r3.id)).toMatchObject({
      status: "BUILD_FAILED",
      status_message: "npm install failed",
    });
    await store.setRevisionStatus(r3.id, "BUILD_FAILED");
    expect((await store.getRevision(d.id, r3.id))?.status_message).toBeNull();
  });

  it("listeners: compute_id unique per workspace, newest first, partial updates, tenant-scoped", async () => {
    const mk = (tenant_id: string, compute_id: string) =>
      store.createListener({
        id: randomUUID(),
        tenant_id,
        version: "1",
        compute_type: "k8s",
        compute_id,
        compute_config: { k8s_namespaces: ["ns"] },
      });
    const l1 = await mk(tenant, "c1");
    const l2 = await mk(tenant, "c2");
    expect(l1).not.toBe("conflict");
    if (l1 === "conflict" || l2 === "conflict") throw new Error("conflict");
    expect(await mk(tenant, "c1")).toBe("conflict");
    expect(await mk(other, "c1")).not.toBe("conflict");
    expect((await store.listListeners(tenant, { limit: 10, offset: 0 })).map((l) => l.id)).toEqual([
      l2.id,
      l1.id,
    ]);
    expect((await store.listListeners(tenant, { limit: 10, offset: 1 })).map((l) => l.id)).toEqual([l1.id]);
    expect(await store.getListener(tenant, l1.id)).toEqual(l1);
    expect(await store.getListener(other, l1.id)).toBeNull();
    const v = await store.updateListener(tenant, l1.id, { version: "2" });
    expect(v).toMatchObject({ version: "2", compute_config: { k8s_namespaces: ["ns"] } });
    const c = await store.updateListener(tenant, l1.id, { compute_config: { k8s_namespaces: null } });
    expect(c).toMatchObject({ version: "2", compute_config: { k8s_namespaces: null } });
    expect(await store.updateListener(tenant, l1.id, { version: null })).toMatchObject({ version: null });
    expect(await store.updateListener(other, l1.id, { version: "x" })).toBeNull();
    expect(await store.deleteListener(other, l1.id)).toBe(false);
    expect(await store.deleteListener(tenant, l1.id)).toBe(true);
    expect(await store.deleteListener(tenant, l1.id)).toBe(false);
  });

  it("uploads: claimed once (also by concurrent PUTs), back to issued on failure, found once done, bound", async () => {
    const future = new Date(Date.now() + 60_000).toISOString();
    const d = await deployment(`up-${randomUUID()}`);
    const up = await store.createUpload({
      id: randomUUID(),
      tenant_id: tenant,
      deployment_id: d.id,
      token_hash: `h-${randomUUID()}`,
      path: `uploads/${d.id}/a.tar.gz`,
      expires_at: future,
    });
    expect(up.state).toBe("issued");
    const claims = await Promise.all([1, 2, 3, 4].map(() => store.claimUpload(up.token_hash)));
    expect(claims.filter(Boolean)).toHaveLength(1);
    expect(claims.find(Boolean)).toEqual({ ...up, state: "uploading" });
    expect(await store.findUpload(tenant, up.path)).toBeNull();
    await store.finishUpload(up.id, false);
    expect(await store.claimUpload(up.token_hash)).toMatchObject({ id: up.id });
    await store.finishUpload(up.id, true);
    expect(await store.claimUpload(up.token_hash)).toBeNull();
    await store.finishUpload(up.id, false); // not uploading: no change
    expect(await store.findUpload(tenant, up.path)).toEqual({ ...up, state: "done" });
    expect(await store.findUpload(other, up.path)).toBeNull();

    const expired = await store.createUpload({
      id: randomUUID(),
      tenant_id: tenant,
      deployment_id: null,
      token_hash: `h-${randomUUID()}`,
      path: "uploads/workspace/x.tar.gz",
      expires_at: new Date(Date.now() - 1000).toISOString(),
    });
    expect(await store.claimUpload(expired.token_hash)).toBeNull();

    const ws = await store.createUpload({
      id: randomUUID(),
      tenant_id: tenant,
      deployment_id: null,
      token_hash: `h-${randomUUID()}`,
      path: "uploads/workspace/y.tar.gz",
      expires_at: future,
    });
    await store.claimUpload(ws.token_hash);
    await store.finishUpload(ws.id, true);
    await store.bindUpload(ws.id, d.id, `uploads/${d.id}/y.tar.gz`);
    expect(await store.findUpload(tenant, "uploads/workspace/y.tar.gz")).toBeNull();
    expect(await store.findUpload(tenant, `uploads/${d.id}/y.tar.gz`)).toMatchObject({ deployment_id: d.id });
  });

  it("logs: in write order, asc or desc, by kind, revision, level and inclusive time window, paged", async () => {
    const d = await deployment(`logs-${randomUUID()}`);
    const rev = d.latest_revision_id!;
    const t = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
    const lines: LogLine[] = [
      { deployment_id: d.id, revision_id: rev, kind: "build", level: "INFO", message: "b1", timestamp: t(1) },
      {
        deployment_id: d.id,
        revision_id: rev,
        kind: "build",
        level: "ERROR",
        message: "b2\0x",
        timestamp: t(2),
      },
      {
        deployment_id: d.id,
        revision_id: null,
        kind: "deploy",
        level: "INFO",
        message: "d1",
        timestamp: t(3),
      },
      {
        deployment_id: d.id,
        revision_id: rev,
        kind: "deploy",
        level: "WARNING",
        message: "d2",
        timestamp: t(3),
      },
      {
        deployment_id: d.id,
        revision_id: rev,
        kind: "deploy",
        level: "INFO",
        message: "d3",
        timestamp: t(1),
      },
    ];
    await store.appendLogs(lines.slice(0, 3));
    await store.appendLogs(lines.slice(3));
    await store.appendLogs([]);
    const q = { limit: 100, offset: 0, order: "asc" as const };
    const msgs = (ls: LogLine[]) => ls.map((l) => l.message);
    expect(msgs(await store.readLogs(d.id, { ...q, kind: "deploy" }))).toEqual(["d1", "d2", "d3"]);
    expect(msgs(await store.readLogs(d.id, { ...q, kind: "deploy", order: "desc" }))).toEqual([
      "d3",
      "d2",
      "d1",
    ]);
    expect(msgs(await store.readLogs(d.id, { ...q, kind: "deploy", limit: 1, offset: 1 }))).toEqual(["d2"]);
    expect(msgs(await store.readLogs(d.id, { ...q, kind: "deploy", revision_id: rev }))).toEqual([
      "d2",
      "d3",
    ]);
    expect(msgs(await store.readLogs(d.id, { ...q, kind: "deploy", level: "WARNING" }))).toEqual(["d2"]);
    expect(
      msgs(await store.readLogs(d.id, { ...q, kind: "deploy", start_time: t(3), end_time: t(3) })),
    ).toEqual(["d1", "d2"]);
    expect(msgs(await store.readLogs(d.id, { ...q, kind: "deploy", end_time: t(2) }))).toEqual(["d3"]);
    const build = await store.readLogs(d.id, { ...q, kind: "build" });
    expect(build[0]).toEqual(lines[0]);
    expect(build[1].message.startsWith("b2")).toBe(true);
    expect(await store.readLogs(randomUUID(), { ...q, kind: "build" })).toEqual([]);
  });

  it("writes at once: each transaction whole, a failed one leaves nothing, reads meanwhile see whole records", async () => {
    const d = await deployment(`together-${randomUUID()}`);
    const revs = Array.from({ length: 6 }, () => revision());
    const reads: Promise<Deployment | null>[] = [];
    const added = await Promise.all(
      revs.map((r) => {
        reads.push(store.getDeploymentById(d.id));
        return store.addRevision(d.id, r);
      }),
    );
    expect(added.map((r) => r.id)).toEqual(revs.map((r) => r.id));
    const listed = await store.listRevisions(d.id, { limit: 20, offset: 0 });
    expect(listed).toHaveLength(7);
    const latest = (await store.getDeploymentById(d.id))!.latest_revision_id;
    expect(revs.map((r) => r.id)).toContain(latest);
    for (const seen of await Promise.all(reads)) {
      expect(listed.map((r) => r.id)).toContain(seen!.latest_revision_id);
    }

    // The same name created at once: one wins; the others conflict, and their first revisions are not kept.
    const name = `same-${randomUUID()}`;
    const attempts = Array.from({ length: 4 }, () => ({ id: randomUUID(), first: revision() }));
    const results = await Promise.allSettled(
      attempts.map((a) =>
        store.createDeployment(
          {
            id: a.id,
            tenant_id: tenant,
            name,
            source: "github",
            source_config: { repo_url: "https://x/y.git", deployment_type: "dev" },
            source_revision_config: {},
            secrets: [],
            status: "READY",
          },
          a.first,
        ),
      ),
    );
    const won = attempts.filter((_, i) => results[i].status === "fulfilled");
    expect(won).toHaveLength(1);
    for (const r of results) {
      if (r.status === "rejected") expect(r.reason).toBeInstanceOf(CpConflictError);
    }
    for (const a of attempts) {
      const kept = a === won[0];
      expect(await store.getDeploymentById(a.id)).toEqual(kept ? expect.objectContaining({ name }) : null);
      expect(await store.getRevision(a.id, a.first.id)).toEqual(kept ? expect.objectContaining({}) : null);
    }
  });

  it("purge removes a deployment's records and its uploaded files", async () => {
    const d = await deployment(`purge-${randomUUID()}`);
    await store.addRevision(d.id, revision());
    await store.appendLogs([
      {
        deployment_id: d.id,
        revision_id: null,
        kind: "deploy",
        level: "INFO",
        message: "x",
        timestamp: new Date().toISOString(),
      },
    ]);
    mkdirSync(join(dataDir, "uploads", d.id), { recursive: true });
    writeFileSync(join(dataDir, "uploads", d.id, "f.tar.gz"), "x");
    await store.updateDeployment(d.id, { deleted_at: new Date().toISOString() });
    await store.purgeDeployment(d.id);
    expect(await store.getDeploymentById(d.id)).toBeNull();
    expect(await store.listRevisions(d.id, { limit: 10, offset: 0 })).toEqual([]);
    expect(await store.readLogs(d.id, { kind: "deploy", limit: 10, offset: 0, order: "asc" })).toEqual([]);
    expect(existsSync(join(dataDir, "uploads", d.id))).toBe(false);
  });
});

describe("CpStore on PostgreSQL only", () => {
  it("control planes starting at once on a fresh schema migrate once and bootstrap once", async () => {
    const schema = freshSchema();
    const dataDir = newDir();
    const stores = await Promise.all(
      [1, 2, 3, 4].map(() => openCpPostgresStore({ url: DATABASE_URL, schema, dataDir, poolSize: 3 })),
    );
    try {
      const env = { bootstrapApiKey: "same-key", bootstrapPlan: "plus" };
      const quiet = createLogger({ level: "silent" });
      const results = await Promise.all(stores.map((s) => bootstrap(s, env, dataDir, quiet)));
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await stores[0].countOrganizations()).toBe(1);
      const db = testPg();
      await db.connect();
      try {
        const { rows } = await db.query(`SELECT version FROM ${ident(schema)}.schema_migrations`);
        expect(rows.map((r) => r.version)).toEqual([1, 2]);
        const idx = await db.query("SELECT indexname FROM pg_indexes WHERE schemaname = $1", [schema]);
        expect(idx.rows.map((r) => r.indexname)).toEqual(
          expect.arrayContaining(["listeners_tenant_compute", "deployments_tenant_name"]),
        );
      } finally {
        await db.end();
      }
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });

  it("an unreachable server is one line naming host and port", async () => {
    const err = await openCpPostgresStore({
      url: "postgres://postgres:secret@127.0.0.1:5999/postgres",
    }).catch((e: Error) => e);
    expect((err as Error).message).toBe("cannot reach PostgreSQL at 127.0.0.1:5999: connect ECONNREFUSED");
  });
});

describe("hangar control-plane with DATABASE_URL", () => {
  let cp: CpProcess | undefined;
  afterAll(async () => {
    await cp?.stop();
    if (cp) cleanupDir(cp.dataDir);
  });

  it("keeps its records in its own schema: bootstrap key, admin commands, a listener and a deployment round trip", async () => {
    cp = await startCp({
      store: "postgres",
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: "pg-boot-key", HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise" },
    });
    await waitFor("the control plane's start-up banner", () => cp!.output().includes("docs:"));
    expect(cp.output()).toMatch(new RegExp(`store: +PostgreSQL at \\S+, schema "${cp.schema}"`));
    expect(existsSync(join(cp.dataDir, "control-plane.db"))).toBe(false);
    const c = cpClient(cp.url, { "X-Api-Key": "pg-boot-key" });
    const l = await c.post("/v2/listeners", { compute_type: "k8s", compute_id: "pg-c1", compute_config: {} });
    expect(l.status).toBe(201);
    expect(
      (await c.post("/v2/listeners", { compute_type: "k8s", compute_id: "pg-c1", compute_config: {} }))
        .status,
    ).toBe(409);
    const d = await c.post("/v2/deployments", {
      name: "pg-dep",
      source: "github",
      source_config: { repo_url: "https://github.com/example/agent.git" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [{ name: "OPENAI_API_KEY", value: "sk" }],
    });
    expect(d.status).toBe(201);
    const got = await c.get(`/v2/deployments/${d.body.id}`);
    expect(got.body).toMatchObject({ name: "pg-dep", latest_revision_id: d.body.latest_revision_id });
    expect(got.body.secrets).toEqual([{ name: "OPENAI_API_KEY", value: "********" }]);
    expect((await c.get(`/v2/deployments/${d.body.id}/revisions`)).body.resources).toHaveLength(1);
    expect((await c.get(`/v2/listeners/${l.body.id}`)).body.compute_id).toBe("pg-c1");

    // The admin commands reach the same store through DATABASE_URL.
    const ws = /workspace "default": ([0-9a-f-]{36})/.exec(cp.output())![1];
    const keyOut = await cpAdmin(cp.dataDir, "create-key", "--workspace", ws);
    expect(keyOut.code, keyOut.output).toBe(0);
    const c2 = cpClient(cp.url, { Authorization: `Bearer ${createdKey(keyOut.output)}` });
    expect((await c2.get("/v2/deployments")).body.resources.map((x: any) => x.id)).toEqual([d.body.id]);

    // Deleting keeps the name free for a new deployment.
    expect((await c.del(`/v2/deployments/${d.body.id}`)).status).toBeLessThan(300);
    expect((await c.get(`/v2/deployments/${d.body.id}`)).status).toBe(404);
  });
});
