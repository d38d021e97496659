// `hangar deploy` end to end: the real binary, run in a copy of the example project, against a real
// `hangar control-plane` with its local reconciler: first deploy → the URL serves the graph (SDK); a second
// deploy after a change → the same deployment, a new revision, the new behaviour; list, logs, revisions,
// --name/--deployment-type, the key from .env, delete, and each error with its sentence and exit code.
import { spawn } from "node:child_process";
import { runCli, type CliRun } from "../helpers/cli.ts";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cpClient, cpTenancy, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { BIN, cleanupDir, ROOT, tempDir } from "../helpers/server.ts";
import { BOUND_MS } from "../helpers/wait.ts";

const KEY = "hangar-deploy-test-key";
const base = tempDir("hangar-deploy-test-");
/** The project directory: its name gives the deployment's name. */
const project = join(base, "My_Chat.Project");
let cp: CpProcess;
let api: CpClient;

beforeAll(async () => {
  cpSync(join(ROOT, "examples"), project, { recursive: true });
  // Deployed as secrets with the rest of its env, HANGAR_SCHEMAS_AHEAD=false has the Agent Servers extract the
  // graphs' schemas when asked, as the harness's servers do (test/helpers/server.ts): no test here asks, and each
  // revision's server would otherwise compile the three graphs' types in the background (tens of CPU seconds).
  setEnv(project, "HANGAR_SCHEMAS_AHEAD", "false");
  cp = await startCp({ reconcile: true, env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY } });
  api = cpClient(cp.url, { "x-api-key": KEY });
});

afterAll(async () => {
  await cp?.stop();
  cleanupDir(base);
  if (cp) cleanupDir(cp.dataDir);
});

/** Runs `hangar deploy <args>` in `cwd` with only the given HANGAR_* settings. */
const deploy = (args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}): Promise<CliRun> =>
  runCli([BIN, "deploy", ...args], {
    cwd: opts.cwd ?? project,
    env: opts.env,
    scrub: /^HANGAR_|^DATABASE_URL$/,
  });

/** The usual settings: the control plane's URL and the key in the environment. */
const withKey = () => ({ HANGAR_HOST_URL: cp.url, HANGAR_API_KEY: KEY });

/** Two replies of the chat graph (its fake model alternates two lines per process, one has the greeting). */
async function reply(url: string): Promise<string> {
  const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
  const out: string[] = [];
  for (let i = 0; i < 2; i++) {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    })) as { messages: { content: string }[] };
    out.push(values.messages.at(-1)!.content);
  }
  return out.join(" / ");
}

/** Sets a variable of the project's env in its langgraph.json. */
function setEnv(dir: string, name: string, value: string): void {
  const file = join(dir, "langgraph.json");
  const config = JSON.parse(readFileSync(file, "utf8"));
  config.env[name] = value;
  writeFileSync(file, JSON.stringify(config, null, 2));
}

const setGreeting = (dir: string, greeting: string) => setEnv(dir, "HANGAR_EXAMPLE_GREETING", greeting);

const jsonLines = (s: string) =>
  s
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

