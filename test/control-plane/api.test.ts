// The control plane API through the real CLI: auth schemes and tenants, listeners (every rule and error of
// the seed's sections 2 and 7), deployments and revisions, logs and the listener-side extension. No
// reconciler runs: revisions stay QUEUED.
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, ROOT } from "../helpers/server.ts";
import {
  cpClient,
  cpTenancy,
  startCp,
  type CpClient,
  type CpProcess,
  type CpResponse,
} from "../helpers/control-plane.ts";

const KEY_A = "test-key-workspace-a";
let cp: CpProcess;
/** Workspace A (bootstrap, self_hosted_enterprise), B (same organization), P (an organization on plus). */
let wsA: string;
let wsB: string;
let wsP: string;
let orgE: string;
let keyB: string;
let keyP: string;
let orgKey: string;
let a: CpClient;
let b: CpClient;
let p: CpClient;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  cp = await startCp({
    env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY_A, HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise" },
  });
  wsA = /workspace "default": ([0-9a-f-]{36})/.exec(cp.output())![1];
  orgE = /organization "default" \(([0-9a-f-]{36})/.exec(cp.output())![1];
  // Tenants made on the running control plane's store (the admin CLI itself: admin.test.ts).
  const admin = cpTenancy(cp.dataDir);
  wsB = await admin.createWorkspace(orgE, "b");
  keyB = await admin.createKey({ workspaceId: wsB });
  orgKey = await admin.createKey({ orgId: orgE });
  const orgP = await admin.createOrg("plus-org", "plus");
  wsP = await admin.createWorkspace(orgP, "p");
  keyP = await admin.createKey({ workspaceId: wsP });
  a = cpClient(cp.url, { "X-Api-Key": KEY_A });
  b = cpClient(cp.url, { "X-Api-Key": keyB });
  p = cpClient(cp.url, { "X-Api-Key": keyP });
});

afterAll(async () => {
  await cp?.stop();
  if (cp) cleanupDir(cp.dataDir);
});

/** A 422 HTTPValidationError with one item at `loc` whose message contains `msg`. */
function expectInvalid(r: CpResponse, loc: (string | number)[], msg: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.detail).toHaveLength(1);
  expect(r.body.detail[0]).toMatchObject({ type: "value_error", loc });
  expect(r.body.detail[0].msg).toContain(msg);
}

const githubBody = (name: string, extra: Record<string, any> = {}) => ({
  name,
  source: "github",
  source_config: { repo_url: "https://github.com/example/agent.git", ...(extra.source_config ?? {}) },
  source_revision_config: {
    langgraph_config_path: "langgraph.json",
    ...(extra.source_revision_config ?? {}),
  },
  secrets: extra.secrets ?? [{ name: "OPENAI_API_KEY", value: "sk-secret" }],
});

describe("auth", () => {
  it("needs a key: 401 {detail} without one or with an unknown one; /ok and /openapi.json are open", async () => {
    const none = await cpClient(cp.url).get("/v2/deployments");
    expect(none.status).toBe(401);
    expect(typeof none.body.detail).toBe("string");
    const bad = await cpClient(cp.url, { "X-Api-Key": "nope" }).get("/v2/deployments");
    expect(bad.status).toBe(401);
    expect(typeof bad.body.detail).toBe("string");
    const badBearer = await cpClient(cp.url, { Authorization: "Bearer nope" }).get("/v2/listeners");
    expect(badBearer.status).toBe(401);
    expect((await cpClient(cp.url).get("/ok")).body).toEqual({ ok: true });
    const doc = await cpClient(cp.url).get("/openapi.json");
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(["/v2/deployments", "/v2/listeners/{listener_id}", "/v2/uploads/{token}"]),
    );
  });

  it("takes X-Api-Key or Authorization: Bearer", async () => {
    expect((await a.get("/v2/deployments")).status).toBe(200);
    expect((await cpClient(cp.url, { Authorization: `Bearer ${KEY_A}` }).get("/v2/deployments")).status).toBe(
      200,
    );
  });

  it("a workspace key with X-Tenant-Id: its own workspace passes, another is 403", async () => {
    const own = cpClient(cp.url, { "X-Api-Key": KEY_A, "X-Tenant-Id": wsA });
    expect((await own.get("/v2/deployments")).status).toBe(200);
    const other = await cpClient(cp.url, { "X-Api-Key": KEY_A, "X-Tenant-Id": wsB }).get("/v2/deployments");
    expect(other.status).toBe(403);
    expect(typeof other.body.detail).toBe("string");
  });

  it("an organization key needs X-Tenant-Id when it reaches several workspaces, and reaches only its own", async () => {
    // 403 with the official wording, which the official CLI recognises ("requires workspace specification").
    const missing = await cpClient(cp.url, { "X-Api-Key": orgKey }).get("/v2/deployments");
    expect(missing.status).toBe(403);
    expect(missing.body.detail).toContain("requires workspace specification");
    expect(missing.body.detail).toContain("X-Tenant-Id");

    const name = `org-key-${randomUUID()}`;
    const inB = cpClient(cp.url, { Authorization: `Bearer ${orgKey}`, "X-Tenant-Id": wsB });
    const created = await inB.post("/v2/deployments", githubBody(name));
    expect(created.status).toBe(201);
    expect(created.body.tenant_id).toBe(wsB);
    expect((await b.get(`/v2/deployments/${created.body.id}`)).status).toBe(200);
    expect((await a.get(`/v2/deployments/${created.body.id}`)).status).toBe(404);

    const wrong = await cpClient(cp.url, { "X-Api-Key": orgKey, "X-Tenant-Id": wsP }).get("/v2/deployments");
    expect(wrong.status).toBe(403);
    expect(typeof wrong.body.detail).toBe("string");
  });

  it("an organization key of a single-workspace organization needs no X-Tenant-Id", async () => {
    const admin = cpTenancy(cp.dataDir);
    const orgId = await admin.createOrg("solo", "plus");
    const ws = await admin.createWorkspace(orgId, "only");
    const key = await admin.createKey({ orgId });
    const c = cpClient(cp.url, { "X-Api-Key": key });
    const created = await c.post("/v2/deployments", githubBody("solo"));
    expect(created.status).toBe(201);
    expect(created.body.tenant_id).toBe(ws);
  });
});

