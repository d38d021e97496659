// Security of the control plane's data (issue 12, items 1 and 4), through the real `hangar control-plane` on its
// SQLite store (embedded project) or PostgreSQL store (postgres project): secrets encrypted at rest and kept out
// of build logs, local `repo_url`s only under HANGAR_CP_SOURCE_ROOTS with one answer for every refused path,
// uploaded tarballs whose symlinks leave the source or which expand beyond HANGAR_CP_MAX_EXTRACTED_MB refused
// (on upload, and on extraction for a build, whose folder is then removed).
import { randomUUID } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { Client } from "@langchain/langgraph-sdk";
import Database from "better-sqlite3";
import * as tar from "tar";
import { afterAll, describe, expect, it } from "vitest";
import { ident, testPg } from "../helpers/backend.ts";
import {
  CP_STORE,
  cpClient,
  cpSchemaFor,
  cpStoreDump,
  startCp,
  type CpClient,
  type CpProcess,
} from "../helpers/control-plane.ts";
import { cleanupDir, ROOT, tempDir } from "../helpers/server.ts";

const KEY = "cp-security-test-key";
const started: CpProcess[] = [];
const dirs: string[] = [];

afterAll(async () => {
  for (const cp of started) await cp.stop();
  for (const cp of started) cleanupDir(cp.dataDir);
  for (const d of dirs) cleanupDir(d);
});

async function start(env: Record<string, string> = {}, opts: { reconcile?: boolean; dataDir?: string } = {}) {
  const cp = await startCp({
    ...opts,
    env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY, HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise", ...env },
  });
  started.push(cp);
  return { cp, api: cpClient(cp.url, { "X-Api-Key": KEY }) };
}

type Started = Awaited<ReturnType<typeof start>>;
const once = (make: () => Promise<Started>) => {
  let p: Promise<Started> | undefined;
  return () => (p ??= make());
};
/**
 * Control planes shared by the tests that are not about starting one (each asserts on what it created): one
 * serving the API only, and one with the local reconciler and a 2 MB extraction cap (HANGAR_CP_MAX_EXTRACTED_MB).
 */
const plainCp = once(() => start());
const buildingCp = once(() => start({ HANGAR_CP_MAX_EXTRACTED_MB: "2" }, { reconcile: true }));

const dir = (prefix: string) => {
  const d = tempDir(prefix);
  dirs.push(d);
  return d;
};

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls a revision until it leaves the in-progress states; returns it. */
async function settle(api: CpClient, deploymentId: string, revisionId: string): Promise<any> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    const r = await api.get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    expect(r.status).toBe(200);
    const busy = ["CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"];
    if (!busy.includes(r.body.status)) return r.body;
    if (Date.now() > deadline) throw new Error(`revision ${revisionId} still ${r.body.status}`);
    await sleep(250);
  }
}

/** A copy of the example project whose greeting comes only from the environment (no `env` in langgraph.json). */
function exampleProject(): string {
  const project = dir("hangar-cp-sec-project-");
  cpSync(join(ROOT, "examples"), project, { recursive: true });
  const file = join(project, "langgraph.json");
  const config = JSON.parse(readFileSync(file, "utf8"));
  delete config.env;
  writeFileSync(file, JSON.stringify(config, null, 2));
  return project;
}

/** Runs SQL on the stopped control plane's store (its SQLite file, or its PostgreSQL schema). */
async function storeSql(dataDir: string, sql: string, args: unknown[] = []): Promise<void> {
  if (CP_STORE === "sqlite") {
    const db = new Database(join(dataDir, "control-plane.db"));
    try {
      db.prepare(sql.replace(/\$\d+/g, "?")).run(...args);
    } finally {
      db.close();
    }
    return;
  }
  const db = testPg();
  await db.connect();
  try {
    await db.query(`SET search_path TO ${ident(cpSchemaFor(dataDir))}`);
    await db.query(sql, args);
  } finally {
    await db.end();
  }
}

