// The backup of a control plane on PostgreSQL, as docs/backup.md ("Control plane") documents it (postgres only: the
// SQLite store's is `hangar backup --control-plane`, test/e2e/backup-embedded.test.ts): `pg_dump --format=custom
// --schema=<its schema>` taken while it runs, with `secret.key` and `uploads/` copied beside; the schema dropped and
// the data directory removed (the machine lost); `pg_restore`, the key and uploads put back. The restored control
// plane takes the admin CLI's API key, and has every deployment, revision, listener and upload, with the secrets
// readable (the listener API returns their values); with another HANGAR_CP_SECRET_KEY it refuses to start, naming
// the key id the store was sealed with.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from "node:fs";
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
} from "../helpers/control-plane.ts";
import { Scratch } from "../helpers/runs.ts";

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

    // The backup, as docs/backup.md says, while the control plane runs: the schema, the key, the uploads.
    const backup = join(scratch.dir, "backup");
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

    // The machine is lost: the control plane stops, its schema and its data directory are gone.
    await cp.stop();
    await sql(`DROP SCHEMA ${ident(schema)} CASCADE`);
    rmSync(dataDir, { recursive: true, force: true });

    // The restore: the schema into the database (where it no longer exists), the key and the uploads into a new
    // data directory.
    await run("pg_restore", [
      "--no-owner",
      "--no-privileges",
      "--exit-on-error",
      `--dbname=${DATABASE_URL}`,
      join(backup, "control-plane.dump"),
    ]);
    mkdirSync(dataDir);
    await run("cp", ["-p", join(backup, "secret.key"), join(dataDir, "secret.key")]);
    await run("cp", ["-a", join(backup, "uploads"), join(dataDir, "uploads")]);
    expect(statSync(join(dataDir, "secret.key")).mode & 0o777).toBe(0o600);

    // Another key is refused at start, naming the key the store was sealed with.
    const wrong = await startCp({
      dataDir,
      env: { HANGAR_CP_SECRET_KEY: "not the key this store was started with" },
    }).then(
      (p) => {
        started.push(p);
        return "started";
      },
      (e: Error) => e.message,
    );
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