describe("listeners", () => {
  const body = (computeId: string) => ({
    version: "0.1.0",
    compute_type: "k8s",
    compute_id: computeId,
    compute_config: { k8s_namespaces: ["agents"] },
  });

  it("create, get, list with paging", async () => {
    const c1 = await a.post("/v2/listeners", body(`cluster-${randomUUID()}`));
    expect(c1.status).toBe(201);
    expect(c1.body).toMatchObject({
      version: "0.1.0",
      compute_type: "k8s",
      compute_config: { k8s_namespaces: ["agents"] },
    });
    expect(c1.body.id).toMatch(UUID);
    expect(c1.body.created_at).toBeTruthy();
    expect(c1.body.updated_at).toBeTruthy();
    const c2 = await a.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: `c-${randomUUID()}`,
      compute_config: {},
    });
    expect(c2.status).toBe(201);
    expect(c2.body.version).toBeNull();
    expect(c2.body.compute_config).toEqual({ k8s_namespaces: null });

    expect((await a.get(`/v2/listeners/${c1.body.id}`)).body).toEqual(c1.body);
    const page1 = await a.get("/v2/listeners?limit=1");
    expect(page1.status).toBe(200);
    expect(page1.body.resources).toHaveLength(1);
    expect(page1.body.offset).toBe(1);
    const page2 = await a.get(`/v2/listeners?limit=1&offset=${page1.body.offset}`);
    expect(page2.body.resources).toHaveLength(1);
    expect(page2.body.offset).toBe(2);
    expect(page2.body.resources[0].id).not.toBe(page1.body.resources[0].id);
    const all = await a.get("/v2/listeners");
    expect(all.body.resources.map((l: any) => l.id)).toEqual(
      expect.arrayContaining([c1.body.id, c2.body.id]),
    );

    for (const q of ["limit=0", "limit=101", "offset=-1", "limit=x"]) {
      const r = await a.get(`/v2/listeners?${q}`);
      expect(r.status, q).toBe(422);
      expect(r.body.detail[0].loc[0]).toBe("query");
    }
  });

  it("409 for a compute_id already used in the workspace; another workspace may use it", async () => {
    const computeId = `dup-${randomUUID()}`;
    expect((await a.post("/v2/listeners", body(computeId))).status).toBe(201);
    const dup = await a.post("/v2/listeners", body(computeId));
    expect(dup.status).toBe(409);
    expect(dup.body).toEqual({
      detail: `Listener for workspace ID '${wsA}' and compute ID '${computeId}' already exists.`,
    });
    const inB = await cpClient(cp.url, { "X-Api-Key": orgKey, "X-Tenant-Id": wsB }).post(
      "/v2/listeners",
      body(computeId),
    );
    expect(inB.status).toBe(201);
  });

  it("422 HTTPValidationError for a malformed listener_id", async () => {
    const r = await a.get("/v2/listeners/not-a-uuid");
    expect(r.status).toBe(422);
    expect(r.body).toEqual({
      detail: [
        {
          type: "uuid_parsing",
          loc: ["path", "listener_id"],
          msg: "Input should be a valid UUID, invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1",
          input: "not-a-uuid",
          ctx: {
            error:
              "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found `n` at 1",
          },
        },
      ],
    });
    for (const method of ["patch", "put", "del"] as const) {
      const res = await a[method](
        "/v2/listeners/1234",
        method === "del" ? undefined : { compute_config: {} },
      );
      expect(res.status, method).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", "listener_id"] });
    }
  });

  it("422 for bad bodies: compute_type literal, compute_id missing, k8s_namespaces items", async () => {
    const badType = await a.post("/v2/listeners", {
      compute_type: "ecs",
      compute_id: "x",
      compute_config: {},
    });
    expect(badType.status).toBe(422);
    expect(badType.body.detail).toEqual([
      {
        type: "literal_error",
        loc: ["body", "compute_type"],
        msg: "Input should be 'k8s'",
        input: "ecs",
        ctx: { expected: "'k8s'" },
      },
    ]);
    const missing = await a.post("/v2/listeners", { compute_type: "k8s", compute_config: {} });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([
      {
        type: "missing",
        loc: ["body", "compute_id"],
        msg: "Field required",
        input: { compute_type: "k8s", compute_config: {} },
      },
    ]);
    const noConfig = await a.post("/v2/listeners", { compute_type: "k8s", compute_id: "x" });
    expect(noConfig.body.detail[0]).toMatchObject({ type: "missing", loc: ["body", "compute_config"] });
    const emptyNs = await a.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: "x",
      compute_config: { k8s_namespaces: ["ok", ""] },
    });
    expect(emptyNs.status).toBe(422);
    expect(emptyNs.body.detail[0]).toMatchObject({
      type: "string_too_short",
      loc: ["body", "compute_config", "k8s_namespaces", 1],
    });
    const notList = await a.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: "x",
      compute_config: { k8s_namespaces: "agents" },
    });
    expect(notList.body.detail[0]).toMatchObject({
      type: "list_type",
      loc: ["body", "compute_config", "k8s_namespaces"],
    });
    const noBody = await a.post("/v2/listeners");
    expect(noBody.status).toBe(422);
    expect(noBody.body.detail[0]).toMatchObject({ type: "missing", loc: ["body"] });
    const badJson = await a.post("/v2/listeners", "{nope");
    expect(badJson.status).toBe(422);
    expect(badJson.body.detail[0]).toMatchObject({ type: "json_invalid", loc: ["body", 1] });
  });

  it("404 with the exact detail for a missing listener, and for another workspace's", async () => {
    const id = randomUUID();
    for (const r of [
      await a.get(`/v2/listeners/${id}`),
      await a.patch(`/v2/listeners/${id}`, { version: "2" }),
      await a.put(`/v2/listeners/${id}`, { compute_config: {} }),
      await a.del(`/v2/listeners/${id}`),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ detail: `Listener ID ${id} not found.` });
    }
    const mine = (await a.post("/v2/listeners", body(`iso-${randomUUID()}`))).body;
    for (const r of [
      await b.get(`/v2/listeners/${mine.id}`),
      await b.patch(`/v2/listeners/${mine.id}`, { version: "2" }),
      await b.put(`/v2/listeners/${mine.id}`, { compute_config: {} }),
      await b.del(`/v2/listeners/${mine.id}`),
      await b.get(`/v2/listeners/${mine.id}/assignments`),
    ]) {
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ detail: `Listener ID ${mine.id} not found.` });
    }
    expect((await a.get(`/v2/listeners/${mine.id}`)).status).toBe(200);
  });

  it("PATCH changes version and compute_config; PUT replaces them and cannot change compute_type or compute_id", async () => {
    const computeId = `upd-${randomUUID()}`;
    const l = (await a.post("/v2/listeners", body(computeId))).body;
    const patched = await a.patch(`/v2/listeners/${l.id}`, { version: "0.2.0" });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ version: "0.2.0", compute_config: { k8s_namespaces: ["agents"] } });
    const patched2 = await a.patch(`/v2/listeners/${l.id}`, {
      compute_config: { k8s_namespaces: ["a", "b"] },
    });
    expect(patched2.body).toMatchObject({ version: "0.2.0", compute_config: { k8s_namespaces: ["a", "b"] } });

    const put = await a.put(`/v2/listeners/${l.id}`, { compute_config: { k8s_namespaces: null } });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      version: null,
      compute_id: computeId,
      compute_config: { k8s_namespaces: null },
    });
    const same = await a.put(`/v2/listeners/${l.id}`, {
      version: "1",
      compute_type: "k8s",
      compute_id: computeId,
      compute_config: { k8s_namespaces: ["x"] },
    });
    expect(same.status).toBe(200);
    expect(same.body).toMatchObject({ version: "1", compute_config: { k8s_namespaces: ["x"] } });

    const newId = await a.put(`/v2/listeners/${l.id}`, { compute_id: "other", compute_config: {} });
    expect(newId.status).toBe(422);
    expect(newId.body.detail).toHaveLength(1);
    expect(newId.body.detail[0]).toMatchObject({ loc: ["body", "compute_id"], type: "value_error" });
    expect(typeof newId.body.detail[0].msg).toBe("string");
    const newType = await a.put(`/v2/listeners/${l.id}`, { compute_type: "ecs", compute_config: {} });
    expect(newType.status).toBe(422);
    expect(newType.body.detail[0]).toMatchObject({ loc: ["body", "compute_type"], type: "literal_error" });
    const after = (await a.get(`/v2/listeners/${l.id}`)).body;
    expect(after).toMatchObject({ compute_type: "k8s", compute_id: computeId, version: "1" });
  });

  it("DELETE 204, then 404", async () => {
    const l = (await a.post("/v2/listeners", body(`del-${randomUUID()}`))).body;
    const d = await a.del(`/v2/listeners/${l.id}`);
    expect(d.status).toBe(204);
    expect((await a.get(`/v2/listeners/${l.id}`)).status).toBe(404);
  });

  it("403 naming the workspace id on every listener route when the organization is not self_hosted_enterprise", async () => {
    const id = randomUUID();
    const responses = [
      await p.get("/v2/listeners"),
      await p.post("/v2/listeners", body("c")),
      await p.get(`/v2/listeners/${id}`),
      await p.patch(`/v2/listeners/${id}`, { version: "1" }),
      await p.put(`/v2/listeners/${id}`, { compute_config: {} }),
      await p.del(`/v2/listeners/${id}`),
      await p.get(`/v2/listeners/${id}/assignments`),
    ];
    for (const r of responses) {
      expect(r.status).toBe(403);
      expect(Object.keys(r.body)).toEqual(["detail"]);
      expect(r.body.detail).toContain(wsP);
    }
    // A self-hosted enterprise workspace of the same server is allowed.
    expect((await a.get("/v2/listeners")).status).toBe(200);
  });
});