async function listenerDeployment(api: CpClient, secrets: { name: string; value: string }[]) {
  const l = await api.post("/v2/listeners", {
    compute_type: "k8s",
    compute_id: `c-${randomUUID()}`,
    compute_config: {},
  });
  expect(l.status, JSON.stringify(l.body)).toBe(201);
  const listener = l.body;
  const d = await api.post("/v2/deployments", {
    name: `docker-${randomUUID()}`,
    source: "external_docker",
    source_config: { listener_id: listener.id },
    source_revision_config: { image_uri: "example/agent:1" },
    secrets,
  });
  expect(d.status, JSON.stringify(d.body)).toBe(201);
  return { listener, deployment: d.body };
}

const assignedSecrets = async (api: CpClient, listenerId: string, deploymentId: string) =>
  (await api.get(`/v2/listeners/${listenerId}/assignments`)).body.resources.find(
    (r: any) => r.id === deploymentId,
  ).secrets;

describe("secrets at rest", () => {
  // Attack: reading deployments' secrets from the control plane's database (a backup, a read-only DB user, a
  // copied SQLite file), or from the build logs of a build that prints its environment.
  it("are not in the store in plain text, reach the deployment, and are masked in build logs and failure reasons", async () => {
    const { cp, api } = await buildingCp();
    expect(cp.output()).toContain("generated the key that encrypts deployments' secrets");
    const secret = `greeting-${randomUUID()}`;
    const created = await api.post("/v2/deployments", {
      name: "secret-holder",
      source: "github",
      source_config: {
        repo_url: exampleProject(),
        deployment_type: "dev",
        build_command: 'echo "the greeting is $HANGAR_EXAMPLE_GREETING"',
      },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [{ name: "HANGAR_EXAMPLE_GREETING", value: secret }],
    });
    expect(created.status).toBe(201);
    const d = created.body;
    const rev = await settle(api, d.id, d.latest_revision_id);
    expect(rev.status, JSON.stringify(rev)).toBe("DEPLOYED");

    // Delivered: the deployment's graph greets with the secret.
    const client = new Client({ apiUrl: d.source_config.custom_url, callerOptions: { maxRetries: 0 } });
    const replies: string[] = [];
    for (let i = 0; i < 2; i++) {
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, "chat", {
        input: { messages: [{ role: "user", content: "hi" }] },
      })) as { messages: { content: string }[] };
      replies.push(values.messages.at(-1)!.content);
    }
    expect(replies.join(" / ")).toContain(secret);

    // The build printed it; the stored log has the mask instead.
    const logs = await api.post(`/v1/projects/${d.id}/revisions/${d.latest_revision_id}/build_logs`, {});
    const messages = logs.body.logs.map((l: any) => l.message as string);
    expect(messages).toContain("the greeting is ********");
    expect(JSON.stringify(logs.body)).not.toContain(secret);

    // A build failing with the secret as its last line: the revision's reason has the mask instead.
    const failing = await api.patch(`/v2/deployments/${d.id}`, {
      source_config: { build_command: 'echo "$HANGAR_EXAMPLE_GREETING"; exit 3' },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expect(failing.status).toBe(200);
    const failed = await settle(api, d.id, failing.body.latest_revision_id);
    expect(failed.status).toBe("BUILD_FAILED");
    expect(failed.status_message).toBe("build_command failed (exit code 3): ********");

    const raw = await cpStoreDump(cp.dataDir);
    expect(raw).toContain(d.id);
    expect(raw).not.toContain(secret);
  });

  // Attack: a store written before encryption keeps its secrets readable until something rewrites them.
  it("secrets stored in plain text by an older version are encrypted on start, and still delivered", async () => {
    const first = await start();
    const { listener, deployment } = await listenerDeployment(first.api, [{ name: "TOKEN", value: "x" }]);
    await first.cp.stop();
    const plain = `plain-${randomUUID()}`;
    await storeSql(first.cp.dataDir, "UPDATE deployments SET secrets = $1 WHERE id = $2", [
      JSON.stringify([{ name: "TOKEN", value: plain }]),
      deployment.id,
    ]);
    expect(await cpStoreDump(first.cp.dataDir)).toContain(plain);

    const again = await start({}, { dataDir: first.cp.dataDir });
    expect(await cpStoreDump(first.cp.dataDir)).not.toContain(plain);
    expect(await assignedSecrets(again.api, listener.id, deployment.id)).toEqual([
      { name: "TOKEN", value: plain },
    ]);
    await again.cp.stop();
  });

  // Attack: starting a control plane on a copied store with a key of one's own choosing.
  it("a control plane with another key refuses to start on the store, naming HANGAR_CP_SECRET_KEY", async () => {
    const keyA = Buffer.alloc(32, 1).toString("base64");
    const a = await start({ HANGAR_CP_SECRET_KEY: keyA });
    expect(a.cp.output()).not.toContain("generated the key");
    const { listener, deployment } = await listenerDeployment(a.api, [
      { name: "TOKEN", value: "t0p-secret" },
    ]);
    await a.cp.stop();
    const refused = await startCp({
      dataDir: a.cp.dataDir,
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY, HANGAR_CP_SECRET_KEY: "another passphrase of enough length" },
    }).catch((e: Error) => e);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain("HANGAR_CP_SECRET_KEY");
    expect((refused as Error).message).not.toContain("    at ");
    // The right key (as hex this time) opens it.
    const again = await start(
      { HANGAR_CP_SECRET_KEY: Buffer.alloc(32, 1).toString("hex") },
      { dataDir: a.cp.dataDir },
    );
    expect(await assignedSecrets(again.api, listener.id, deployment.id)).toEqual([
      { name: "TOKEN", value: "t0p-secret" },
    ]);
    await again.cp.stop();
  });
});

