// Tenant isolation on the control plane's own machine (issue 12, item 1): two organizations deploy on one
// `hangar control-plane` with its local runtime; the attacker's build commands and Agent Server try to read the
// other tenant's secrets (its processes' /proc/*/environ), its build folder and data, and the control plane's own
// data directory and environment. Also: where the sandbox is off, a second organization cannot deploy here.
import { randomBytes } from "node:crypto";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpClient, cpTenancy, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { cleanupDir, ROOT, tempDir } from "../helpers/server.ts";

const rand = () => randomBytes(12).toString("hex");
const KEY_B = `hangar-sandbox-b-${rand()}`;
/** In the control plane's environment only: no child may see it. */
const CP_CANARY = `cp-canary-${rand()}`;
/** Organization B's deployment secret, and a marker in B's build folder (its langgraph.json). */
const B_SECRET = `b-secret-${rand()}`;
const B_FILE_MARKER = `b-file-${rand()}`;

const sources = tempDir("hangar-sandbox-src-");
const projectB = join(sources, "b");
const projectA = join(sources, "a");
const cps: CpProcess[] = [];

/** Where the local-path sources may be (the repo_url check of issue 12 allows only listed roots). */
const SOURCE_ENV = { HANGAR_CP_SOURCE_ROOTS: sources };

function project(dir: string, greeting: string): void {
  cpSync(join(ROOT, "examples"), dir, { recursive: true });
  const file = join(dir, "langgraph.json");
  const config = JSON.parse(readFileSync(file, "utf8"));
  config.env.HANGAR_EXAMPLE_GREETING = greeting;
  writeFileSync(file, JSON.stringify(config, null, 2));
}

/**
 * A graph module of the attacker that, when imported (by `hangar check` in the build, and by the Agent Server at
 * start), prints what its process can see: uid, environment, processes, other processes' environments and
 * command lines, the control plane's data directory.
 */