describe("deployments", () => {
  it("create: 201 with latest_revision_id (QUEUED), custom_url, type dev, secrets masked", async () => {
    const name = `dep-${randomUUID()}`;
    const r = await a.post("/v2/deployments", githubBody(name));
    expect(r.status).toBe(201);
    const d = r.body;
    expect(d.id).toMatch(UUID);
    expect(d).toMatchObject({
      name,
      source: "github",
      tenant_id: wsA,
      status: "READY",
      active_revision_id: null,
      secrets: [{ name: "OPENAI_API_KEY", value: "********" }],
      source_config: {
        repo_url: "https://github.com/example/agent.git",
        deployment_type: "dev",
        custom_url: `${cp.url}/deployments/${d.id}`,
      },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expect(d.latest_revision_id).toMatch(UUID);
    const rev = await a.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`);
    expect(rev.status).toBe(200);
    expect(rev.body).toMatchObject({ id: d.latest_revision_id, status: "QUEUED", source: "github" });
    const got = await a.get(`/v2/deployments/${d.id}`);
    expect(got.body).toEqual(d);
    expect(JSON.stringify(got.body)).not.toContain("sk-secret");
  });

  it("create: source rules and body validation, each a 422 HTTPValidationError naming the field", async () => {
    const noRepo = await a.post("/v2/deployments", { ...githubBody("x"), source_config: {} });
    expectInvalid(noRepo, ["body", "source_config", "repo_url"], "repo_url is required");
    const relative = await a.post("/v2/deployments", {
      ...githubBody("x"),
      source_config: { repo_url: "some/dir" },
    });
    expectInvalid(relative, ["body", "source_config", "repo_url"], "absolute path");
    const noConfig = await a.post("/v2/deployments", { ...githubBody("x"), source_revision_config: {} });
    expectInvalid(
      noConfig,
      ["body", "source_revision_config", "langgraph_config_path"],
      "langgraph_config_path is required",
    );
    const local = await a.post("/v2/deployments", {
      ...githubBody(`local-${randomUUID()}`),
      source_config: { repo_url: join(ROOT, "examples") },
    });
    expect(local.status).toBe(201);
    // internal_source without its tarball (the official CLI's create): a deployment with no revision yet.
    const noTarball = await a.post("/v2/deployments", {
      name: `no-tarball-${randomUUID()}`,
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: {},
      secrets: [],
    });
    expect(noTarball.status).toBe(201);
    expect(noTarball.body.latest_revision_id).toBeNull();
    expect((await a.get(`/v2/deployments/${noTarball.body.id}/revisions`)).body.resources).toEqual([]);
    // ... whose PATCH needs the tarball to make one.
    const noSource = await a.patch(`/v2/deployments/${noTarball.body.id}`, {
      revision_source: "internal_source",
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expectInvalid(
      noSource,
      ["body", "source_revision_config", "source_tarball_path"],
      "source_tarball_path is required",
    );
    const withImage = await a.post("/v2/deployments", {
      name: "x",
      source: "internal_source",
      source_config: {},
      source_revision_config: { image_uri: "example/agent:1" },
      secrets: [],
    });
    expectInvalid(withImage, ["body", "source_revision_config", "image_uri"], "must be null");
    const forged = await a.post("/v2/deployments", {
      name: "x",
      source: "internal_source",
      source_config: {},
      source_revision_config: { langgraph_config_path: "langgraph.json", source_tarball_path: "/etc/passwd" },
      secrets: [],
    });
    expectInvalid(
      forged,
      ["body", "source_revision_config", "source_tarball_path"],
      "not an uploaded tarball",
    );
    const dockerNoListener = await a.post("/v2/deployments", {
      name: "x",
      source: "external_docker",
      source_config: {},
      source_revision_config: { image_uri: "example/agent:1" },
      secrets: [],
    });
    expectInvalid(dockerNoListener, ["body", "source_config", "listener_id"], "listener_id is required");
    const unknownListener = await a.post("/v2/deployments", {
      name: "x",
      source: "external_docker",
      source_config: { listener_id: randomUUID() },
      source_revision_config: { image_uri: "example/agent:1" },
      secrets: [],
    });
    expectInvalid(unknownListener, ["body", "source_config", "listener_id"], "not found");
    const dupSecret = await a.post("/v2/deployments", {
      ...githubBody("x"),
      secrets: [
        { name: "A", value: "1" },
        { name: "A", value: "2" },
      ],
    });
    expectInvalid(dupSecret, ["body", "secrets", 1, "name"], "more than once");

    const bad = await a.post("/v2/deployments", {
      source: "svn",
      source_config: {},
      source_revision_config: {},
      secrets: [],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: "missing", loc: ["body", "name"], msg: "Field required" }),
        expect.objectContaining({ type: "literal_error", loc: ["body", "source"] }),
      ]),
    );
    const badType = await a.post("/v2/deployments", {
      ...githubBody("x"),
      source_config: { repo_url: "https://x/y.git", deployment_type: "staging" },
    });
    expect(badType.status).toBe(422);
    expect(badType.body.detail[0]).toMatchObject({
      type: "literal_error",
      loc: ["body", "source_config", "deployment_type"],
    });
    const badSecret = await a.post("/v2/deployments", { ...githubBody("x"), secrets: [{ name: "A" }] });
    expect(badSecret.body.detail[0]).toMatchObject({ type: "missing", loc: ["body", "secrets", 0, "value"] });
  });

  it("a repo_url or repo_ref beginning with '-' (an option to git) is a 422 naming the field, on create and PATCH", async () => {
    // Each matched the git URL pattern: `-u<cmd>@host:path` would reach `git clone` as its --upload-pack.
    for (const repo_url of ["-utouch@host:path", "--upload-pack=x@host:y", "-c"]) {
      const r = await a.post("/v2/deployments", {
        ...githubBody(`dash-${randomUUID()}`),
        source_config: { repo_url },
      });
      expectInvalid(r, ["body", "source_config", "repo_url"], "must not begin with '-'");
      expect(r.body.detail[0].input).toBe(repo_url);
    }
    const ref = await a.post(
      "/v2/deployments",
      githubBody(`dash-${randomUUID()}`, { source_revision_config: { repo_ref: "--orphan" } }),
    );
    expectInvalid(ref, ["body", "source_revision_config", "repo_ref"], "must not begin with '-'");
    const d = (await a.post("/v2/deployments", githubBody(`dash-${randomUUID()}`))).body;
    const patched = await a.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "-b" } });
    expectInvalid(patched, ["body", "source_revision_config", "repo_ref"], "must not begin with '-'");
    // Refused before anything is kept: no revision was added.
    expect((await a.get(`/v2/deployments/${d.id}`)).body.latest_revision_id).toBe(d.latest_revision_id);
    // A '-' elsewhere is an ordinary character.
    const fine = await a.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "fix-1" } });
    expect(fine.status).toBe(200);
  });

  it("409 for a name already used in the workspace; another workspace may use it", async () => {
    const name = `same-${randomUUID()}`;
    expect((await a.post("/v2/deployments", githubBody(name))).status).toBe(201);
    const dup = await a.post("/v2/deployments", githubBody(name));
    expect(dup.status).toBe(409);
    expect(typeof dup.body.detail).toBe("string");
    expect((await b.post("/v2/deployments", githubBody(name))).status).toBe(201);
  });

  it("404 with the exact detail, for a missing deployment and another workspace's; 422 for a malformed id", async () => {
    const id = randomUUID();
    const mine = (await a.post("/v2/deployments", githubBody(`iso-${randomUUID()}`))).body;
    for (const [c, target] of [
      [a, id],
      [b, mine.id],
    ] as const) {
      for (const r of [
        await c.get(`/v2/deployments/${target}`),
        await c.patch(`/v2/deployments/${target}`, { secrets: [] }),
        await c.del(`/v2/deployments/${target}`),
        await c.get(`/v2/deployments/${target}/revisions`),
        await c.get(`/v2/deployments/${target}/revisions/${mine.latest_revision_id}`),
        await c.post(`/v2/deployments/${target}/revisions/${mine.latest_revision_id}/redeploy`),
        await c.post(`/v2/deployments/${target}/upload-url`),
        await c.post(`/v1/projects/${target}/deploy_logs`, {}),
      ]) {
        expect(r.status).toBe(404);
        expect(r.body).toEqual({ detail: `Deployment ID ${target} not found.` });
      }
    }
    expect((await b.get(`/v2/deployments?deployment_ids=${mine.id}`)).body.resources).toEqual([]);
    const rev = randomUUID();
    const missingRev = await a.get(`/v2/deployments/${mine.id}/revisions/${rev}`);
    expect(missingRev.status).toBe(404);
    expect(missingRev.body).toEqual({ detail: `Revision ID ${rev} not found.` });
    const malformed = await a.get("/v2/deployments/xyz");
    expect(malformed.status).toBe(422);
    expect(malformed.body.detail[0]).toMatchObject({ type: "uuid_parsing", loc: ["path", "deployment_id"] });
    expect((await a.get(`/v2/deployments/${mine.id}`)).status).toBe(200);
  });

  it("list: filters (name_contains, deployment_type, deployment_ids) and paging", async () => {
    const tag = randomUUID().slice(0, 8);
    const ids: string[] = [];
    for (const [i, type] of ["dev", "prod", "prod"].entries()) {
      const r = await a.post(
        "/v2/deployments",
        githubBody(`list-${tag}-${i}`, { source_config: { deployment_type: type } }),
      );
      expect(r.status).toBe(201);
      ids.push(r.body.id);
    }
    const byName = await a.get(`/v2/deployments?name_contains=${tag}`);
    expect(byName.status).toBe(200);
    expect(byName.body.resources.map((d: any) => d.id).sort()).toEqual([...ids].sort());
    expect(byName.body.offset).toBe(3);
    const prod = await a.get(`/v2/deployments?name_contains=${tag}&deployment_type=prod`);
    expect(prod.body.resources.map((d: any) => d.id).sort()).toEqual(ids.slice(1).sort());
    const byIds = await a.get(`/v2/deployments?deployment_ids=${ids[0]},${ids[2]}`);
    expect(byIds.body.resources.map((d: any) => d.id).sort()).toEqual([ids[0], ids[2]].sort());
    const ready = await a.get(`/v2/deployments?name_contains=${tag}&status=READY`);
    expect(ready.body.resources).toHaveLength(3);
    const none = await a.get(`/v2/deployments?name_contains=${tag}&status=UNUSED`);
    expect(none.body.resources).toHaveLength(0);

    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const page = await a.get(`/v2/deployments?name_contains=${tag}&limit=2&offset=${offset}`);
      expect(page.status).toBe(200);
      seen.push(...page.body.resources.map((d: any) => d.id));
      if (page.body.resources.length < 2) break;
      offset = page.body.offset;
    }
    expect(seen.sort()).toEqual([...ids].sort());
    expect((await a.get("/v2/deployments?deployment_type=staging")).status).toBe(422);
    const badIds = await a.get("/v2/deployments?deployment_ids=nope");
    expect(badIds.status).toBe(422);
    expect(badIds.body.detail[0]).toMatchObject({
      type: "uuid_parsing",
      loc: ["query", "deployment_ids", 0],
    });
  });

  it("PATCH: revision fields or secrets make a new QUEUED revision and skip older queued ones", async () => {
    const d = (await a.post("/v2/deployments", githubBody(`patch-${randomUUID()}`))).body;
    const first = d.latest_revision_id;
    const r1 = await a.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "release" } });
    expect(r1.status).toBe(200);
    expect(r1.body.latest_revision_id).not.toBe(first);
    expect(r1.body.source_revision_config).toMatchObject({
      repo_ref: "release",
      langgraph_config_path: "langgraph.json",
    });
    expect((await a.get(`/v2/deployments/${d.id}/revisions/${first}`)).body.status).toBe("SKIPPED");
    const second = r1.body.latest_revision_id;
    expect((await a.get(`/v2/deployments/${d.id}/revisions/${second}`)).body).toMatchObject({
      status: "QUEUED",
      source_revision_config: { repo_ref: "release" },
    });

    const r2 = await a.patch(`/v2/deployments/${d.id}`, { secrets: [{ name: "NEW", value: "v" }] });
    expect(r2.status).toBe(200);
    expect(r2.body.secrets).toEqual([{ name: "NEW", value: "********" }]);
    expect(r2.body.latest_revision_id).not.toBe(second);
    expect((await a.get(`/v2/deployments/${d.id}/revisions/${second}`)).body.status).toBe("SKIPPED");

    // source_config fields that do not make a revision.
    const r3 = await a.patch(`/v2/deployments/${d.id}`, { source_config: { build_on_push: true } });
    expect(r3.status).toBe(200);
    expect(r3.body.latest_revision_id).toBe(r2.body.latest_revision_id);
    expect(r3.body.source_config.build_on_push).toBe(true);

    // Immutable source_config fields: 422 when changed, fine when repeated.
    const repo = await a.patch(`/v2/deployments/${d.id}`, {
      source_config: { repo_url: "https://x/other.git" },
    });
    expectInvalid(repo, ["body", "source_config", "repo_url"], "cannot be changed");
    const type = await a.patch(`/v2/deployments/${d.id}`, { source_config: { deployment_type: "prod" } });
    expectInvalid(type, ["body", "source_config", "deployment_type"], "cannot be changed");
    const listener = await a.patch(`/v2/deployments/${d.id}`, {
      source_config: { listener_id: randomUUID() },
    });
    expectInvalid(listener, ["body", "source_config", "listener_id"], "cannot be changed");
    const integration = await a.patch(`/v2/deployments/${d.id}`, {
      source_config: { integration_id: randomUUID() },
    });
    expectInvalid(integration, ["body", "source_config", "integration_id"], "cannot be changed");
    const echo = await a.patch(`/v2/deployments/${d.id}`, { source_config: r3.body.source_config });
    expect(echo.status).toBe(200);
    const image = await a.patch(`/v2/deployments/${d.id}`, { source_revision_config: { image_uri: "x:1" } });
    expectInvalid(image, ["body", "source_revision_config", "image_uri"], "must be null");

    const revs = await a.get(`/v2/deployments/${d.id}/revisions`);
    expect(revs.body.resources.map((r: any) => r.status)).toEqual(["QUEUED", "SKIPPED", "SKIPPED"]);
    expect(revs.body.offset).toBe(3);
    const skipped = await a.get(`/v2/deployments/${d.id}/revisions?status=SKIPPED,DEPLOYED`);
    expect(skipped.body.resources.map((r: any) => r.id).sort()).toEqual([first, second].sort());
    const paged = await a.get(`/v2/deployments/${d.id}/revisions?limit=1&offset=1`);
    expect(paged.body.resources.map((r: any) => r.id)).toEqual([second]);
    expect(paged.body.offset).toBe(2);
    const badStatus = await a.get(`/v2/deployments/${d.id}/revisions?status=QUEUED,DONE`);
    expect(badStatus.status).toBe(422);
    expect(badStatus.body.detail[0]).toMatchObject({ type: "literal_error", loc: ["query", "status", 1] });
  });

  it("redeploy: a new revision from an older one's source, returning the deployment", async () => {
    const d = (await a.post("/v2/deployments", githubBody(`redeploy-${randomUUID()}`))).body;
    const first = d.latest_revision_id;
    await a.patch(`/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "next" } });
    const r = await a.post(`/v2/deployments/${d.id}/revisions/${first}/redeploy`);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(d.id);
    expect(r.body.latest_revision_id).not.toBe(first);
    const rev = (await a.get(`/v2/deployments/${d.id}/revisions/${r.body.latest_revision_id}`)).body;
    expect(rev.status).toBe("QUEUED");
    expect(rev.source_revision_config.repo_ref).toBeNull();
    expect(rev.source_revision_config.langgraph_config_path).toBe("langgraph.json");
    const unknown = randomUUID();
    const missing = await a.post(`/v2/deployments/${d.id}/revisions/${unknown}/redeploy`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ detail: `Revision ID ${unknown} not found.` });
  });

  it("DELETE one (204) and bulk (all or none)", async () => {
    const name = `del-${randomUUID()}`;
    const d = (await a.post("/v2/deployments", githubBody(name))).body;
    const del = await a.del(`/v2/deployments/${d.id}`);
    expect(del.status).toBe(204);
    expect((await a.get(`/v2/deployments/${d.id}`)).status).toBe(404);
    expect((await a.get(`/v2/deployments?deployment_ids=${d.id}`)).body.resources).toEqual([]);
    // The name is free again.
    expect((await a.post("/v2/deployments", githubBody(name))).status).toBe(201);

    const x = (await a.post("/v2/deployments", githubBody(`bulk-${randomUUID()}`))).body;
    const y = (await a.post("/v2/deployments", githubBody(`bulk-${randomUUID()}`))).body;
    const unknown = randomUUID();
    const partial = await a.del(`/v2/deployments?deployment_ids=${x.id},${unknown}`);
    expect(partial.status).toBe(404);
    expect(partial.body).toEqual({ detail: `Deployment ID ${unknown} not found.` });
    expect((await a.get(`/v2/deployments/${x.id}`)).status).toBe(200);
    const other = await b.del(`/v2/deployments?deployment_ids=${x.id}`);
    expect(other.status).toBe(404);
    const bulk = await a.del(`/v2/deployments?deployment_ids=${x.id}&deployment_ids=${y.id}`);
    expect(bulk.status).toBe(200);
    expect((await a.get(`/v2/deployments/${x.id}`)).status).toBe(404);
    expect((await a.get(`/v2/deployments/${y.id}`)).status).toBe(404);
    const noIds = await a.del("/v2/deployments");
    expect(noIds.status).toBe(422);
    expect(noIds.body.detail[0]).toMatchObject({ type: "missing", loc: ["query", "deployment_ids"] });
  });
});