describe("local source paths", () => {
  const body = (repoUrl: string) => ({
    name: `local-${randomUUID()}`,
    source: "github",
    source_config: { repo_url: repoUrl },
    source_revision_config: { langgraph_config_path: "langgraph.json" },
    secrets: [],
  });

  /** The answer with the path it echoes replaced, so answers for two paths compare. */
  const shape = (r: { status: number; body: any }, path: string) => ({
    status: r.status,
    body: JSON.parse(JSON.stringify(r.body).split(path).join("<path>")),
  });

  // Attack: deploying /etc or another tenant's build folder (which then runs with the attacker's secrets), and
  // probing which host paths exist from the 201/422 answers.
  it("outside HANGAR_CP_SOURCE_ROOTS, /etc and another tenant's build folder are refused alike, existing or not", async () => {
    const { cp, api } = await plainCp();
    // Another tenant's build folder in this control plane's data dir (its temp dir is under the test roots).
    const otherBuild = join(cp.dataDir, "builds", randomUUID(), "src");
    mkdirSync(otherBuild, { recursive: true });
    writeFileSync(join(otherBuild, "langgraph.json"), "{}");
    const cases = [
      ["/etc", "/etc/no-such-dir-" + randomUUID()],
      [otherBuild, join(cp.dataDir, "builds", randomUUID(), "src")],
      [`file://${otherBuild}`, `file://${cp.dataDir}/builds/${randomUUID()}`],
    ];
    const answers = [];
    for (const [existing, missing] of cases) {
      const a = await api.post("/v2/deployments", body(existing));
      const b = await api.post("/v2/deployments", body(missing));
      expect(a.status, existing).toBe(422);
      expect(a.body.detail).toHaveLength(1);
      expect(a.body.detail[0]).toMatchObject({
        loc: ["body", "source_config", "repo_url"],
        type: "value_error",
      });
      expect(shape(a, existing)).toEqual(shape(b, missing));
      answers.push(shape(a, existing));
    }
    // The same answer for /etc as for another tenant's folder.
    expect(answers[1]).toEqual(answers[0]);

    // Allowed: a directory under a root; a symlink under it leading to /etc is not.
    const project = exampleProject();
    expect((await api.post("/v2/deployments", body(project))).status).toBe(201);
    symlinkSync("/etc", join(project, "etc-link"));
    const viaLink = await api.post("/v2/deployments", body(join(project, "etc-link")));
    expect(shape(viaLink, join(project, "etc-link"))).toEqual(answers[0]);
    // ".." after a symlink goes up from where the link leads (/etc/.. is /), not back into the project.
    const afterLink = `${project}/etc-link/..`;
    expect(shape(await api.post("/v2/deployments", body(afterLink)), afterLink)).toEqual(answers[0]);
    const dotdot = `${project}/../../../etc`;
    expect(shape(await api.post("/v2/deployments", body(dotdot)), dotdot)).toEqual(answers[0]);
  });

  // Attack: the same, on a control plane whose operator opened no directory (the default): no local path at all.
  it("without HANGAR_CP_SOURCE_ROOTS, no local path is deployed, and a bad root stops the start", async () => {
    const { api } = await start({ HANGAR_CP_SOURCE_ROOTS: "" });
    const project = exampleProject();
    const r = await api.post("/v2/deployments", body(project));
    expect(r.status).toBe(422);
    expect(r.body.detail[0].loc).toEqual(["body", "source_config", "repo_url"]);
    expect(r.body.detail[0].msg).toContain("HANGAR_CP_SOURCE_ROOTS");
    const bad = await startCp({ env: { HANGAR_CP_SOURCE_ROOTS: "relative/dir" } }).catch((e: Error) => e);
    expect((bad as Error).message).toContain(
      'HANGAR_CP_SOURCE_ROOTS: "relative/dir" is not an absolute path',
    );
  });
});

