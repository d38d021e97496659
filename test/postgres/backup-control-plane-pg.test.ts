// The backup of a control plane on PostgreSQL, as docs/backup.md ("Control plane on PostgreSQL") documents it
// (postgres only: the SQLite store's is `hangar backup --control-plane`, test/e2e/backup-embedded.test.ts):
// `pg_dump --format=custom --schema=<its schema>` taken while it runs, with `secret.key`, `uploads/`, a dev
// deployment's embedded data (`hangar backup`) and `sandbox-uids.json` copied beside; the schema dropped and the
// data directory removed (the machine lost); `pg_restore`, `hangar restore` and the files put back. The restored
// control plane takes the admin CLI's API key and has every deployment, revision, listener and upload, with the
// secrets readable (the listener API returns their values) and the store writable; without the key file, or with
// another HANGAR_CP_SECRET_KEY, it refuses to start, naming the key id the store was sealed with.
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { DATABASE_URL, ident, testPg } from "../helpers/backend.ts";
import {
  cpAdmin,
  cpClient,
  createdId,
  createdKey,
  startCp,
  type CpClient,
  type CpProcess,
  type CpStartOptions,
} from "../helpers/control-plane.ts";
import { Scratch } from "../helpers/runs.ts";
import { ROOT, runHangar } from "../helpers/server.ts";

const run = promisify(execFile);
const scratch = new Scratch();
const started: CpProcess[] = [];

afterAll(async () => {
  for (const cp of started) await cp.stop();
  scratch.cleanup();
});

async function sql<T = any>(text: string, params: unknown[] = []): Promise<T[]> {
  const db = testPg();
  await db.connect();
  try {
    return (await db.query(text, params)).rows as T[];
  } finally {
    await db.end();
  }
}

/** Runs `hangar <args>` (backup, restore), expecting success: its output. */
async function hangar(...args: string[]): Promise<string> {
  const r = await runHangar(args);
  expect(r.code, `hangar ${args.join(" ")}:\n${r.output}`).toBe(0);
  return r.output;
}

/** Starts a control plane that must refuse to start: the output it exited with. */
async function refusedStart(opts: CpStartOptions): Promise<string> {
  return startCp(opts).then(
    (p) => {
      started.push(p);
      return "started";
    },
    (e: Error) => e.message,
  );
}

async function admin(dataDir: string, ...args: string[]): Promise<string> {
  const r = await cpAdmin(dataDir, ...args);
  expect(r.code, `admin ${args.join(" ")}:\n${r.output}`).toBe(0);
  return r.output;
}

/** PUTs a gzip body to an upload URL (no API key: the URL is the credential). */
function put(url: string, body: Buffer): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: "PUT",
      headers: { "content-type": "application/gzip", "content-length": String(body.length) },
    });
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode!));
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** What an operator would lose, as the API shows it (secret values through the listener API). */
async function snapshot(c: CpClient, listenerId: string) {
  const list = await c.get("/v2/deployments");
  expect(list.status).toBe(200);
  const deployments = list.body.resources as any[];
  const revisions: Record<string, any[]> = {};
  for (const d of deployments) {
    const r = await c.get(`/v2/deployments/${d.id}/revisions`);
    expect(r.status).toBe(200);
    revisions[d.id] = r.body.resources;
  }
  const listener = (await c.get(`/v2/listeners/${listenerId}`)).body;
  const assignments = await c.get(`/v2/listeners/${listenerId}/assignments`);
  expect(assignments.status).toBe(200);
  const secrets = Object.fromEntries(
    (assignments.body.resources as any[]).map((r) => [r.id, r.secrets as unknown]),
  );
  return { deployments, revisions, listener, secrets };
}