function spyGraph(dataDir: string): string {
  return `import { readdirSync, readFileSync } from "node:fs";
const DATA = ${JSON.stringify(dataDir)};
const pids = () => readdirSync("/proc").filter((n) => /^\\d+$/.test(n));
const each = (f) => pids().map((p) => { try { return readFileSync("/proc/" + p + "/" + f, "utf8"); } catch (e) { return "denied"; } }).join("|");
const probe = (label, fn) => { let v; try { v = fn(); } catch (e) { v = "ERR " + (e.code ?? e.message); } console.log("SPY " + label + "=" + v); };
probe("uid", () => process.getuid());
probe("OWN", () => String(process.env.TENANT_A_SECRET).toUpperCase());
probe("env", () => JSON.stringify(process.env));
probe("pids", () => pids().join(","));
probe("environs", () => each("environ").toUpperCase());
probe("cmdlines", () => each("cmdline"));
probe("datadir", () => readdirSync(DATA).join(","));
probe("builds", () => readdirSync(DATA + "/builds").join(","));
probe("deployments", () => readdirSync(DATA + "/deployments").join(","));
probe("db", () => readFileSync(DATA + "/control-plane.db", "latin1").length);
export { graph } from "./chat.ts";
`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The control plane's start-up output, once it said how it runs tenants' processes (or after 5 s). */
async function startupLines(cp: CpProcess): Promise<string> {
  for (let i = 0; i < 100 && !cp.output().includes("sandbox:"); i++) await sleep(50);
  return cp.output();
}

async function settle(api: CpClient, deploymentId: string, revisionId: string): Promise<string> {
  const deadline = Date.now() + 150_000;
  for (;;) {
    const r = await api.get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    expect(r.status).toBe(200);
    if (
      !["CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"].includes(
        r.body.status,
      )
    )
      return r.body.status;
    if (Date.now() > deadline) throw new Error(`revision ${revisionId} still ${r.body.status}`);
    await sleep(250);
  }
}

/** Every line of a revision's build or deploy log. */
async function logs(api: CpClient, deploymentId: string, revisionId: string, kind: "build" | "deploy") {
  const lines: string[] = [];
  for (let offset = 0; ;) {
    const r = await api.post(`/v1/projects/${deploymentId}/revisions/${revisionId}/${kind}_logs`, {
      limit: 1000,
      offset,
    });
    expect(r.status).toBe(200);
    lines.push(...r.body.logs.map((l: { message: string }) => l.message));
    if (r.body.logs.length < 1000) return lines.join("\n");
    offset = r.body.offset;
  }
}

/** The value a `SPY <label>=` or `<label>=` line printed. */
function printed(log: string, label: string): string {
  const m = new RegExp(`^(?:SPY )?${label}=(.*)$`, "m").exec(log);
  if (!m) throw new Error(`no ${label}= line in:\n${log}`);
  return m[1];
}

beforeAll(() => {
  project(projectB, `Hello from ${B_FILE_MARKER}`);
  project(projectA, "Hello from A");
});

afterAll(async () => {
  for (const cp of cps) await cp.stop();
  for (const cp of cps) cleanupDir(cp.dataDir);
  cleanupDir(sources);
});

describe("control plane sandbox: tenants' builds and deployments", () => {
  it("an organization's build commands and Agent Server see none of another organization's secrets, files or processes, nor the control plane's data or environment", async () => {
    const cp = await startCp({
      reconcile: true,
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY_B, CP_ONLY_CANARY: CP_CANARY, ...SOURCE_ENV },
    });
    cps.push(cp);
    const apiB = cpClient(cp.url, { "x-api-key": KEY_B });

    // Organization A: its own organization, workspace and key.
    const apiA = cpClient(cp.url, {
      "x-api-key": (await cpTenancy(cp.dataDir).tenant("tenant-a", "plus")).key,
    });

    // B deploys first, with a secret: its Agent Server runs with it in its environment.
    const b = await apiB.post("/v2/deployments", {
      name: "tenant-b",
      source: "github",
      source_config: { repo_url: projectB, deployment_type: "dev", build_command: 'echo "UID=$(id -u)"' },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [{ name: "TENANT_B_SECRET", value: B_SECRET }],
    });
    expect(b.status).toBe(201);
    const revB = b.body.latest_revision_id as string;
    expect(await settle(apiB, b.body.id, revB)).toBe("DEPLOYED");
    const uidB = Number(printed(await logs(apiB, b.body.id, revB, "build"), "UID"));

    // A's project: a graph module that spies when imported; a build command that spies with the shell.
    const data = cp.dataDir;
    writeFileSync(join(projectA, "src/spy.ts"), spyGraph(data));
    const config = JSON.parse(readFileSync(join(projectA, "langgraph.json"), "utf8"));
    config.graphs = { chat: "./src/spy.ts:graph" };
    writeFileSync(join(projectA, "langgraph.json"), JSON.stringify(config));
    const attack = [
      'echo "UID=$(id -u)"',
      "echo \"PIDS=$(ls /proc | grep -E '^[0-9]+$' | tr '\\n' ' ')\"",
      'echo "OWN=$(printf %s "$TENANT_A_SECRET" | tr a-z A-Z)"',
      "cat /proc/*/environ 2>&1 | tr '\\0a-z' '\\nA-Z'",
      "cat /proc/*/cmdline 2>&1 | tr '\\0' ' '",
      `ls -la ${data} ${data}/builds ${data}/deployments 2>&1`,
      `cat ${data}/builds/*/src/langgraph.json 2>&1 | tr a-z A-Z`,
      `cat ${data}/deployments/*/data/* 2>&1 | head -c 4000`,
      `cat ${data}/*.db 2>&1 | head -c 4000`,
      "env",
      "true",
    ].join("; ");
    const a = await apiA.post("/v2/deployments", {
      name: "tenant-a",
      source: "github",
      source_config: { repo_url: projectA, deployment_type: "dev", build_command: attack },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [{ name: "TENANT_A_SECRET", value: "a-own-secret" }],
    });
    expect(a.status).toBe(201);
    const revA = a.body.latest_revision_id as string;
    expect(await settle(apiA, a.body.id, revA)).toBe("DEPLOYED");

    // Attack: the cross-tenant secret read through a build command (/proc/*/environ), B's build folder and data,
    // the control plane's data directory and environment.
    const build = await logs(apiA, a.body.id, revA, "build");
    expect(build).toContain("SPY uid="); // the spy ran in hangar check
    // It sees its own secret (printed upper-cased: the log masks a deployment's own secret values, not what an
    // attacker transforms), so it would see another tenant's the same way if it could.
    expect(printed(build, "OWN")).toBe("A-OWN-SECRET");
    for (const leaked of [B_SECRET, B_FILE_MARKER, CP_CANARY, KEY_B, revB, b.body.id, "control-plane.db"]) {
      expect(build).not.toContain(leaked);
      expect(build).not.toContain(leaked.toUpperCase());
    }
    const uidA = Number(printed(build, "UID"));
    expect(uidA).toBeGreaterThanOrEqual(1000);
    expect(uidA).not.toBe(uidB);
    expect(uidB).toBeGreaterThanOrEqual(1000);
    expect(Number(printed(build, "uid"))).toBe(uidA);
    // Its own PID namespace: a handful of processes, none of the control plane's or B's.
    expect(printed(build, "PIDS").trim().split(/\s+/).length).toBeLessThanOrEqual(8);
    expect(build).not.toMatch(/control-plane --port/);

    // Attack: the same from the running Agent Server (its deploy log), and it still serves through the router.
    const deploy = await logs(apiA, a.body.id, revA, "deploy");
    expect(deploy).toContain("SPY uid=");
    expect(printed(deploy, "OWN")).toBe("A-OWN-SECRET");
    for (const leaked of [B_SECRET, B_FILE_MARKER, CP_CANARY, KEY_B, revB, b.body.id]) {
      expect(deploy).not.toContain(leaked);
      expect(deploy).not.toContain(leaked.toUpperCase());
    }
    expect(Number(printed(deploy, "uid"))).toBe(uidA);
    const env = JSON.parse(printed(deploy, "env")) as Record<string, string>;
    expect(env.CP_ONLY_CANARY).toBeUndefined();
    expect(env.HANGAR_CP_BOOTSTRAP_API_KEY).toBeUndefined();
    expect(printed(deploy, "pids").split(",").length).toBeLessThanOrEqual(8);
    expect(printed(deploy, "db")).toMatch(/^ERR/);
    const client = new Client({ apiUrl: a.body.source_config.custom_url, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const out = (await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    })) as { messages: { content: string }[] };
    expect(out.messages.at(-1)!.content).toContain("Hello from A");
    // B is untouched and still serves.
    const clientB = new Client({ apiUrl: b.body.source_config.custom_url, callerOptions: { maxRetries: 0 } });
    expect((await clientB.threads.create()).thread_id).toEqual(expect.any(String));
    // The start-up output says how tenants' processes run.
    expect(await startupLines(cp)).toMatch(/sandbox: on \(bubblewrap/);
  });

  it("with the sandbox off, the control plane says so at start-up and refuses a second organization's deployment", async () => {
    const key1 = `hangar-sandbox-off-${rand()}`;
    const cp = await startCp({
      reconcile: true,
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: key1, HANGAR_CP_SANDBOX: "off", ...SOURCE_ENV },
    });
    cps.push(cp);
    const { key: key2 } = await cpTenancy(cp.dataDir).tenant("second", "plus");
    const body = (name: string) => ({
      name,
      source: "github",
      source_config: { repo_url: projectB, deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [],
    });
    const first = await cpClient(cp.url, { "x-api-key": key1 }).post("/v2/deployments", body("first"));
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    // Attack: a second tenant on a machine that cannot isolate it.
    const second = await cpClient(cp.url, { "x-api-key": key2 }).post("/v2/deployments", body("second"));
    expect(second.status).toBe(403);
    expect(second.body.detail).toContain("cannot sandbox builds and deployments (HANGAR_CP_SANDBOX=off)");
    expect(second.body.detail).toContain("one organization only");
    // The first organization may deploy more.
    const again = await cpClient(cp.url, { "x-api-key": key1 }).post("/v2/deployments", body("again"));
    expect(again.status).toBe(201);
    // It said why at start-up.
    expect(await startupLines(cp)).toMatch(/sandbox: OFF \(HANGAR_CP_SANDBOX=off\).*one organization/);
  });
});