/** A gzip tarball of `staging` (symlinks kept as symlinks). */
function tarballOf(staging: string): Buffer {
  const file = join(dir("hangar-cp-sec-tgz-"), "source.tar.gz");
  tar.c({ gzip: true, file, cwd: staging, sync: true, portable: true }, readdirSync(staging));
  return readFileSync(file);
}

/** A project whose langgraph.json and package.json are relative symlink chains, each link lexically inside. */
function escapingProject(target: string, dangling: string): string {
  const staging = dir("hangar-cp-sec-staging-");
  const deep = Array.from({ length: 12 }, (_, i) => `d${i}`).join("/");
  mkdirSync(join(staging, deep), { recursive: true });
  const up = Array(12).fill("..").join("/");
  // d0/.../d11/up -> the top of the source (inside); through it, ".." climbs out.
  symlinkSync(up, join(staging, deep, "up"));
  symlinkSync(`${deep}/up/${up}${target}`, join(staging, "langgraph.json"));
  symlinkSync(`${deep}/up/${up}${dangling}`, join(staging, "package.json"));
  return staging;
}

/** The gzip tarball of one file of `mb` megabytes of zeros: a few KB that expand to `mb` MB. */
function gzipBomb(mb: number): Buffer {
  const staging = dir("hangar-cp-sec-bomb-");
  writeFileSync(join(staging, "langgraph.json"), '{"graphs": {}}');
  writeFileSync(join(staging, "zeros.bin"), Buffer.alloc(mb * 1024 * 1024));
  const tgz = tarballOf(staging);
  rmSync(join(staging, "zeros.bin"));
  return tgz;
}

function put(url: string, body: Buffer): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "PUT",
      headers: { "content-type": "application/gzip", "content-length": String(body.length) },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", (e) => ((e as { code?: string }).code === "EPIPE" ? undefined : reject(e)));
    req.end(body);
  });
}

