// The official deploy client against Hangar's control plane: the `langgraphjs deploy --remote` binary of
// @langchain/langgraph-cli (create, upload URL, PUT, PATCH, poll; then list, revisions list, logs, delete) runs
// unchanged against a real `hangar control-plane`, on a project whose langgraph.json says `"env": ".env"` (the
// file stays on the machine, its secret reaches the graph); then the same flow with `hangar deploy`.
import { OFFICIAL_BIN, runCli, type CliRun } from "../helpers/cli.ts";
import { randomUUID } from "node:crypto";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cpClient, cpTenancy, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { BIN, cleanupDir, ROOT, tempDir } from "../helpers/server.ts";
import { BOUND_MS } from "../helpers/wait.ts";

const KEY = "hangar-official-cli-test-key";
const FIXTURE = join(ROOT, "test/fixtures/deploy-env-project");

const base = tempDir("hangar-official-cli-test-");
let cp: CpProcess;
let api: CpClient;

beforeAll(async () => {
  cp = await startCp({ reconcile: true, env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY } });
  api = cpClient(cp.url, { "x-api-key": KEY });
});

afterAll(async () => {
  await cp?.stop();
  cleanupDir(base);
  if (cp) cleanupDir(cp.dataDir);
});

/** Settings of either CLI that must come from the test only. */
const CLI_ENV = /^(HANGAR_|LANGSMITH_|LANGCHAIN_|LANGGRAPH_)|^DATABASE_URL$/;

/** No analytics call (no network in tests), no colours. */
const run = (args: string[], cwd: string, env: Record<string, string>): Promise<CliRun> =>
  runCli(args, { cwd, scrub: CLI_ENV, env: { LANGGRAPH_CLI_NO_ANALYTICS: "1", NO_COLOR: "1", ...env } });

/** `langgraphjs deploy <args> --host-url <control plane>` of the official CLI, the key in LANGSMITH_API_KEY. */
const official = (args: string[], cwd: string, env: Record<string, string> = { LANGSMITH_API_KEY: KEY }) =>
  run([OFFICIAL_BIN, "deploy", ...args, "--host-url", cp.url], cwd, env);

/** `hangar deploy <args>` with the control plane and key in the environment. */
const hangar = (args: string[], cwd: string) =>
  run([BIN, "deploy", ...args], cwd, { HANGAR_HOST_URL: cp.url, HANGAR_API_KEY: KEY });

/**
 * A copy of the fixture project with a `.env` holding the secret, and HANGAR_SCHEMAS_AHEAD=false (a secret too),
 * so that its Agent Servers extract the graph's schemas only when asked, as the harness's servers do: no test here
 * asks, and each revision's server would otherwise compile the graph's types in the background.
 */
function project(name: string, secret: string): string {
  const dir = join(base, name);
  cpSync(FIXTURE, dir, { recursive: true });
  writeFileSync(
    join(dir, ".env"),
    `# local settings\nDEPLOY_ENV_SECRET=${secret}\nHANGAR_SCHEMAS_AHEAD=false\n`,
  );
  return dir;
}

function setVersion(dir: string, version: string): void {
  const file = join(dir, "src/agent.ts");
  writeFileSync(
    file,
    readFileSync(file, "utf8").replace(/const VERSION = "[^"]*";/, `const VERSION = "${version}";`),
  );
}

/** What the deployed graph answers, through the official SDK at the deployment's URL. */
async function answer(url: string): Promise<{ secret: string; version: string }> {
  const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();
  return (await client.runs.wait(thread.thread_id, "agent", { input: {} })) as {
    secret: string;
    version: string;
  };
}

async function waitGone(url: string): Promise<void> {
  await vi.waitFor(
    async () => {
      const status = await fetch(`${url}/ok`)
        .then((res) => res.status)
        .catch(() => 0);
      expect(status, `the deleted deployment still answers at ${url}`).not.toBe(200);
    },
    { timeout: BOUND_MS, interval: 100 },
  );
}

/** Lines of a table printed by the official CLI, split on runs of two or more spaces. */
const rows = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .slice(2)
    .map((l) => l.trim().split(/\s{2,}/));

