// Source tarball uploads through the real CLI: upload URLs (deployment and workspace), the one-use PUT with
// its gzip check, size limit (HANGAR_CP_MAX_UPLOAD_BYTES) and entry check (the build's extraction rule), and
// source_tarball_path on create and PATCH.
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir } from "../helpers/server.ts";
import { cpClient, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { rawTarball, type RawEntry } from "../helpers/tarball.ts";

const KEY = "upload-test-key";
const LIMIT = 4096;
let cp: CpProcess;
let a: CpClient;

beforeAll(async () => {
  cp = await startCp({
    env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY, HANGAR_CP_MAX_UPLOAD_BYTES: String(LIMIT) },
  });
  a = cpClient(cp.url, { "X-Api-Key": KEY });
});

afterAll(async () => {
  await cp?.stop();
  if (cp) cleanupDir(cp.dataDir);
});

const tarball = (text = "a project") => gzipSync(Buffer.from(text));

/** PUTs a body (a Buffer with Content-Length, or chunks sent chunked) to an upload URL, with no API key. */
function put(url: string, body: Buffer | Buffer[]): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const chunked = Array.isArray(body);
    const req = request(url, {
      method: "PUT",
      headers: {
        "content-type": "application/gzip",
        ...(chunked ? {} : { "content-length": String(body.length) }),
      },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : undefined }));
    });
    // The server may answer (413) and close before the whole body is written.
    req.on("error", (e) => ((e as { code?: string }).code === "EPIPE" ? undefined : reject(e)));
    if (chunked) {
      for (const c of body) req.write(c);
      req.end();
    } else req.end(body);
  });
}

async function internalSource(name: string): Promise<any> {
  const up = (await a.post("/v2/uploads/upload-url")).body;
  expect((await put(up.upload_url, tarball())).status).toBe(200);
  const r = await a.post("/v2/deployments", {
    name,
    source: "internal_source",
    source_config: {},
    source_revision_config: {
      langgraph_config_path: "langgraph.json",
      source_tarball_path: up.source_tarball_path,
    },
    secrets: [],
  });
  expect(r.status).toBe(201);
  return r.body;
}

const CONFIG: RawEntry = { path: "langgraph.json", type: "File", body: "{}" };

/** Uploads a tarball of `entries` to a new upload URL of the deployment: a 422 naming `name` (matching `why`). */
async function refused(deploymentId: string, entries: RawEntry[], name: string, why: RegExp): Promise<void> {
  const up = (await a.post(`/v2/deployments/${deploymentId}/upload-url`)).body;
  const r = await put(up.upload_url, rawTarball(entries));
  expect(r.status, JSON.stringify(r.body)).toBe(422);
  expect(r.body.detail).toMatchObject([{ type: "value_error", loc: ["body"] }]);
  expect(r.body.detail[0].msg).toContain(`'${name}'`);
  expect(r.body.detail[0].msg).toMatch(why);
  expect(existsSync(join(cp.dataDir, up.source_tarball_path))).toBe(false);
}

