// Security (issue 12, item 7): a revision's `/internal/*` routes (the control plane's own calls, such as
// /internal/recover) cannot be reached through the deployment's public URL, in any spelling of the path; the
// internal token and HANGAR_API_KEYS are checked as a whole (compared in constant time; no timing is asserted).
import { cpSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isInternalPath } from "../../src/control-plane/http/router.ts";
import { cpClient, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { cleanupDir, ROOT, startHangar, tempDir, type HangarProcess } from "../helpers/server.ts";

const KEY = "hangar-internal-test-key";
const TOKEN = "internal-token-of-this-test-0123456789";
const project = tempDir("hangar-cp-project-");
let cp: CpProcess;
let api: CpClient;
let agent: HangarProcess;

beforeAll(async () => {
  cpSync(join(ROOT, "examples"), project, {
    recursive: true,
    filter: (s) => !/[\\/](\.hangar[^\\/]*|\.langgraph_api|node_modules)$/.test(s),
  });
  [cp, agent] = await Promise.all([
    startCp({
      reconcile: true,
      // Local project paths are allowed only under the roots the operator lists.
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY, HANGAR_CP_SOURCE_ROOTS: project },
    }),
    startHangar({ env: { HANGAR_INTERNAL_TOKEN: TOKEN, HANGAR_API_KEYS: `${KEY}-a,${KEY}-b` } }),
  ]);
  api = cpClient(cp.url, { "x-api-key": KEY });
});

afterAll(async () => {
  await cp?.stop();
  if (cp) cleanupDir(cp.dataDir);
  if (agent) {
    await agent.stop();
    cleanupDir(agent.dataDir);
  }
  cleanupDir(project);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A request with its path exactly as given (fetch would normalise dot segments). */
function raw(
  base: string,
  path: string,
  method = "POST",
  headers: Record<string, string | string[]> = {},
): Promise<{ status: number; body: string }> {
  const u = new URL(base);
  return new Promise((res, rej) => {
    const req = request(
      { host: u.hostname, port: u.port, path: `${u.pathname.replace(/\/$/, "")}${path}`, method, headers },
      (r) => {
        let body = "";
        r.on("data", (d) => (body += d));
        r.on("end", () => res({ status: r.statusCode!, body }));
      },
    );
    req.on("error", rej);
    req.end();
  });
}

describe("internal routes", () => {
  // Attack: a user of a deployment calls the revision's /internal/recover through the public URL (guessing or
  // brute-forcing the internal token, or just probing that it exists).
  it("are 404 through a deployment's public URL, however the path is spelt", async () => {
    const created = await api.post("/v2/deployments", {
      name: "internal-routes",
      source: "github",
      source_config: { repo_url: project, deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.id;
    const revision = created.body.latest_revision_id;
    const deadline = Date.now() + 150_000;
    let status = "";
    while (Date.now() < deadline) {
      status = (await api.get(`/v2/deployments/${id}/revisions/${revision}`)).body.status;
      if (
        !["CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"].includes(status)
      )
        break;
      await sleep(250);
    }
    expect(status).toBe("DEPLOYED");
    const url = (await api.get(`/v2/deployments/${id}`)).body.source_config.custom_url as string;

    // The deployment answers through its URL...
    expect((await raw(url, "/ok", "GET")).status).toBe(200);
    // ...but not its internal routes, with or without a token.
    for (const path of [
      "/internal/recover",
      "/internal/recover?x=1",
      "/internal",
      "/INTERNAL/recover",
      "//internal/recover",
      "/./internal/recover",
      "/threads/../internal/recover",
      "/%69nternal/recover",
      "/internal%2Frecover",
      "/%2569nternal/recover",
    ]) {
      for (const headers of [{}, { "x-hangar-internal-token": "guess" }] as Record<string, string>[]) {
        const res = await raw(url, path, "POST", headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}: ${res.body}`).toBe(404);
        expect(res.body).not.toMatch(/token/i);
      }
    }
    expect((await raw(url, "/internal/recover", "GET")).status).toBe(404);
  });

  it("recognises every spelling of an internal path, and nothing else", () => {
    expect(isInternalPath("/internal;a=b/recover")).toBe(true);
    expect(isInternalPath("\\internal\\recover")).toBe(true);
    expect(isInternalPath("/threads/internal")).toBe(false);
    expect(isInternalPath("/internals")).toBe(false);
    expect(isInternalPath("/store/items?namespace=internal")).toBe(false);
  });

  // Attack: a caller holding a wrong token (a prefix, a longer string, several headers) on the Agent Server
  // itself: only the exact token passes.
  it("the Agent Server's internal token must match exactly", async () => {
    for (const token of ["", "guess", TOKEN.slice(0, -1), `${TOKEN}x`, TOKEN.toUpperCase()]) {
      const res = await raw(agent.url, "/internal/recover", "POST", { "x-hangar-internal-token": token });
      expect(res.status, token).toBe(403);
    }
    expect((await raw(agent.url, "/internal/recover", "POST", {})).status).toBe(403);
    const twice = await raw(agent.url, "/internal/recover", "POST", {
      "x-hangar-internal-token": [TOKEN, TOKEN],
    });
    expect(twice.status).toBe(403);
    const ok = await raw(agent.url, "/internal/recover", "POST", { "x-hangar-internal-token": TOKEN });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ recovered: expect.any(Number) });
  });

  // Attack: guessing an API key of HANGAR_API_KEYS by its prefix or by a longer string.
  it("HANGAR_API_KEYS: only a whole key passes", async () => {
    const search = (key?: string) =>
      fetch(`${agent.url}/assistants/search`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key === undefined ? {} : { "x-api-key": key }) },
        body: "{}",
      }).then((r) => r.status);
    for (const key of [undefined, "", KEY, `${KEY}-`, `${KEY}-a,${KEY}-b`, `${KEY}-bb`]) {
      expect(await search(key), String(key)).toBe(401);
    }
    expect(await search(`${KEY}-a`)).toBe(200);
    expect(await search(`${KEY}-b`)).toBe(200);
  });
});
