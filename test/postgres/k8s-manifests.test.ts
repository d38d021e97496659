// Scale-out backend only: the containers of deploy/kubernetes run as their pods run them — each container's command,
// args and environment taken from the rendered external-db overlay (its ConfigMap, its secretKeyRefs filled with this
// machine's PostgreSQL and Redis and an API key), only the port, the interface and the project path made local. The
// migrate init container (`hangar serve --migrate-only`) migrates a fresh schema and exits 0, then says it is up to
// date; the API and the worker answer every probe path with 200 without the API key other requests need, a run goes
// through them, and both exit 0 on SIGTERM. The manifests themselves: test/unit/k8s-manifests.test.ts.
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { clusterTargetFor, dropCluster, ident, testPg } from "../helpers/backend.ts";
import { containersOf, kustomize, type K8sObject } from "../helpers/kustomize.ts";
import {
  BIN,
  EXAMPLE_CONFIG,
  ROOT,
  TEST_SCHEMAS_CACHE,
  cleanupDir,
  runHangar,
  tempDir,
} from "../helpers/server.ts";

const objects = kustomize(join(ROOT, "deploy/kubernetes/overlays/external-db"));
const home = tempDir("hangar-k8s-manifests-");
const target = clusterTargetFor(home);
const API_KEY = "k8s-manifests-test-key";
/** What the user's Secret hangar-secrets holds here. */
const SECRET: Record<string, string> = {
  DATABASE_URI: target.databaseUrl,
  REDIS_URI: target.redisUrl,
  HANGAR_API_KEYS: API_KEY,
  // Encryption at rest through the Secret too (HANGAR_AES_PREVIOUS_KEYS, optional, is left out as a key a Secret
  // does not have: the pod then has no such variable).
  LANGGRAPH_AES_KEY: Buffer.alloc(32, 3).toString("base64"),
};
/** Names of the same settings in the test runner's environment, which would otherwise be inherited. */
const INHERITED = [
  "DATABASE_URL",
  "DATABASE_URI",
  "POSTGRES_URI",
  "POSTGRES_URI_CUSTOM",
  "REDIS_URL",
  "REDIS_URI",
  "REDIS_URI_CUSTOM",
  "HANGAR_DATABASE_SCHEMA",
  "HANGAR_REDIS_PREFIX",
  "REDIS_KEY_PREFIX",
  "HANGAR_SHUTDOWN_GRACE_SECONDS",
  "HANGAR_API_KEYS",
  "PORT",
];

const procs = new Set<ChildProcess>();
afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await Promise.all([...procs].map(exited));
  await dropCluster(target);
  cleanupDir(home);
});

const exited = (p: ChildProcess): Promise<number | null> =>
  p.exitCode !== null || p.signalCode !== null
    ? Promise.resolve(p.exitCode)
    : new Promise((res) => p.once("exit", (code) => res(code)));

function container(deployment: string, name: string): Record<string, any> {
  const d = objects.find((o: K8sObject) => o.kind === "Deployment" && o.metadata.name === deployment);
  const c = d && containersOf(d).find((x) => x.name === name);
  expect(c, `${deployment}: container ${name}`).toBeDefined();
  return c!;
}

/** The container's environment as the pod gets it, on this test's schema and Redis prefix. */
function podEnv(c: Record<string, any>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of INHERITED) delete env[k];
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) {
      const cm = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === from.configMapRef.name);
      Object.assign(env, cm!.data);
    } else expect(from.secretRef.optional, `${c.name}: envFrom ${from.secretRef.name}`).toBe(true);
  }
  for (const e of c.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) expect(ref.name).toBe("hangar-secrets");
    const value = ref ? SECRET[ref.key] : e.value;
    if (value === undefined && ref?.optional) continue;
    expect(value, `${c.name}: ${e.name}`).toBeDefined();
    env[e.name] = value;
  }
  return {
    ...env,
    HANGAR_DATABASE_SCHEMA: target.schema,
    HANGAR_REDIS_PREFIX: target.redisPrefix,
    // The test run's schema cache, not extracted ahead (as every server of the suite): not what is tested here.
    HANGAR_SCHEMAS_CACHE_DIR: TEST_SCHEMAS_CACHE,
    HANGAR_SCHEMAS_AHEAD: "false",
  };
}

/** The container's command line with the project, port and interface of this machine. */
function commandLine(c: Record<string, any>): string[] {
  expect(c.command).toEqual(["hangar"]);
  const args = [...(c.args as string[])];
  const swap = (flag: string, from: string, to: string) => {
    const i = args.indexOf(flag);
    expect(args[i + 1], `${c.name}: ${flag}`).toBe(from);
    args[i + 1] = to;
  };
  swap("--config", "langgraph.json", EXAMPLE_CONFIG);
  if (args.includes("--port")) {
    swap("--port", "8000", "0");
    swap("--host", "0.0.0.0", "127.0.0.1");
  }
  return [BIN, ...args];
}