describe("uploads", () => {
  it("a workspace upload creates an internal_source deployment; the tarball moves under the deployment", async () => {
    const up = await a.post("/v2/uploads/upload-url");
    expect(up.status).toBe(200);
    expect(up.body.upload_url.startsWith(`${cp.url}/v2/uploads/`)).toBe(true);
    const ttl = Date.parse(up.body.expires_at) - Date.now();
    expect(ttl).toBeGreaterThan(14 * 60_000);
    expect(ttl).toBeLessThanOrEqual(15 * 60_000);
    const content = tarball("workspace upload");
    const res = await put(up.body.upload_url, content);
    expect(res.status).toBe(200);
    expect(readFileSync(join(cp.dataDir, up.body.source_tarball_path))).toEqual(content);

    const r = await a.post("/v2/deployments", {
      name: `src-${randomUUID()}`,
      source: "internal_source",
      source_config: {},
      source_revision_config: {
        langgraph_config_path: "langgraph.json",
        source_tarball_path: up.body.source_tarball_path,
      },
      secrets: [],
    });
    expect(r.status).toBe(201);
    const path = r.body.source_revision_config.source_tarball_path;
    expect(path.startsWith(`uploads/${r.body.id}/`)).toBe(true);
    expect(path.endsWith(".tar.gz")).toBe(true);
    expect(readFileSync(join(cp.dataDir, path))).toEqual(content);
    const rev = (await a.get(`/v2/deployments/${r.body.id}/revisions/${r.body.latest_revision_id}`)).body;
    expect(rev).toMatchObject({
      status: "QUEUED",
      source: "internal_source",
      source_revision_config: { source_tarball_path: path },
    });
    // Used once: the same path cannot make a second deployment.
    const again = await a.post("/v2/deployments", {
      name: `src-${randomUUID()}`,
      source: "internal_source",
      source_config: {},
      source_revision_config: {
        langgraph_config_path: "langgraph.json",
        source_tarball_path: up.body.source_tarball_path,
      },
      secrets: [],
    });
    expect(again.status).toBe(422);
    expect(again.body.detail[0].loc).toEqual(["body", "source_revision_config", "source_tarball_path"]);
  });

  it("a deployment's upload URL: one use, gzip only, then PATCH makes a revision with it", async () => {
    const d = await internalSource(`patch-${randomUUID()}`);
    const up = await a.post(`/v2/deployments/${d.id}/upload-url`);
    expect(up.status).toBe(200);
    expect(up.body.source_tarball_path.startsWith(`uploads/${d.id}/`)).toBe(true);
    // The field the official CLI reads, with the same path.
    expect(up.body.object_path).toBe(up.body.source_tarball_path);

    // Not uploaded yet: refused.
    const early = await a.patch(`/v2/deployments/${d.id}`, {
      source_revision_config: { source_tarball_path: up.body.source_tarball_path },
    });
    expect(early.status).toBe(422);

    const notGzip = await put(up.body.upload_url, Buffer.from("plain text, not gzip"));
    expect(notGzip.status).toBe(422);
    expect(notGzip.body.detail).toMatchObject([{ type: "value_error", loc: ["body"] }]);
    expect(notGzip.body.detail[0].msg).toContain("not a gzip file");
    const ok = await put(up.body.upload_url, tarball("v2"));
    expect(ok.status).toBe(200);
    const reused = await put(up.body.upload_url, tarball("v3"));
    expect(reused.status).toBe(404);
    expect((await put(`${cp.url}/v2/uploads/unknown-token`, tarball())).status).toBe(404);

    const patched = await a.patch(`/v2/deployments/${d.id}`, {
      source_revision_config: { source_tarball_path: up.body.source_tarball_path },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.latest_revision_id).not.toBe(d.latest_revision_id);
    expect(patched.body.source_revision_config.source_tarball_path).toBe(up.body.source_tarball_path);
    expect((await a.get(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body.status).toBe(
      "SKIPPED",
    );

    // Another deployment's upload, or any other path, is refused.
    const other = await internalSource(`other-${randomUUID()}`);
    for (const path of [
      other.source_revision_config.source_tarball_path,
      "uploads/x.tar.gz",
      "/etc/passwd",
    ]) {
      const r = await a.patch(`/v2/deployments/${d.id}`, {
        source_revision_config: { source_tarball_path: path },
      });
      expect(r.status, path).toBe(422);
      expect(r.body.detail[0].loc, path).toEqual(["body", "source_revision_config", "source_tarball_path"]);
    }
  });

  it("413 beyond HANGAR_CP_MAX_UPLOAD_BYTES, declared or streamed; nothing is kept", async () => {
    const d = await internalSource(`big-${randomUUID()}`);
    const declared = (await a.post(`/v2/deployments/${d.id}/upload-url`)).body;
    const big = Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(LIMIT)]);
    const r1 = await put(declared.upload_url, big);
    expect(r1.status).toBe(413);
    expect(typeof r1.body.detail).toBe("string");

    const streamed = (await a.post(`/v2/deployments/${d.id}/upload-url`)).body;
    const chunks = [Buffer.from([0x1f, 0x8b]), Buffer.alloc(2000), Buffer.alloc(2000), Buffer.alloc(2000)];
    const r2 = await put(streamed.upload_url, chunks);
    expect(r2.status).toBe(413);

    const dir = join(cp.dataDir, "uploads", d.id);
    expect(readdirSync(dir).filter((f) => f.endsWith(".part"))).toEqual([]);
    expect(existsSync(join(cp.dataDir, declared.source_tarball_path))).toBe(false);
    expect(existsSync(join(cp.dataDir, streamed.source_tarball_path))).toBe(false);
    // At the limit it is accepted.
    const exact = Buffer.concat([Buffer.from([0x1f, 0x8b]), Buffer.alloc(LIMIT - 2)]);
    expect((await put(streamed.upload_url, exact)).status).toBe(200);
  });

  it("an upload cut off mid-body fails, keeps nothing and leaves its URL usable", async () => {
    const d = await internalSource(`cut-${randomUUID()}`);
    const up = (await a.post(`/v2/deployments/${d.id}/upload-url`)).body;
    await new Promise<void>((resolve) => {
      const req = request(up.upload_url, { method: "PUT", headers: { "content-type": "application/gzip" } });
      req.on("error", () => resolve());
      req.write(Buffer.from([0x1f, 0x8b, 1, 2, 3]));
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    // Taken (404) until the server sees the client gone, then usable again.
    let r = { status: 0, body: undefined as any };
    for (let i = 0; i < 50 && r.status !== 200; i++) {
      r = await put(up.upload_url, tarball("after the cut"));
      if (r.status !== 200) await new Promise((res) => setTimeout(res, 100));
    }
    expect(r.status).toBe(200);
    const dir = join(cp.dataDir, "uploads", d.id);
    expect(readdirSync(dir).filter((f) => f.endsWith(".part"))).toEqual([]);
    expect(readFileSync(join(cp.dataDir, up.source_tarball_path))).toEqual(tarball("after the cut"));
  });

  it("refuses the probe's tarball: a hard link whose target has '..', then a regular file of its name (422 naming it)", async () => {
    const d = await internalSource(`probe-${randomUUID()}`);
    await refused(
      d.id,
      [
        CONFIG,
        { path: "passwd", type: "Link", linkpath: "../../../../etc/passwd" },
        { path: "passwd", type: "File", body: "x" },
      ],
      "passwd",
      /'\.\.'/,
    );
  });

  it("refuses every entry the build's extraction refuses, and takes what it takes", async () => {
    const d = await internalSource(`links-${randomUUID()}`);
    // '..' in a hard link's target, even one that stays inside.
    await refused(
      d.id,
      [
        CONFIG,
        { path: "sub/a.txt", type: "File", body: "a" },
        { path: "b", type: "Link", linkpath: "sub/../sub/a.txt" },
      ],
      "b",
      /'\.\.'/,
    );
    // A hard link to nothing written before it, or to a directory.
    await refused(
      d.id,
      [CONFIG, { path: "c", type: "Link", linkpath: "later.txt" }, { path: "later.txt", type: "File" }],
      "c",
      /nothing/,
    );
    await refused(
      d.id,
      [CONFIG, { path: "dir", type: "Directory" }, { path: "e", type: "Link", linkpath: "dir" }],
      "e",
      /directory/,
    );
    // A name repeated with another type: a directory (holding a file) then a file, a file then a symlink.
    await refused(d.id, [CONFIG, { path: "x/f", type: "File" }, { path: "x", type: "File" }], "x", /twice/);
    await refused(
      d.id,
      [CONFIG, { path: "y", type: "File" }, { path: "y", type: "SymbolicLink", linkpath: "langgraph.json" }],
      "y",
      /twice/,
    );
    // A symlink whose target goes through an earlier symlink, or through a folder the archive does not have.
    await refused(
      d.id,
      [
        CONFIG,
        { path: "d/f", type: "File" },
        { path: "l", type: "SymbolicLink", linkpath: "d" },
        { path: "m", type: "SymbolicLink", linkpath: "l/f" },
      ],
      "m",
      /symbolic link 'l'/,
    );
    await refused(
      d.id,
      [CONFIG, { path: "n", type: "SymbolicLink", linkpath: "nope/../langgraph.json" }],
      "n",
      /nothing/,
    );
    // An absolute path, and an absolute symlink target.
    await refused(d.id, [CONFIG, { path: "/tmp/abs.txt", type: "File" }], "/tmp/abs.txt", /absolute/);
    await refused(d.id, [CONFIG, { path: "s", type: "SymbolicLink", linkpath: "/etc" }], "s", /absolute/);
    // What extraction takes is still taken: a hard link to an earlier file, a relative symlink, a directory twice.
    const up = (await a.post(`/v2/deployments/${d.id}/upload-url`)).body;
    const ok = await put(
      up.upload_url,
      rawTarball([
        { path: "src", type: "Directory" },
        CONFIG,
        { path: "src/a.txt", type: "File", body: "a" },
        { path: "src", type: "Directory" },
        { path: "copy.txt", type: "Link", linkpath: "src/a.txt" },
        { path: "src/up", type: "SymbolicLink", linkpath: "../langgraph.json" },
      ]),
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it("upload URLs need the API key; the PUT does not", async () => {
    const none = cpClient(cp.url);
    expect((await none.post("/v2/uploads/upload-url")).status).toBe(401);
    const d = await internalSource(`auth-${randomUUID()}`);
    expect((await none.post(`/v2/deployments/${d.id}/upload-url`)).status).toBe(401);
  });
});
