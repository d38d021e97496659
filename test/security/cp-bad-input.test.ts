// Bad input to the control plane (issue 12, item 5), one test per attack: answered with its own 422
// HTTPValidationError shape ({detail: [{type, loc, msg}]}), never a 500 or another shape, nothing stored.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir } from "../helpers/server.ts";
import {
  cpClient,
  startCp,
  type CpClient,
  type CpProcess,
  type CpResponse,
} from "../helpers/control-plane.ts";
import { deepJson, rawRequest } from "../helpers/fuzz.ts";

const KEY = "cp-bad-input-key";
let cp: CpProcess;
let api: CpClient;

beforeAll(async () => {
  cp = await startCp({
    env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY, HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise" },
  });
  api = cpClient(cp.url, { "X-Api-Key": KEY });
});

afterAll(async () => {
  await cp?.stop();
  if (cp) cleanupDir(cp.dataDir);
});

const deployment = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: "github",
  source_config: { repo_url: "https://github.com/example/agent.git" },
  source_revision_config: { langgraph_config_path: "langgraph.json" },
  ...extra,
});

/** A 422 HTTPValidationError whose first item is at `loc` with `type`. */
function expectValidation(r: CpResponse, loc: (string | number)[], type: string, msg?: string): void {
  expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(422);
  expect(Array.isArray(r.body.detail)).toBe(true);
  expect(r.body.detail[0]).toMatchObject({ type, loc });
  if (msg) expect(JSON.stringify(r.body.detail[0])).toContain(msg);
}

describe("control plane bad input", () => {
  // Attack: JSON nested 10,000 deep (was a 422 of Fastify's shape, "Maximum call stack size exceeded").
  it("deeply nested JSON is a json_invalid HTTPValidationError naming the depth limit", async () => {
    const name = `deep-${randomUUID()}`;
    const body = JSON.stringify(deployment(name)).replace(/}$/, `,"secrets":${deepJson(10_000, "array")}}`);
    const r = await api.post("/v2/deployments", body);
    expectValidation(r, ["body", "secrets"], "json_invalid", "limit of 100 levels");
    const listed = await api.get(`/v2/deployments?name_contains=${name}`);
    expect(listed.body.resources).toEqual([]);
  });

  // Attack: NUL characters and lone surrogates in bodies, query strings and paths (PostgreSQL rejects NUL in
  // text: a name_contains with %00 was a 500 on the PostgreSQL store).
  it("NUL and lone surrogates are a 422 naming where, and nothing is stored", async () => {
    const name = `nul-${randomUUID()}`;
    const nul = await api.post("/v2/deployments", deployment(`${name}\u0000`));
    expectValidation(nul, ["body", "name"], "string_invalid", "NUL");
    const sur = await api.post(
      "/v2/deployments",
      deployment(name, { secrets: [{ name: "K", value: "\ud800" }] }),
    );
    expectValidation(sur, ["body", "secrets", 0, "value"], "string_invalid", "surrogate");
    expect((await api.get(`/v2/deployments?name_contains=${name}`)).body.resources).toEqual([]);
    expectValidation(
      await api.get("/v2/deployments?name_contains=a%00"),
      ["query", "name_contains"],
      "string_invalid",
    );
    expectValidation(await api.get("/v2/listeners/a%00b"), ["path", "listener_id"], "string_invalid");
    // Percent-encoding that is not UTF-8 in a path: the same shape, not Fastify's 400.
    const bad = await rawRequest(cp.url, {
      method: "GET",
      path: "/v2/deployments/%ED%A0%80",
      headers: { "x-api-key": KEY },
    });
    expect(bad.status).toBe(422);
    expect(JSON.parse(bad.body).detail[0]).toMatchObject({ loc: ["path"] });
  });

  // Attack: a body above the control plane's limit: a 413 {detail} naming it.
  it("an oversized body is a 413 naming the limit", async () => {
    const r = await rawRequest(cp.url, {
      method: "POST",
      path: "/v2/deployments",
      headers: { "x-api-key": KEY },
      body: "{}",
      declaredLength: 1024 * 1024 + 1,
    });
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body).detail).toContain("1 MB");
  });
});