describe("the official CLI: langgraphjs deploy --remote", () => {
  const secret = `official-${randomUUID()}`;
  let dir: string;
  let id: string;
  let url: string;
  let firstRevision: string;
  let secondRevision: string;

  it("first deploy of an `env: .env` project: created, built, deployed; the .env secret reaches the graph", async () => {
    dir = project("official-env", secret);
    const r = await official(["--remote", "--name", "official-env", "--no-input"], dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Creating deployment 'official-env'/);
    expect(r.stdout).toMatch(/Uploading source/);
    expect(r.stdout).toMatch(/Triggering remote build/);
    expect(r.stdout).toMatch(/Deployment successful!/);
    id = /Deployment ID: ([0-9a-f-]{36})/.exec(r.stdout)![1];
    url = /URL: (http:\/\/\S+)/.exec(r.stdout)![1];
    expect(url).toBe(`${cp.url}/deployments/${id}`);

    const d = (await api.get(`/v2/deployments/${id}`)).body;
    expect(d).toMatchObject({ name: "official-env", source: "internal_source" });
    expect(d.source_revision_config.langgraph_config_path).toBe("langgraph.json");
    expect(d.secrets).toEqual([
      { name: "DEPLOY_ENV_SECRET", value: "********" },
      { name: "HANGAR_SCHEMAS_AHEAD", value: "********" },
    ]);
    // The create made no revision of its own (it had no source yet): the PATCH made the only one.
    const revs = (await api.get(`/v2/deployments/${id}/revisions`)).body.resources;
    expect(revs).toHaveLength(1);
    firstRevision = revs[0].id;
    expect(revs[0].status).toBe("DEPLOYED");
    expect(d.active_revision_id).toBe(firstRevision);
    // The .env (ignored by the project's .gitignore, as in the official templates) was not uploaded.
    const envInBuild = readFileSync(join(cp.dataDir, "builds", firstRevision, "src/.env"), "utf8");
    expect(envInBuild).not.toContain(secret);

    expect(await answer(url)).toEqual({ secret, version: "v1" });
  });

  it("second deploy after a change updates in place: same id, a new revision, the new behaviour", async () => {
    setVersion(dir, "v2");
    const r = await official(["--remote", "--name", "official-env", "--no-input"], dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`Found existing deployment (ID: ${id})`);
    expect(r.stdout).not.toMatch(/Creating deployment/);
    expect(r.stdout).toMatch(/Deployment successful!/);

    const d = (await api.get(`/v2/deployments/${id}`)).body;
    secondRevision = d.latest_revision_id;
    expect(secondRevision).not.toBe(firstRevision);
    expect(d.active_revision_id).toBe(secondRevision);
    const named = (await api.get("/v2/deployments?name_contains=official-env")).body.resources;
    expect(named).toHaveLength(1);
    expect(await answer(url)).toEqual({ secret, version: "v2" });
  });

  it("deploy list, deploy revisions list, deploy logs (build and deploy)", async () => {
    // Read-only commands: run at once.
    const [list, revs, build, first, deployLogs, revLogs] = await Promise.all([
      official(["list"], dir),
      official(["revisions", "list", id], dir),
      // Build logs of the latest revision, found by name.
      official(["logs", "--type", "build", "--name", "official-env"], dir),
      // The first revision's, filtered by a query: only the matching lines.
      official(
        ["logs", "--type", "build", "--deployment-id", id, "--revision-id", firstRevision, "-q", "graph ok"],
        dir,
      ),
      // Runtime logs, of the deployment and of one revision.
      official(["logs", "--deployment-id", id], dir),
      official(["logs", "--deployment-id", id, "--revision-id", firstRevision], dir),
    ]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^Deployment ID\s+Deployment Name\s+Deployment URL/);
    expect(rows(list.stdout)).toContainEqual([id, "official-env", url]);

    expect(revs.code, revs.stderr).toBe(0);
    const revRows = rows(revs.stdout);
    expect(revRows.map((r) => r.slice(0, 2))).toEqual([
      [secondRevision, "DEPLOYED"],
      [firstRevision, "REPLACED"],
    ]);

    expect(build.code, build.stderr).toBe(0);
    expect(build.stdout).toContain(`Using latest revision: ${secondRevision}`);
    expect(build.stdout).toMatch(/\[INFO\] graph ok: agent/);
    expect(build.stdout).toMatch(/\[INFO\] Build finished/);
    expect(first.code, first.stderr).toBe(0);
    const lines = first.stdout.trim().split("\n");
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((l) => l.includes("graph ok"))).toBe(true);
    expect(first.stdout).toContain(`builds/${firstRevision}/`);
    expect(deployLogs.code, deployLogs.stderr).toBe(0);
    expect(deployLogs.stdout).toContain(`Revision ${secondRevision} deployed`);
    expect(revLogs.code, revLogs.stderr).toBe(0);
    expect(revLogs.stdout).toContain(`Revision ${firstRevision} deployed`);
    expect(revLogs.stdout).not.toContain(`Revision ${secondRevision} deployed`);
  });

  it("an organization key: the CLI's workspace question is answered by LANGSMITH_TENANT_ID", async () => {
    const admin = cpTenancy(cp.dataDir);
    const orgId = await admin.createOrg("cli-org", "plus");
    const wsIds = [await admin.createWorkspace(orgId, "one"), await admin.createWorkspace(orgId, "two")];
    const orgKey = await admin.createKey({ orgId });
    const none = await run(
      [OFFICIAL_BIN, "deploy", "--name", "x", "--remote", "--no-input", "--host-url", cp.url],
      dir,
      {
        LANGSMITH_API_KEY: orgKey,
      },
    );
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(
      /API key is org-scoped and requires a workspace ID\. Set LANGSMITH_TENANT_ID/,
    );
    const picked = await official(["list"], dir, {
      LANGSMITH_API_KEY: orgKey,
      LANGSMITH_TENANT_ID: wsIds[1],
    });
    expect(picked.code, picked.stderr).toBe(0);
    expect(picked.stdout).toContain("No deployments found.");
  });

  it("an organization on the free plan cannot deploy from the command line: 403, nothing created", async () => {
    const { key } = await cpTenancy(cp.dataDir).tenant("hobby", "free");
    const r = await official(["--remote", "--name", "free-plan", "--no-input"], dir, {
      LANGSMITH_API_KEY: key,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/POST \/v2\/deployments failed with status 403: .*plus plan or above/);
    expect((await cpClient(cp.url, { "x-api-key": key }).get("/v2/deployments")).body.resources).toEqual([]);
  });

  it("deploy delete removes the deployment; its URL stops answering", async () => {
    const r = await official(["delete", id, "--force"], dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Deleted deployment ${id}.`);
    expect((await api.get(`/v2/deployments/${id}`)).status).toBe(404);
    await waitGone(url);
    const list = await official(["list"], dir);
    expect(list.stdout).not.toContain(id);
  });
});

describe("hangar deploy of the same `env: .env` project", () => {
  const secret = `hangar-${randomUUID()}`;
  let dir: string;
  let id: string;
  let url: string;
  let firstRevision: string;

  it("first deploy: .env is not uploaded, its values are secrets, the build passes, the graph sees them", async () => {
    dir = project("hangar-env", secret);
    const r = await hangar(["--name", "hangar-env"], dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const m = /Deployed 'hangar-env': (http:\/\/\S+)/.exec(r.stdout);
    expect(m, r.stdout).not.toBeNull();
    url = m![1];
    id = /\/deployments\/([0-9a-f-]{36})$/.exec(url)![1];
    const d = (await api.get(`/v2/deployments/${id}`)).body;
    expect(d.secrets).toEqual([
      { name: "DEPLOY_ENV_SECRET", value: "********" },
      { name: "HANGAR_SCHEMAS_AHEAD", value: "********" },
    ]);
    firstRevision = d.latest_revision_id;
    const envInBuild = readFileSync(join(cp.dataDir, "builds", firstRevision, "src/.env"), "utf8");
    expect(envInBuild).not.toContain(secret);
    expect(await answer(url)).toEqual({ secret, version: "v1" });
  });

  it("second deploy updates in place; list, revisions list, logs --type build, delete", async () => {
    setVersion(dir, "v2");
    const r = await hangar(["--name", "hangar-env"], dir);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain(`Deployed 'hangar-env': ${url}`);
    const d = (await api.get(`/v2/deployments/${id}`)).body;
    expect(d.latest_revision_id).not.toBe(firstRevision);
    expect(d.active_revision_id).toBe(d.latest_revision_id);
    expect(await answer(url)).toEqual({ secret, version: "v2" });

    const list = await hangar(["list"], dir);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`^${id}\\s+hangar-env\\s+dev\\s+DEPLOYED\\s+${url}$`, "m"));
    const revs = await hangar(["revisions", "list", id], dir);
    expect(revs.code, revs.stderr).toBe(0);
    expect(revs.stdout).toContain(d.latest_revision_id);
    expect(revs.stdout).toContain(firstRevision);
    const build = await hangar(["logs", "--type", "build", "--name", "hangar-env"], dir);
    expect(build.code, build.stderr).toBe(0);
    expect(build.stdout).toMatch(/graph ok: agent/);

    const del = await hangar(["delete", id, "--force"], dir);
    expect(del.code, del.stderr).toBe(0);
    expect((await api.get(`/v2/deployments/${id}`)).status).toBe(404);
    await waitGone(url);
  });
});