describe("backup of a control plane on PostgreSQL (postgres)", () => {
  it("pg_dump of its schema, secret.key and uploads/ restore it after the machine is lost; another key is refused", async () => {
    const dataDir = join(scratch.dir, "cp");
    // The operator's tenancy, made with the admin CLI on the PostgreSQL store (DATABASE_URL; it makes secret.key).
    const orgId = createdId(
      await admin(dataDir, "create-org", "--name", "acme", "--plan", "self_hosted_enterprise"),
      "organization",
    );
    const wsId = createdId(
      await admin(dataDir, "create-workspace", "--org", orgId, "--name", "prod"),
      "workspace",
    );
    const key = createdKey(await admin(dataDir, "create-key", "--workspace", wsId));

    const cp = await startCp({ dataDir });
    started.push(cp);
    const schema = cp.schema!;
    expect(existsSync(join(dataDir, "secret.key"))).toBe(true);
    expect(existsSync(join(dataDir, "control-plane.db"))).toBe(false);
    const c = cpClient(cp.url, { "X-Api-Key": key });

    // A deployment of an uploaded source with secrets, and a second revision made by new secrets.
    const up = (await c.post("/v2/uploads/upload-url")).body;
    const tarball = gzipSync(Buffer.from("the project's source"));
    expect(await put(up.upload_url, tarball)).toBe(200);
    const internal = await c.post("/v2/deployments", {
      name: "uploaded",
      source: "internal_source",
      source_config: {},
      source_revision_config: {
        langgraph_config_path: "langgraph.json",
        source_tarball_path: up.object_path,
      },
      secrets: [{ name: "OPENAI_API_KEY", value: "sk-uploaded-secret" }],
    });
    expect(internal.status, JSON.stringify(internal.body)).toBe(201);
    const tarballPath = internal.body.source_revision_config.source_tarball_path as string;
    expect(readFileSync(join(dataDir, tarballPath))).toEqual(tarball);
    const patched = await c.patch(`/v2/deployments/${internal.body.id}`, {
      secrets: [
        { name: "OPENAI_API_KEY", value: "********" },
        { name: "SECOND", value: "second-secret" },
      ],
    });
    expect(patched.status).toBe(200);
    // A listener's deployment: the listener API returns its secrets' values, decrypted.
    const listener = await c.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: "cluster-1",
      compute_config: { k8s_namespaces: ["agents"] },
    });
    expect(listener.status).toBe(201);
    const docker = await c.post("/v2/deployments", {
      name: "on-k8s",
      source: "external_docker",
      source_config: { listener_id: listener.body.id, listener_config: { k8s_namespace: "agents" } },
      source_revision_config: { image_uri: "example/agent:1" },
      secrets: [{ name: "TOKEN", value: "t0p-secret" }],
    });
    expect(docker.status).toBe(201);
    const before = await snapshot(c, listener.body.id);
    expect(before.deployments.map((d) => d.name).sort()).toEqual(["on-k8s", "uploaded"]);
    expect(before.revisions[internal.body.id]).toHaveLength(2);
    expect(before.secrets[docker.body.id]).toEqual([{ name: "TOKEN", value: "t0p-secret" }]);
    const [{ value: keyId }] = await sql<{ value: string }>(
      `SELECT value FROM ${ident(schema)}.store_settings WHERE key = 'secrets_key_id'`,
    );

    // A dev deployment's embedded data and the sandbox's uid table, as the control plane keeps them in its data
    // directory whatever its store (written here: this control plane runs no reconciler and no sandbox).
    const deploymentData = join(dataDir, "deployments", internal.body.id, "data");
    mkdirSync(deploymentData, { recursive: true });
    copyFileSync(
      join(ROOT, "test/fixtures/upgrade/embedded/hangar.sqlite"),
      join(deploymentData, "hangar.sqlite"),
    );
    const uids = JSON.stringify({ next: 70001, uids: { [internal.body.id]: 70000 } });
    writeFileSync(join(dataDir, "sandbox-uids.json"), uids);

    // The backup, as docs/backup.md says, while the control plane runs: the schema, the key, the uploads, each
    // deployment's embedded data (online, with hangar backup), the uid table.
    // `hangar backup --control-plane` is the SQLite store's: it refuses this directory, saying what to do instead.
    const backup = join(scratch.dir, "backup");
    const refused = await runHangar(["backup", "--control-plane", "--data-dir", dataDir, "--out", backup]);
    expect(refused.code).toBe(1);
    expect(refused.output).toContain("pg_dump");
    expect(refused.output).toContain("Control plane on PostgreSQL");
    mkdirSync(backup);
    await run("pg_dump", [
      "--format=custom",
      `--schema=${schema}`,
      "--no-owner",
      "--no-privileges",
      `--file=${join(backup, "control-plane.dump")}`,
      `--dbname=${DATABASE_URL}`,
    ]);
    await run("cp", ["-p", join(dataDir, "secret.key"), join(backup, "secret.key")]);
    await run("cp", ["-a", join(dataDir, "uploads"), join(backup, "uploads")]);
    const backedUp = await hangar(
      "backup",
      "--data-dir",
      deploymentData,
      "--out",
      `${join(backup, "deployments", internal.body.id, "data")}/`,
    );
    await run("cp", ["-p", join(dataDir, "sandbox-uids.json"), join(backup, "sandbox-uids.json")]);

    // The machine is lost: the control plane stops, its schema and its data directory are gone.
    await cp.stop();
    await sql(`DROP SCHEMA ${ident(schema)} CASCADE`);
    rmSync(dataDir, { recursive: true, force: true });

    // The restore: the schema into the database (where it no longer exists); the uploads, the deployment's data
    // and the uid table into a new data directory.
    await run("pg_restore", [
      "--no-owner",
      "--no-privileges",
      "--exit-on-error",
      `--dbname=${DATABASE_URL}`,
      join(backup, "control-plane.dump"),
    ]);
    mkdirSync(dataDir);
    await run("cp", ["-a", join(backup, "uploads"), join(dataDir, "uploads")]);
    const restoredData = await hangar(
      "restore",
      "--from",
      join(backup, "deployments", internal.body.id, "data", "hangar.sqlite"),
      "--data-dir",
      deploymentData,
    );
    // Every thread, run and checkpoint of the deployment's data is back.
    const counts = (out: string) => /\d[\d,]* threads, .* checkpoints/.exec(out)?.[0];
    expect(counts(restoredData)).toBeDefined();
    expect(counts(restoredData)).toBe(counts(backedUp));
    await run("cp", ["-p", join(backup, "sandbox-uids.json"), join(dataDir, "sandbox-uids.json")]);
    expect(readFileSync(join(dataDir, "sandbox-uids.json"), "utf8")).toBe(uids);

    // The key forgotten: the store refuses the start, naming the key it was sealed with and where its key file
    // belongs, and leaves no key file of its own behind. The restored key is put back.
    const noKey = await refusedStart({ dataDir });
    expect(noKey).toContain(`encrypted with the key of id ${keyId}`);
    expect(noKey).toContain(join(dataDir, "secret.key"));
    expect(existsSync(join(dataDir, "secret.key"))).toBe(false);
    await run("cp", ["-p", join(backup, "secret.key"), join(dataDir, "secret.key")]);
    expect(statSync(join(dataDir, "secret.key")).mode & 0o777).toBe(0o600);

    // Another HANGAR_CP_SECRET_KEY is refused at start the same way.
    const wrong = await refusedStart({
      dataDir,
      env: { HANGAR_CP_SECRET_KEY: "not the key this store was started with" },
    });
    expect(wrong).toContain(`encrypted with the key of id ${keyId}`);
    expect(wrong).toContain("HANGAR_CP_SECRET_KEY");

    // With the restored key: the same API key, deployments, revisions, listener, secrets and uploads.
    const restored = await startCp({ dataDir });
    started.push(restored);
    expect(restored.output()).not.toContain("generated the key");
    const r = cpClient(restored.url, { "X-Api-Key": key });
    const after = await snapshot(r, listener.body.id);
    expect(after).toEqual(before);
    expect(readFileSync(join(dataDir, tarballPath))).toEqual(tarball);

    // The restored store takes writes: a new revision (its sequences restored too), sealed with the same key.
    const again = await r.patch(`/v2/deployments/${docker.body.id}`, {
      secrets: [
        { name: "TOKEN", value: "********" },
        { name: "MORE", value: "more-secret" },
      ],
    });
    expect(again.status).toBe(200);
    const revs = (await r.get(`/v2/deployments/${docker.body.id}/revisions`)).body.resources as any[];
    expect(revs.map((x) => x.id)).toEqual([
      again.body.latest_revision_id,
      ...before.revisions[docker.body.id].map((x: any) => x.id),
    ]);
    const assigned = (await r.get(`/v2/listeners/${listener.body.id}/assignments`)).body.resources.find(
      (x: any) => x.id === docker.body.id,
    );
    expect(assigned.secrets).toEqual([
      { name: "TOKEN", value: "t0p-secret" },
      { name: "MORE", value: "more-secret" },
    ]);
  });
});