describe("uploaded tarballs", () => {
  // Attack: a chain of relative symlinks, each lexically inside the source, that resolves outside it: a
  // langgraph.json that is a host file, and a dangling package.json the control plane would write through.
  it("a symlink chain leaving the source, or a dangling one, is refused on upload (422)", async () => {
    const { cp, api } = await plainCp();
    const victim = join(dir("hangar-cp-sec-victim-"), "written-through");
    const up = (await api.post("/v2/uploads/upload-url")).body;
    const r = await put(up.upload_url, tarballOf(escapingProject("/etc/hostname", victim)));
    expect(r.status).toBe(422);
    expect(r.body.detail).toHaveLength(1);
    expect(r.body.detail[0]).toMatchObject({ loc: ["body"], type: "value_error" });
    expect(r.body.detail[0].msg).toMatch(/link .* leads outside the source folder/);
    expect(existsSync(join(cp.dataDir, up.object_path))).toBe(false);

    // Only the dangling one (langgraph.json a real file).
    const staging = escapingProject("/etc/hostname", victim);
    rmSync(join(staging, "langgraph.json"));
    writeFileSync(join(staging, "langgraph.json"), '{"graphs": {}}');
    const up2 = (await api.post("/v2/uploads/upload-url")).body;
    const r2 = await put(up2.upload_url, tarballOf(staging));
    expect(r2.status).toBe(422);
    expect(r2.body.detail[0].msg).toContain("package.json");
    expect(existsSync(victim)).toBe(false);
  });

  // Attack: a gzip bomb (a few KB expanding to many MB) filling the control plane's disk.
  it("a gzip bomb is stopped at HANGAR_CP_MAX_EXTRACTED_MB on upload (413) and nothing is kept", async () => {
    const { cp, api } = await buildingCp();
    const bomb = gzipBomb(16);
    expect(bomb.length).toBeLessThan(100 * 1024);
    const up = (await api.post("/v2/uploads/upload-url")).body;
    const r = await put(up.upload_url, bomb);
    expect(r.status).toBe(413);
    expect(r.body.detail).toContain("HANGAR_CP_MAX_EXTRACTED_MB");
    expect(existsSync(join(cp.dataDir, up.object_path))).toBe(false);
    const uploads = join(cp.dataDir, "uploads", "_workspaces");
    const left = existsSync(uploads) ? readdirSync(uploads, { recursive: true }).map(String) : [];
    expect(left.filter((f) => f.endsWith(".part") || f.endsWith(".tar.gz"))).toEqual([]);
    // Under the cap, the same kind of tarball is accepted.
    const up2 = (await api.post("/v2/uploads/upload-url")).body;
    expect((await put(up2.upload_url, gzipBomb(1))).status).toBe(200);
  });

  /**
   * A tarball that reached the data directory without the upload's inspection (uploaded before it existed):
   * an accepted upload whose file is then replaced, built by the local reconciler.
   */
  async function buildStored(tarball: Buffer) {
    const { cp, api } = await buildingCp();
    // Created without its tarball (no revision yet), as the official CLI does; then uploaded, replaced, PATCHed.
    const created = await api.post("/v2/deployments", {
      name: `stored-${randomUUID()}`,
      source: "internal_source",
      source_config: { deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [],
    });
    expect(created.status).toBe(201);
    const up = (await api.post(`/v2/deployments/${created.body.id}/upload-url`)).body;
    expect((await put(up.upload_url, gzipSync(Buffer.from("placeholder")))).status).toBe(200);
    writeFileSync(join(cp.dataDir, up.object_path), tarball);
    const patched = await api.patch(`/v2/deployments/${created.body.id}`, {
      source_revision_config: { source_tarball_path: up.object_path },
    });
    expect(patched.status).toBe(200);
    return { cp, api, d: patched.body };
  }

  // Attack: the same tarballs reaching a build (stored before the upload inspected them): the build stops at the
  // cap, refuses the escaping links after extraction, writes nothing through them, and removes its folder.
  it("a build refuses a stored bomb or escaping links and removes its folder", async () => {
    const victim = join(dir("hangar-cp-sec-victim-"), "written-through");
    // Both on the control plane capped at 2 MB, built at the same time.
    const cases = [
      [gzipBomb(16), "HANGAR_CP_MAX_EXTRACTED_MB"],
      [tarballOf(escapingProject("/etc/hostname", victim)), "leads outside the source folder"],
    ] as const;
    await Promise.all(
      cases.map(async ([tarball, reason]) => {
        const { cp, api, d } = await buildStored(tarball);
        const rev = await settle(api, d.id, d.latest_revision_id);
        expect(rev.status).toBe("BUILD_FAILED");
        expect(rev.status_message).toContain(reason);
        expect(existsSync(join(cp.dataDir, "builds", d.latest_revision_id, "src"))).toBe(false);
      }),
    );
    expect(existsSync(victim)).toBe(false);
  });
});