describe("hangar deploy", () => {
  let id: string;
  let url: string;
  let firstRevision: string;

  it("first deploy: packs (honouring .gitignore), uploads, follows the build, ends with a URL serving the graph", async () => {
    setGreeting(project, "Hello from deploy one");
    writeFileSync(join(project, ".gitignore"), "# local\nscratch/\n*.log\n!keep.log\n");
    mkdirSync(join(project, "scratch"));
    writeFileSync(join(project, "scratch/big.txt"), "not packed");
    writeFileSync(join(project, "debug.log"), "not packed");
    writeFileSync(join(project, "keep.log"), "packed");
    mkdirSync(join(project, ".hangar"), { recursive: true });
    writeFileSync(join(project, ".hangar/data.db"), "not packed");
    writeFileSync(join(project, ".env"), "DEPLOY_TEST_SECRET=from-dotenv\n");
    // A nested .gitignore and .git/info/exclude count too.
    writeFileSync(join(project, "src/.gitignore"), "generated/\n");
    mkdirSync(join(project, "src/generated"));
    writeFileSync(join(project, "src/generated/out.js"), "not packed");
    mkdirSync(join(project, ".git/info"), { recursive: true });
    writeFileSync(join(project, ".git/info/exclude"), "notes.txt\n");
    writeFileSync(join(project, "notes.txt"), "not packed");

    const r = await deploy(["--host-url", cp.url], { env: { HANGAR_API_KEY: KEY } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/Created deployment 'my-chat-project'/);
    expect(r.stdout).toMatch(/BUILDING/);
    expect(r.stdout).toMatch(/\| graph ok: chat/);
    const m = /Deployed 'my-chat-project': (http:\/\/\S+)/.exec(r.stdout);
    expect(m).not.toBeNull();
    url = m![1];
    id = /\/deployments\/([0-9a-f-]{36})$/.exec(url)![1];
    expect(url).toBe(`${cp.url}/deployments/${id}`);

    const d = (await api.get(`/v2/deployments/${id}`)).body;
    expect(d.name).toBe("my-chat-project");
    expect(d.source).toBe("internal_source");
    expect(d.source_config.deployment_type).toBe("dev");
    expect(d.source_revision_config.langgraph_config_path).toBe("langgraph.json");
    expect(d.secrets.map((s: { name: string }) => s.name).sort()).toEqual([
      "DEPLOY_TEST_SECRET",
      "HANGAR_EXAMPLE_GREETING",
      "HANGAR_SCHEMAS_AHEAD",
    ]);
    firstRevision = d.latest_revision_id;
    expect(d.active_revision_id).toBe(firstRevision);

    // What was packed: the build's source directory.
    const src = join(cp.dataDir, "builds", firstRevision, "src");
    expect(existsSync(join(src, "src/chat.ts"))).toBe(true);
    expect(existsSync(join(src, "keep.log"))).toBe(true);
    expect(existsSync(join(src, "src/.gitignore"))).toBe(true);
    for (const f of [".env", "debug.log", "scratch", ".hangar", "src/generated", ".git", "notes.txt"]) {
      expect(existsSync(join(src, f)), f).toBe(false);
    }

    expect(await reply(url)).toContain("Hello from deploy one!");
  });

  it("second deploy after a change, key from .env: same deployment, a new revision, the new behaviour", async () => {
    setGreeting(project, "Hello from deploy two");
    writeFileSync(join(project, ".env"), `HANGAR_API_KEY=${KEY}\nDEPLOY_TEST_SECRET=again\n`);
    const r = await deploy(["--json"], { env: { HANGAR_HOST_URL: cp.url } });
    expect(r.code).toBe(0);
    const events = jsonLines(r.stdout);
    expect(events.find((e) => e.event === "updated")?.deployment_id).toBe(id);
    const done = events.at(-1);
    expect(done).toMatchObject({ event: "deployed", deployment_id: id, url });
    expect(done.revision_id).not.toBe(firstRevision);
    expect(events.filter((e) => e.event === "status").map((e) => e.status)).toContain("DEPLOYED");
    expect(events.some((e) => e.event === "log" && /graph ok: chat/.test(e.message))).toBe(true);

    const all = (await api.get("/v2/deployments")).body.resources;
    expect(all.filter((d: { name: string }) => d.name === "my-chat-project")).toHaveLength(1);
    const d = (await api.get(`/v2/deployments/${id}`)).body;
    expect(d.active_revision_id).toBe(done.revision_id);
    // The CLI's own settings in .env are not sent as secrets.
    expect(d.secrets.map((s: { name: string }) => s.name)).not.toContain("HANGAR_API_KEY");
    expect(await reply(url)).toContain("Hello from deploy two!");
  });

  it("deploy list, revisions list and logs", async () => {
    // Read-only commands: run at once.
    const [list, json, revs, build, first, dep] = await Promise.all([
      deploy(["list"], { env: withKey() }),
      deploy(["list", "--json"], { env: withKey() }),
      deploy(["revisions", "list", id, "--json"], { env: withKey() }),
      // Build logs of the latest revision, by the directory's name.
      deploy(["logs", "--type", "build"], { env: withKey() }),
      // Build logs of the first revision, the last 2 lines.
      deploy(
        [
          "logs",
          "--deployment-id",
          id,
          "--type",
          "build",
          "--revision-id",
          firstRevision,
          "--limit",
          "2",
          "--json",
        ],
        { env: withKey() },
      ),
      // Deploy logs by name.
      deploy(["logs", "--name", "my-chat-project", "--level", "info"], { env: withKey() }),
    ]);

    expect(list.code).toBe(0);
    const [header, ...rows] = list.stdout.trim().split("\n");
    expect(header).toMatch(/^ID\s+NAME\s+TYPE\s+STATUS\s+URL$/);
    const row = rows.find((l) => l.startsWith(id))!;
    expect(row).toMatch(new RegExp(`^${id}\\s+my-chat-project\\s+dev\\s+DEPLOYED\\s+${url}$`));

    expect(jsonLines(json.stdout)).toContainEqual({
      id,
      name: "my-chat-project",
      type: "dev",
      status: "DEPLOYED",
      url,
    });

    expect(revs.code).toBe(0);
    const revisions = jsonLines(revs.stdout);
    expect(revisions).toHaveLength(2);
    expect(revisions[1].id).toBe(firstRevision);
    expect(revisions[0].active).toBe(true);

    expect(build.code).toBe(0);
    expect(build.stdout).toMatch(/INFO\s+graph ok: chat/);
    expect(build.stdout).toMatch(/Build finished/);
    const lines = jsonLines(first.stdout);
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.revision_id === firstRevision)).toBe(true);
    expect(lines[1].message).toMatch(/Build finished/);
    expect(dep.code).toBe(0);
    expect(dep.stdout).toMatch(/deployed/);
  });

  it("--name (normalized as the official CLI does) and --deployment-type prod (--no-wait); the type of an existing deployment cannot change", async () => {
    const named = await deploy(["--name", "Chat_Prod", "--deployment-type", "prod", "--no-wait"], {
      env: withKey(),
    });
    expect(named.stdout).toContain("Deployment name: 'chat-prod' (from 'Chat_Prod')");
    const r = await deploy(["--name", "chat-prod", "--deployment-type", "prod", "--no-wait", "--json"], {
      env: withKey(),
    });
    expect(r.code).toBe(0);
    expect(named.code).toBe(0);
    // The second run finds the deployment the first made, under the normalized name.
    const events = jsonLines(r.stdout);
    const created = events.find((e) => e.event === "updated");
    expect(events.at(-1)).toMatchObject({ event: "queued", deployment_id: created.deployment_id });
    const d = (await api.get(`/v2/deployments/${created.deployment_id}`)).body;
    expect(d.name).toBe("chat-prod");
    expect(d.source_config.deployment_type).toBe("prod");

    // Its other commands find it by the name given to `deploy` too.
    const logs = await deploy(["logs", "--name", "Chat_Prod"], { env: withKey() });
    expect(logs.stderr).not.toMatch(/No deployment named/);
    expect(logs.code).toBe(0);

    const again = await deploy(["--name", "chat-prod", "--deployment-type", "dev"], { env: withKey() });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/is of type prod; its type cannot change/);
    expect((await api.del(`/v2/deployments/${created.deployment_id}`)).status).toBe(204);
  });

  it("a failed build: exit 1, the reason and its log lines; the previous revision keeps serving", async () => {
    const broken = join(base, "broken");
    cpSync(project, broken, { recursive: true });
    writeFileSync(join(broken, ".env"), "");
    writeFileSync(join(broken, "src/chat.ts"), 'throw new Error("this graph is broken on purpose");\n');
    const r = await deploy(["--name", "my-chat-project"], { cwd: broken, env: withKey() });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/ended BUILD_FAILED/);
    expect(r.stderr).toMatch(/The previous revision keeps serving/);
    expect(r.stderr).toMatch(/\| .*this graph is broken on purpose/);
    expect(await reply(url)).toContain("Hello from deploy two!");
  });

  it("errors: one sentence and an exit code each", async () => {
    const bare = join(base, "bare");
    cpSync(project, bare, { recursive: true });
    writeFileSync(join(bare, ".env"), "");
    const empty = join(base, "empty");
    mkdirSync(empty);
    // A loopback port nothing listens on.
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    // Independent commands: run at once.
    const [wrong, noKey, noConfig, down, json, unknown, outside] = await Promise.all([
      // the .env key is not used when the environment has one
      deploy([], { env: { HANGAR_HOST_URL: cp.url, HANGAR_API_KEY: "wrong" } }),
      deploy(["list"], { cwd: bare, env: { HANGAR_HOST_URL: cp.url } }),
      deploy([], { cwd: empty, env: withKey() }),
      deploy(["list"], { env: { HANGAR_HOST_URL: `http://127.0.0.1:${port}`, HANGAR_API_KEY: KEY } }),
      deploy(["--json"], { env: { HANGAR_HOST_URL: cp.url, HANGAR_API_KEY: "wrong" } }),
      deploy(["logs", "--name", "no-such-deployment"], { env: withKey() }),
      // a langgraph.json outside the directory deployed: refused before anything is uploaded or made
      deploy(["--config", join(project, "langgraph.json"), "--name", "outside-config"], {
        cwd: empty,
        env: withKey(),
      }),
    ]);

    expect(wrong.code).toBe(3);
    expect(wrong.stderr.trim()).toMatch(
      /^hangar deploy: The control plane at .* refused the API key \(Invalid API key\.\)/,
    );
    expect(wrong.stderr.trim().split("\n")).toHaveLength(1);

    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toMatch(/No API key: pass --api-key, set HANGAR_API_KEY/);

    expect(noConfig.code).toBe(2);
    expect(noConfig.stderr).toMatch(
      /No langgraph\.json in .*empty: run `hangar deploy` in a LangGraph project/,
    );

    expect(down.code).toBe(4);
    expect(down.stderr).toMatch(
      /Cannot reach the control plane at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );

    expect(json.code).toBe(3);
    expect(jsonLines(json.stdout).at(-1)).toMatchObject({ event: "error", exit_code: 3 });

    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/No deployment named 'no-such-deployment'/);

    expect(outside.code).toBe(2);
    expect(outside.stderr).toMatch(/--config .*langgraph\.json is outside the directory deployed/);
    const listed = await deploy(["list", "--json"], { env: withKey() });
    expect(listed.stdout).not.toContain("outside-config");
  });

  it("an organization on the free plan cannot deploy from the CLI: 403, and the CLI says what is needed", async () => {
    const { key } = await cpTenancy(cp.dataDir).tenant("hobby", "free");
    const free = await deploy(["--name", "free-plan"], {
      env: { HANGAR_HOST_URL: cp.url, HANGAR_API_KEY: key },
    });
    expect(free.code).toBe(3);
    expect(free.stderr).toMatch(/plus plan or above/);
    expect(free.stderr.trim().split("\n")).toHaveLength(1);
    // Nothing was created in that workspace.
    const listed = await cpClient(cp.url, { "x-api-key": key }).get("/v2/deployments");
    expect(listed.body.resources).toEqual([]);
  });

  it("--image deploys a prebuilt image through a k8s listener; deploying again updates it", async () => {
    const { key } = await cpTenancy(cp.dataDir).tenant("onprem", "self_hosted_enterprise");
    const onprem = cpClient(cp.url, { "x-api-key": key });
    const listener = await onprem.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: "cluster-a",
      compute_config: { k8s_namespaces: ["agents"] },
    });
    expect(listener.status).toBe(201);
    const env = { HANGAR_HOST_URL: cp.url, HANGAR_API_KEY: key };
    const args = ["--name", "img", "--listener-id", listener.body.id, "--namespace", "agents", "--no-wait"];
    const first = await deploy(["--image", "registry.example.com/agent:1", ...args], { env });
    expect(first.code).toBe(0);
    const [d] = (await onprem.get("/v2/deployments")).body.resources;
    expect(d).toMatchObject({ name: "img", source: "external_docker" });
    expect(d.source_revision_config.image_uri).toBe("registry.example.com/agent:1");
    expect(d.source_config.listener_id).toBe(listener.body.id);
    const second = await deploy(["--image", "registry.example.com/agent:2", ...args], { env });
    expect(second.code).toBe(0);
    const after = (await onprem.get("/v2/deployments")).body.resources;
    expect(after).toHaveLength(1);
    expect(after[0].id).toBe(d.id);
    expect(after[0].latest_revision_id).not.toBe(d.latest_revision_id);
    expect(after[0].source_revision_config.image_uri).toBe("registry.example.com/agent:2");
    const noListener = await deploy(["--image", "registry.example.com/agent:3", "--name", "img2"], { env });
    expect(noListener.code).toBe(2);
    expect(noListener.stderr).toMatch(/--image deploys through a listener: give --listener-id/);
  });

  it("logs --follow prints new lines as they come until interrupted", async () => {
    const env = { ...process.env, ...withKey() };
    const proc = spawn(
      process.execPath,
      [BIN, "deploy", "logs", "--deployment-id", id, "--limit", "1", "--follow"],
      {
        cwd: project,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    proc.stdout.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((res) => proc.once("exit", (code) => res(code)));
    // Following once it printed the last line so far (it reads on from there).
    await vi.waitFor(() => expect(out).not.toBe(""), { timeout: BOUND_MS, interval: 50 });
    const r = await deploy(["--no-wait", "--json"], { env: withKey() });
    expect(r.code).toBe(0);
    const revision = jsonLines(r.stdout).find((e) => e.event === "updated").revision_id;
    await vi.waitFor(() => expect(out).toContain(`Revision ${revision} deployed`), {
      timeout: 2 * BOUND_MS,
      interval: 100,
    });
    proc.kill("SIGINT");
    expect(await exited).toBe(0);
  });

  it("delete: refuses without --force off a terminal, then removes the deployment and its URL stops answering", async () => {
    const refused = await deploy(["delete", id], { env: withKey() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/needs confirmation: run it in a terminal or pass --force/);
    expect((await api.get(`/v2/deployments/${id}`)).status).toBe(200);

    const r = await deploy(["delete", id, "--force"], { env: withKey() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(`Deleted deployment 'my-chat-project' (${id}).`);
    expect((await api.get(`/v2/deployments/${id}`)).status).toBe(404);
    await vi.waitFor(
      async () => {
        const status = await fetch(`${url}/ok`)
          .then((res) => res.status)
          .catch(() => 0);
        expect(status, "the deleted deployment still answers").not.toBe(200);
      },
      { timeout: BOUND_MS, interval: 100 },
    );
    const list = await deploy(["list", "--json"], { env: withKey() });
    expect(list.stdout).not.toContain(id);
  });
});
