// The local reconciler with the control plane on PostgreSQL + Redis: a `prod` deployment runs its Agent Server
// on its own schema (d_<id>) and Redis prefix (d_<id>:), serves through the router, and its deletion drops both.
import { randomUUID } from "node:crypto";
import { cpSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import Fastify, { type FastifyInstance } from "fastify";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { registerDeploymentRoutes, type DeploymentRouter } from "../../src/control-plane/http/router.ts";
import {
  clusterNames,
  startLocalReconciler,
  type LocalReconciler,
} from "../../src/control-plane/runtime/local/runtime.ts";
import { openCpSqliteStore } from "../../src/control-plane/store/sqlite.ts";
import type { CpStore } from "../../src/control-plane/domain/types.ts";
import { DATABASE_URL, REDIS_URL, testRedis } from "../helpers/backend.ts";
import { ROOT, cleanupDir, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";
import { arrayLogger } from "../helpers/logs.ts";
import { loadSettings, useSettings } from "../../src/lib/settings.ts";

// The builder copies local sources only from directories the operator opened (HANGAR_CP_SOURCE_ROOTS, read
// at build time): this test builds from a project in the system's temp directory.
process.env.HANGAR_CP_SOURCE_ROOTS = realpathSync(tmpdir());
// This process's settings are parsed once (and a worker runs several files): parse them again with the root.
useSettings(loadSettings(process.env));

const logs: string[] = [];
let cpDir: string;
let projectDir: string;
let store: CpStore;
let app: FastifyInstance;
let router: DeploymentRouter;
let reconciler: LocalReconciler;
let base: string;

/** Waits (bounded) until `fn` answers; the failure carries the deployments' logs. */
function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, ms = 90_000): Promise<T> {
  return waitFor(
    () => `${what}\n${logs.join("\n")}`,
    async () => (await fn()) || undefined,
    ms,
    100,
  );
}

async function schemaExists(schema: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    const r = await client.query("SELECT 1 FROM information_schema.schemata WHERE schema_name = $1", [
      schema,
    ]);
    return r.rowCount === 1;
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  cpDir = tempDir("hangar-cp-prod-");
  projectDir = tempDir("hangar-cp-prod-project-");
  cpSync(join(ROOT, "examples"), projectDir, {
    recursive: true,
    filter: (s) => !/[\\/](\.hangar[^\\/]*|\.langgraph_api|node_modules)$/.test(s),
  });
  store = openCpSqliteStore(cpDir);
  app = Fastify();
  router = registerDeploymentRoutes(app);
  await app.listen({ port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  reconciler = startLocalReconciler({
    store,
    dataDir: cpDir,
    router,
    databaseUrl: DATABASE_URL,
    redisUrl: REDIS_URL,
    log: arrayLogger(logs),
    intervalMs: 200,
    stopGraceMs: 5_000,
  });
});

afterAll(async () => {
  await reconciler?.stop();
  await app?.close();
  await router?.close();
  await store?.close();
  cleanupDir(cpDir);
  cleanupDir(projectDir);
});

it("runs a prod deployment on its own schema and Redis prefix, and drops them when it is deleted", async () => {
  const org = await store.createOrganization("test", "plus");
  const tenant = (await store.createWorkspace(org.id, "default")).id;
  const config = { langgraph_config_path: "langgraph.json" };
  const d = await store.createDeployment(
    {
      id: randomUUID(),
      tenant_id: tenant,
      name: "prod-example",
      source: "github",
      source_config: { repo_url: projectDir, deployment_type: "prod" },
      source_revision_config: config,
      secrets: [],
      status: "AWAITING_DATABASE",
    },
    { id: randomUUID(), status: "QUEUED", source: "github", source_revision_config: config },
  );
  reconciler.wake();
  const rev = await until("DEPLOYED", async () => {
    const r = await store.getRevision(d.id, d.latest_revision_id!);
    return r && ["DEPLOYED", "BUILD_FAILED", "DEPLOY_FAILED"].includes(r.status) ? r : undefined;
  });
  expect(rev.status, rev.status_message ?? "").toBe("DEPLOYED");

  const client = new Client({ apiUrl: `${base}/deployments/${d.id}`, callerOptions: { maxRetries: 0 } });
  const thread = await client.threads.create();
  const result = (await client.runs.wait(thread.thread_id, "chat", {
    input: { messages: [{ role: "user", content: "hi" }] },
  })) as { messages: { content: string }[] };
  expect(result.messages.at(-1)!.content).toContain("Hello from Hangar");

  const { schema, redisPrefix } = clusterNames(d.id);
  expect(schema).toBe(`d_${d.id.replace(/-/g, "")}`);
  expect(await schemaExists(schema)).toBe(true);

  await store.updateDeployment(d.id, { deleted_at: new Date().toISOString() });
  reconciler.wake();
  await until("the deployment to be purged", async () => (await store.getDeploymentById(d.id)) === null);
  expect(await schemaExists(schema)).toBe(false);
  const redis = testRedis();
  await redis.connect();
  try {
    expect(await redis.keys(`${redisPrefix}*`)).toEqual([]);
  } finally {
    redis.disconnect();
  }
  expect((await fetch(`${base}/deployments/${d.id}/ok`)).status).toBe(404);
});