function run(c: Record<string, any>): ChildProcess & { out: () => string } {
  const proc = spawn(process.execPath, commandLine(c), {
    cwd: ROOT,
    env: podEnv(c),
    stdio: ["ignore", "pipe", "pipe"],
  });
  procs.add(proc);
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  return Object.assign(proc, { out: () => out });
}

/** Runs a container that exits; its code, output, and the messages of its log (JSON lines: LOG_FORMAT=json). */
async function runToEnd(
  c: Record<string, any>,
): Promise<{ code: number | null; output: string; msgs: string[] }> {
  const proc = run(c);
  const code = await exited(proc);
  const output = proc.out();
  const msgs = output
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { msg: string }).msg);
  return { code, output, msgs };
}

/** Starts a server container; resolves with its URL once it listens. */
async function serve(
  c: Record<string, any>,
): Promise<{ proc: ChildProcess; url: string; out: () => string }> {
  const proc = run(c);
  const url = await new Promise<string>((res, rej) => {
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(proc.out());
      if (m) res(m[1]);
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", (code) => rej(new Error(`${c.name} exited with ${code}:\n${proc.out()}`)));
  });
  return { proc, url, out: proc.out };
}

/** The paths of the container's startup, readiness and liveness probes (each on the port named http). */
function probePaths(c: Record<string, any>): string[] {
  const http = c.ports.find((p: any) => p.name === "http");
  expect(http.containerPort).toBe(8000);
  const probes = [c.startupProbe, c.readinessProbe, c.livenessProbe];
  for (const p of probes) expect(p?.httpGet?.port, c.name).toBe("http");
  return [...new Set(probes.map((p) => p.httpGet.path as string))];
}

describe("deploy/kubernetes containers, run as their pods run them", () => {
  it("the migrate init container migrates the schema and exits 0; again, it is up to date", async () => {
    for (const deployment of ["hangar-api", "hangar-workers"]) {
      expect(container(deployment, "migrate").args).toEqual(container("hangar-api", "migrate").args);
    }
    const migrate = container("hangar-api", "migrate");
    const first = await runToEnd(migrate);
    expect(first.code, first.output).toBe(0);
    expect(first.msgs).toContainEqual(
      expect.stringMatching(`^schema "${target.schema}" migrated: applied 1, `),
    );
    const db = testPg();
    await db.connect();
    try {
      const { rows } = await db.query(
        `SELECT count(*)::int AS n FROM ${ident(target.schema)}.schema_migrations`,
      );
      expect(rows[0].n).toBeGreaterThan(0);
      // LangGraph's checkpoint tables too.
      const tables = await db.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = $1",
        [target.schema],
      );
      expect(tables.rows.map((r) => r.table_name)).toEqual(
        expect.arrayContaining(["runs", "threads", "checkpoints", "checkpoint_writes", "checkpoint_blobs"]),
      );
    } finally {
      await db.end();
    }
    const again = await runToEnd(migrate);
    expect(again.code, again.output).toBe(0);
    expect(again.msgs).toEqual([`schema "${target.schema}" is up to date`]);
  });

  it("--migrate-only without a database URL says what it needs and exits 2", async () => {
    const { code, output } = await runHangar(["serve", "--migrate-only"]);
    expect(code, output).toBe(2);
    expect(output).toContain("--migrate-only needs DATABASE_URL (or DATABASE_URI)");
  });

  it("the API and the worker answer their probes with 200 (no API key), run a graph, and exit 0 on SIGTERM", async () => {
    const apiContainer = container("hangar-api", "api-server");
    const workerContainer = container("hangar-workers", "worker");
    const api = await serve(apiContainer);
    const worker = await serve(workerContainer);
    for (const [c, server] of [
      [apiContainer, api],
      [workerContainer, worker],
    ] as const) {
      for (const path of probePaths(c)) {
        const res = await fetch(`${server.url}${path}`);
        expect(res.status, `${c.name} GET ${path}`).toBe(200);
      }
    }
    // HANGAR_API_KEYS from the Secret applies to the API (but its probes).
    const refused = await fetch(`${api.url}/assistants/search`, { method: "POST", body: "{}" });
    expect(refused.status).toBe(401);
    // A run the API queues and the worker executes.
    const client = new Client({ apiUrl: api.url, apiKey: API_KEY, callerOptions: { maxRetries: 0 } });
    const values = (await client.runs.wait(null, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    })) as { messages: { content: string }[] };
    expect(values.messages.length).toBeGreaterThan(1);
    for (const server of [api, worker]) {
      server.proc.kill("SIGTERM");
      expect(await exited(server.proc), server.out()).toBe(0);
    }
    expect(worker.out()).toContain("run finished");
  });
});
