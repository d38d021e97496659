// The local reconciler end to end, on the control plane's SQLite store and a real Fastify app with the deployment
// router: a deployment of the example project (a `github` source that is a local directory) is built, started,
// served through the official SDK at its URL, switched to a new revision without failing requests, kept on
// its live revision when a build fails, brought back by a new reconciler, and deleted without leftovers.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { cpSync, existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalReconciler, type LocalReconciler } from "../../src/control-plane/runtime/local/runtime.ts";
import { registerDeploymentRoutes, type DeploymentRouter } from "../../src/control-plane/http/router.ts";
import { openCpSqliteStore } from "../../src/control-plane/store/sqlite.ts";
import type { CpStore, Deployment, Revision, RevisionStatus } from "../../src/control-plane/domain/types.ts";
import { ROOT, cleanupDir, tempDir } from "../helpers/server.ts";
import { arrayLogger } from "../helpers/logs.ts";
import { loadSettings, useSettings } from "../../src/lib/settings.ts";

// The builder copies local sources only from directories the operator opened (HANGAR_CP_SOURCE_ROOTS, read
// at build time): these tests build from projects in the system's temp directory.
process.env.HANGAR_CP_SOURCE_ROOTS = realpathSync(tmpdir());
// This process's settings are parsed once (and a worker runs several files): parse them again with the root.
useSettings(loadSettings(process.env));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(
  what: string,
  fn: () => Promise<T | undefined | null | false>,
  ms = 90_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${logs.join("\n")}`);
    await sleep(100);
  }
}

/** Processes whose command line mentions the control plane's data dir (its Agent Servers and builds). */
function childrenOf(dir: string): string[] {
  const out = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  return out.split("\n").filter((l) => l.includes(dir) && !l.includes("ps -eo"));
}

const logs: string[] = [];
let cpDir: string;
let projectDir: string;
let store: CpStore;
let app: FastifyInstance;
let router: DeploymentRouter;
let reconciler: LocalReconciler;
let base: string;
let tenant: string;

function startReconciler(): LocalReconciler {
  return startLocalReconciler({
    store,
    dataDir: cpDir,
    publicUrl: () => base,
    router,
    log: arrayLogger(logs),
    intervalMs: 200,
    stopGraceMs: 5_000,
  });
}

beforeAll(async () => {
  cpDir = tempDir("hangar-cp-test-");
  projectDir = tempDir("hangar-cp-project-");
  cpSync(join(ROOT, "examples"), projectDir, {
    recursive: true,
    filter: (s) => !/[\\/](\.hangar[^\\/]*|\.langgraph_api|node_modules)$/.test(s),
  });
  store = openCpSqliteStore(cpDir);
  const org = await store.createOrganization("test", "plus");
  tenant = (await store.createWorkspace(org.id, "default")).id;
  app = Fastify();
  router = registerDeploymentRoutes(app);
  await app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  reconciler = startReconciler();
});

afterAll(async () => {
  await reconciler?.stop();
  await app?.close();
  await router?.close();
  await store?.close();
  const left = cpDir ? childrenOf(cpDir) : [];
  if (cpDir) cleanupDir(cpDir);
  if (projectDir) cleanupDir(projectDir);
  expect(left).toEqual([]);
});

async function createDeployment(name: string, repoUrl: string): Promise<Deployment> {
  const config = { langgraph_config_path: "langgraph.json" };
  const d = await store.createDeployment(
    {
      id: randomUUID(),
      tenant_id: tenant,
      name,
      source: "github",
      source_config: { repo_url: repoUrl, deployment_type: "dev" },
      source_revision_config: config,
      secrets: [{ name: "HANGAR_EXAMPLE_GREETING", value: "Hello from a secret" }],
      status: "AWAITING_DATABASE",
    },
    { id: randomUUID(), status: "QUEUED", source: "github", source_revision_config: config },
  );
  reconciler.wake();
  return d;
}

async function addRevision(deploymentId: string): Promise<Revision> {
  const r = await store.addRevision(deploymentId, {
    id: randomUUID(),
    status: "QUEUED",
    source: "github",
    source_revision_config: { langgraph_config_path: "langgraph.json" },
  });
  reconciler.wake();
  return r;
}

async function waitStatus(d: string, r: string, statuses: RevisionStatus[], ms?: number): Promise<Revision> {
  return until(
    `revision ${r} in ${statuses.join("/")}`,
    async () => {
      const rev = await store.getRevision(d, r);
      return rev && statuses.includes(rev.status) ? rev : undefined;
    },
    ms,
  );
}

/** Streams a chat run on a new thread (or `threadId`) and returns the AI reply and the event names. */
async function chat(
  client: Client,
  threadId?: string,
): Promise<{ reply: string; events: string[]; threadId: string }> {
  const thread = threadId ?? (await client.threads.create()).thread_id;
  const events: string[] = [];
  let reply = "";
  for await (const chunk of client.runs.stream(thread, "chat", {
    input: { messages: [{ role: "user", content: "hi" }] },
    streamMode: ["values", "messages-tuple"],
  })) {
    events.push(chunk.event);
    if (chunk.event === "values") {
      const messages = (chunk.data as { messages: { type: string; content: string }[] }).messages;
      const last = messages[messages.length - 1];
      if (last?.type === "ai") reply = last.content;
    }
  }
  return { reply, events, threadId: thread };
}

const chatFile = () => join(projectDir, "src/chat.ts");
const configFile = () => join(projectDir, "langgraph.json");

describe("local reconciler", () => {
  let dep: Deployment;
  let firstRevision: string;
  let client: Client;
  let threadBefore: string;

  it("builds and deploys a revision; the deployment URL serves it through the SDK, streaming included", async () => {
    dep = await createDeployment("example", projectDir);
    firstRevision = dep.latest_revision_id!;
    const rev = await waitStatus(dep.id, firstRevision, ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED"]);
    expect(rev.status, rev.status_message ?? "").toBe("DEPLOYED");
    const d = (await store.getDeploymentById(dep.id))!;
    expect(d.active_revision_id).toBe(firstRevision);
    expect(d.status).toBe("READY");

    client = new Client({ apiUrl: `${base}/deployments/${dep.id}`, callerOptions: { maxRetries: 0 } });
    const run = await chat(client);
    threadBefore = run.threadId;
    expect(run.events[0]).toBe("metadata");
    expect(run.events).toContain("messages");
    // The deployment's secrets are its env (over the project's own langgraph.json env).
    expect(run.reply).toContain("Hello from a secret! I am a fake model");

    const build = await store.readLogs(dep.id, {
      kind: "build",
      revision_id: firstRevision,
      order: "asc",
      limit: 500,
      offset: 0,
    });
    const text = build.map((l) => l.message).join("\n");
    expect(text).toContain("graph ok: chat");
    expect(text).toContain("Build finished");
    const deploy = await store.readLogs(dep.id, { kind: "deploy", order: "asc", limit: 500, offset: 0 });
    expect(deploy.map((l) => l.message).join("\n")).toMatch(
      /Hangar Agent Server listening on http:\/\/127\.0\.0\.1/,
    );
    // The source was copied without its node_modules; the build links Hangar's.
    expect(existsSync(join(cpDir, "builds", firstRevision, "src/node_modules"))).toBe(true);
  });

  it("switches to a new revision with a changed graph while a client keeps calling, without a failure", async () => {
    writeFileSync(
      chatFile(),
      readFileSync(chatFile(), "utf8")
        .replace("I am a fake model", "I am revision two")
        .replace("Streaming works token by token", "Still revision two"),
    );
    let stop = false;
    let ok = 0;
    const failures: string[] = [];
    const loop = (async () => {
      for (let i = 0; !stop; i++) {
        try {
          const res =
            i % 2
              ? await fetch(`${base}/deployments/${dep.id}/threads/${threadBefore}`)
              : await fetch(`${base}/deployments/${dep.id}/threads/search`, {
                  method: "POST",
                  headers: { "content-type": "application/json" },
                  body: JSON.stringify({ limit: 1 }),
                });
          if (res.ok) ok++;
          else failures.push(`${res.status} ${await res.text()}`);
          await res.arrayBuffer().catch(() => {});
        } catch (e) {
          failures.push(String(e));
        }
      }
    })();
    const r2 = await addRevision(dep.id);
    const rev = await waitStatus(dep.id, r2.id, ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED"]);
    await sleep(300);
    stop = true;
    await loop;
    expect(rev.status, rev.status_message ?? "").toBe("DEPLOYED");
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(20);
    expect((await store.getRevision(dep.id, firstRevision))!.status).toBe("DEPLOYED");
    expect((await store.getDeploymentById(dep.id))!.active_revision_id).toBe(r2.id);

    // New behaviour, same data: the thread made before the switch is still there and takes a new turn.
    const run = await chat(client, threadBefore);
    expect(run.reply).toContain("I am revision two");
    const state = await client.threads.getState<{ messages: unknown[] }>(threadBefore);
    expect(state.values.messages).toHaveLength(4);
  });

  it("ends a revision with a bad langgraph.json in BUILD_FAILED, the live revision still serving", async () => {
    const good = readFileSync(configFile(), "utf8");
    const active = (await store.getDeploymentById(dep.id))!.active_revision_id;
    writeFileSync(configFile(), JSON.stringify({ graphs: {} }));
    try {
      const r = await addRevision(dep.id);
      const rev = await waitStatus(dep.id, r.id, ["BUILD_FAILED", "DEPLOYED", "DEPLOY_FAILED"]);
      expect(rev.status).toBe("BUILD_FAILED");
      expect(rev.status_message).toContain("graphs: must name at least one graph");
      const build = await store.readLogs(dep.id, {
        kind: "build",
        revision_id: r.id,
        order: "asc",
        limit: 500,
        offset: 0,
      });
      expect(build.map((l) => l.message).join("\n")).toContain("must name at least one graph");
      expect(build.at(-1)!.level).toBe("ERROR");
    } finally {
      writeFileSync(configFile(), good);
    }
    expect((await store.getDeploymentById(dep.id))!.active_revision_id).toBe(active);
    expect((await chat(client)).reply).toContain("revision two");
  });

  it("ends a revision whose graph throws on import in BUILD_FAILED, the live revision still serving", async () => {
    const good = readFileSync(chatFile(), "utf8");
    writeFileSync(chatFile(), `throw new Error("chat graph broken on import (cp-9e1)");\n${good}`);
    try {
      const r = await addRevision(dep.id);
      const rev = await waitStatus(dep.id, r.id, ["BUILD_FAILED", "DEPLOYED", "DEPLOY_FAILED"]);
      expect(rev.status).toBe("BUILD_FAILED");
      expect(rev.status_message).toContain("chat graph broken on import (cp-9e1)");
      expect(rev.status_message).not.toContain("\n");
      const build = await store.readLogs(dep.id, {
        kind: "build",
        revision_id: r.id,
        order: "asc",
        limit: 500,
        offset: 0,
      });
      expect(build.map((l) => l.message).join("\n")).toContain("cp-9e1");
    } finally {
      writeFileSync(chatFile(), good);
    }
    expect((await chat(client)).reply).toContain("revision two");
  });

  it("interrupts a revision being rolled out when a newer one arrives", async () => {
    const r3 = await addRevision(dep.id);
    await waitStatus(dep.id, r3.id, ["BUILDING", "AWAITING_DEPLOY", "DEPLOYING", "DEPLOYED"]);
    const r4 = await addRevision(dep.id);
    const rev4 = await waitStatus(dep.id, r4.id, ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED"]);
    expect(rev4.status, rev4.status_message ?? "").toBe("DEPLOYED");
    const rev3 = (await store.getRevision(dep.id, r3.id))!;
    // Superseded before its switch (INTERRUPTED), or it had already switched (DEPLOYED) when r4 came.
    expect(["INTERRUPTED", "DEPLOYED"]).toContain(rev3.status);
    expect((await store.getDeploymentById(dep.id))!.active_revision_id).toBe(r4.id);
    expect((await chat(client)).reply).toContain("revision two");
  });

  it("is brought back by a new reconciler on the same store and data dir (control plane restart)", async () => {
    await reconciler.stop();
    expect(childrenOf(cpDir)).toEqual([]);
    // Its build is gone too: it is built again.
    const active = (await store.getDeploymentById(dep.id))!.active_revision_id!;
    rmSync(join(cpDir, "builds", active), { recursive: true, force: true });
    reconciler = startReconciler();
    const run = await until("the deployment to serve again", async () => {
      try {
        return await chat(client, threadBefore);
      } catch {
        return undefined;
      }
    });
    expect(run.reply).toContain("revision two");
    const deploy = await store.readLogs(dep.id, { kind: "deploy", order: "desc", limit: 200, offset: 0 });
    const text = deploy.map((l) => l.message).join("\n");
    expect(text).toContain("is not running: starting it again");
    expect(text).toContain("is gone: building it again");
    expect(existsSync(join(cpDir, "builds", active, "build.json"))).toBe(true);
  });

  it("restarts an Agent Server that dies", async () => {
    const [line] = childrenOf(join(cpDir, "builds"));
    expect(line).toBeDefined();
    process.kill(Number(line.trim().split(/\s+/)[0]), "SIGKILL");
    const run = await until("the deployment to serve again", async () => {
      try {
        return await chat(client);
      } catch {
        return undefined;
      }
    });
    expect(run.reply).toContain("revision two");
    const deploy = await store.readLogs(dep.id, { kind: "deploy", order: "desc", limit: 200, offset: 0 });
    expect(deploy.map((l) => l.message).join("\n")).toContain("exited unexpectedly");
  });

  it("deletes a deployment: its URL answers 404, no process and no data is left", async () => {
    const revisions = await store.listRevisions(dep.id, { limit: 100, offset: 0 });
    await store.updateDeployment(dep.id, { deleted_at: new Date().toISOString() });
    reconciler.wake();
    await until("the deployment to be purged", async () => (await store.getDeploymentById(dep.id)) === null);
    const res = await fetch(`${base}/deployments/${dep.id}/ok`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: `Deployment ID ${dep.id} not found.` });
    expect(childrenOf(cpDir)).toEqual([]);
    for (const r of revisions) expect(existsSync(join(cpDir, "builds", r.id))).toBe(false);
    expect(existsSync(join(cpDir, "deployments", dep.id))).toBe(false);
  });
});