describe("listener deployments, the listener side and logs", () => {
  it("external_docker needs a listener of the workspace; the listener sees its deployments with secrets", async () => {
    const listener = (
      await a.post("/v2/listeners", {
        compute_type: "k8s",
        compute_id: `docker-${randomUUID()}`,
        compute_config: { k8s_namespaces: ["agents"] },
      })
    ).body;
    const body = (name: string, extra: Record<string, any> = {}) => ({
      name,
      source: "external_docker",
      source_config: { listener_id: listener.id, listener_config: { k8s_namespace: "agents" }, ...extra },
      source_revision_config: { image_uri: "example/agent:1" },
      secrets: [{ name: "TOKEN", value: "t0p" }],
    });
    // Another workspace cannot use it; a namespace the listener does not serve is refused.
    const otherWs = await cpClient(cp.url, { "X-Api-Key": orgKey, "X-Tenant-Id": wsB }).post(
      "/v2/deployments",
      body("foreign"),
    );
    expectInvalid(otherWs, ["body", "source_config", "listener_id"], "not found");
    const badNs = await a.post(
      "/v2/deployments",
      body("bad-ns", { listener_config: { k8s_namespace: "other" } }),
    );
    expectInvalid(badNs, ["body", "source_config", "listener_config", "k8s_namespace"], "not one of");
    const custom = await a.post(
      "/v2/deployments",
      body(`docker-custom-${randomUUID()}`, { custom_url: "https://agents.example.com/one" }),
    );
    expect(custom.status).toBe(201);
    expect(custom.body.source_config.custom_url).toBe("https://agents.example.com/one");

    const created = await a.post("/v2/deployments", body(`docker-${randomUUID()}`));
    expect(created.status).toBe(201);
    const d = created.body;
    expect(d.secrets).toEqual([{ name: "TOKEN", value: "********" }]);
    // The control plane does not serve a listener's deployment: no URL until the listener reports its cluster's.
    expect(d.source_config.custom_url).toBeNull();

    // A listener with deployments cannot be deleted.
    expect((await a.del(`/v2/listeners/${listener.id}`)).status).toBe(409);

    const assignments = await a.get(`/v2/listeners/${listener.id}/assignments`);
    expect(assignments.status).toBe(200);
    const mine = assignments.body.resources.find((r: any) => r.id === d.id);
    expect(mine).toMatchObject({
      secrets: [{ name: "TOKEN", value: "t0p" }],
      deleted_at: null,
      latest_revision: { id: d.latest_revision_id, status: "QUEUED" },
      active_revision: null,
    });

    // PATCH with the masked value keeps the stored secret.
    const patched = await a.patch(`/v2/deployments/${d.id}`, {
      secrets: [
        { name: "TOKEN", value: "********" },
        { name: "MORE", value: "m" },
      ],
    });
    expect(patched.status).toBe(200);
    const again = (await a.get(`/v2/listeners/${listener.id}/assignments`)).body.resources.find(
      (r: any) => r.id === d.id,
    );
    expect(again.secrets).toEqual([
      { name: "TOKEN", value: "t0p" },
      { name: "MORE", value: "m" },
    ]);
    const rev = patched.body.latest_revision_id;

    // The listener's switch names the address its cluster serves the deployment at: the deployment's URL, unless
    // its user gave one; a bad URL is refused.
    const inCluster = `http://hangar-x-api.agents.svc.cluster.local:8000`;
    const switched = await a.patch(`/v2/listeners/${listener.id}/assignments/${d.id}`, { url: inCluster });
    expect(switched.status).toBe(200);
    expect((await a.get(`/v2/deployments/${d.id}`)).body.source_config.custom_url).toBe(inCluster);
    await a.patch(`/v2/listeners/${listener.id}/assignments/${custom.body.id}`, { url: inCluster });
    expect((await a.get(`/v2/deployments/${custom.body.id}`)).body.source_config.custom_url).toBe(
      "https://agents.example.com/one",
    );
    // A URL naming this control plane's router (as deployments made before listeners reported theirs had) is not
    // the deployment's own: the listener's replaces it.
    const older = (await a.post("/v2/deployments", body(`docker-older-${randomUUID()}`))).body;
    const routerUrl = `${cp.url}/deployments/${older.id}`;
    expect(
      (await a.patch(`/v2/deployments/${older.id}`, { source_config: { custom_url: routerUrl } })).status,
    ).toBe(200);
    expect((await a.get(`/v2/deployments/${older.id}`)).body.source_config.custom_url).toBe(routerUrl);
    await a.patch(`/v2/listeners/${listener.id}/assignments/${older.id}`, { url: inCluster });
    expect((await a.get(`/v2/deployments/${older.id}`)).body.source_config.custom_url).toBe(inCluster);
    expect((await a.del(`/v2/deployments/${older.id}`)).status).toBe(204);
    expect((await a.del(`/v2/listeners/${listener.id}/assignments/${older.id}`)).status).toBe(204);
    const badUrl = await a.patch(`/v2/listeners/${listener.id}/assignments/${d.id}`, { url: "file:///etc" });
    expect(badUrl.status).toBe(422);
    expect(badUrl.body.detail[0]).toMatchObject({ loc: ["body", "url"], msg: "must be an http(s) URL" });

    // The listener reports: status, then logs.
    const st = await a.post(`/v2/listeners/${listener.id}/revisions/${rev}/status`, { status: "DEPLOYED" });
    expect(st.status).toBe(200);
    expect(st.body).toMatchObject({ id: rev, status: "DEPLOYED" });
    expect((await a.get(`/v2/deployments/${d.id}`)).body.active_revision_id).toBe(rev);
    const badSt = await a.post(`/v2/listeners/${listener.id}/revisions/${rev}/status`, { status: "DONE" });
    expect(badSt.status).toBe(422);

    const t0 = Date.parse("2026-01-01T00:00:00Z");
    const lines = [
      { kind: "build", level: "INFO", message: "build 1" },
      { kind: "build", level: "ERROR", message: "build 2" },
      { kind: "deploy", level: "INFO", message: "deploy 1" },
      { kind: "deploy", level: "WARNING", message: "deploy 2" },
      { kind: "deploy", level: "INFO", message: "deploy 3" },
    ].map((l, i) => ({
      ...l,
      deployment_id: d.id,
      revision_id: rev,
      timestamp: new Date(t0 + i * 1000).toISOString(),
    }));
    const logged = await a.post(`/v2/listeners/${listener.id}/logs`, { lines });
    expect(logged.status).toBe(204);

    const build = await a.post(`/v1/projects/${d.id}/revisions/${rev}/build_logs`, {});
    expect(build.status).toBe(200);
    expect(build.body).toEqual({
      logs: [
        { timestamp: lines[0].timestamp, level: "INFO", message: "build 1", revision_id: rev },
        { timestamp: lines[1].timestamp, level: "ERROR", message: "build 2", revision_id: rev },
      ],
      offset: 2,
    });
    const deploy = await a.post(`/v1/projects/${d.id}/deploy_logs`, { order: "desc", limit: 2 });
    expect(deploy.body.logs.map((l: any) => l.message)).toEqual(["deploy 3", "deploy 2"]);
    expect(deploy.body.offset).toBe(2);
    const next = await a.post(`/v1/projects/${d.id}/deploy_logs`, { order: "desc", limit: 2, offset: 2 });
    expect(next.body.logs.map((l: any) => l.message)).toEqual(["deploy 1"]);
    const warn = await a.post(`/v1/projects/${d.id}/deploy_logs`, { level: "WARNING" });
    expect(warn.body.logs.map((l: any) => l.message)).toEqual(["deploy 2"]);
    const window = await a.post(`/v1/projects/${d.id}/deploy_logs`, {
      start_time: lines[3].timestamp,
      end_time: lines[4].timestamp,
    });
    expect(window.body.logs.map((l: any) => l.message)).toEqual(["deploy 2", "deploy 3"]);
    // A text filter (case-insensitive), and one revision's deploy logs (the official CLI's --revision-id).
    const query = await a.post(`/v1/projects/${d.id}/deploy_logs`, { query: "LOY 3" });
    expect(query.body.logs.map((l: any) => l.message)).toEqual(["deploy 3"]);
    const ofRev = await a.post(`/v1/projects/${d.id}/revisions/${rev}/deploy_logs`, { query: "deploy" });
    expect(ofRev.body.logs.map((l: any) => l.message)).toEqual(["deploy 1", "deploy 2", "deploy 3"]);
    const ofOtherRev = await a.post(`/v1/projects/${d.id}/revisions/${d.latest_revision_id}/deploy_logs`, {});
    expect(ofOtherRev.body.logs).toEqual([]);
    const noBody = await a.post(`/v1/projects/${d.id}/deploy_logs`);
    expect(noBody.status).toBe(200);
    expect(noBody.body.logs).toHaveLength(3);
    const tooMany = await a.post(`/v1/projects/${d.id}/deploy_logs`, { limit: 1001 });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0]).toMatchObject({ type: "less_than_equal", loc: ["body", "limit"] });
    const badOrder = await a.post(`/v1/projects/${d.id}/deploy_logs`, { order: "up" });
    expect(badOrder.body.detail[0]).toMatchObject({ type: "literal_error", loc: ["body", "order"] });
    const missingRev = randomUUID();
    const noRev = await a.post(`/v1/projects/${d.id}/revisions/${missingRev}/build_logs`, {});
    expect(noRev.status).toBe(404);
    expect(noRev.body).toEqual({ detail: `Revision ID ${missingRev} not found.` });

    // Deletion: the listener still sees the deployment (deleted_at set) until it reports it removed.
    expect((await a.del(`/v2/deployments/${d.id}`)).status).toBe(204);
    const deleted = (await a.get(`/v2/listeners/${listener.id}/assignments`)).body.resources.find(
      (r: any) => r.id === d.id,
    );
    expect(deleted.deleted_at).toBeTruthy();
    const notDeleted = await a.del(`/v2/listeners/${listener.id}/assignments/${custom.body.id}`);
    expect(notDeleted.status).toBe(409);
    expect((await a.del(`/v2/listeners/${listener.id}/assignments/${d.id}`)).status).toBe(204);
    const after = (await a.get(`/v2/listeners/${listener.id}/assignments`)).body.resources;
    expect(after.map((r: any) => r.id)).toEqual([custom.body.id]);
  });
});
