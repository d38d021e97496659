// Test harness for the control plane: starts the real `hangar control-plane` CLI as a child process on a free
// loopback port (without the local reconciler unless asked), runs its admin commands, and a small JSON client.
// The store is SQLite in the data dir, or in the "postgres" project (HANGAR_TEST_BACKEND=postgres) PostgreSQL:
// DATABASE_URL with a schema per data dir (`t_cp` + a hash of its path, so a restart or an admin command on the
// same dir finds the same store), dropped after the test file. `cpTenancy` makes organizations, workspaces and
// keys on a store in this process, for tests whose subject is not the admin CLI.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { BACKEND, DATABASE_URL, TEST_SCHEMA_PREFIX, ident, testPg } from "./backend.ts";
import { createKey, createOrg, createWorkspace } from "../../src/control-plane/admin.ts";
import type { CpStore, Plan } from "../../src/control-plane/domain/types.ts";
import { openCpPostgresStore } from "../../src/control-plane/store/postgres.ts";
import { openCpSqliteStore } from "../../src/control-plane/store/sqlite.ts";
import { BIN, ROOT, runHangar, tempDir } from "./server.ts";

export type CpStoreKind = "sqlite" | "postgres";

/** The store control planes of this test run use by default. */
export const CP_STORE: CpStoreKind = BACKEND === "postgres" ? "postgres" : "sqlite";

export interface CpProcess {
  url: string;
  dataDir: string;
  /** The PostgreSQL schema of its store; undefined on SQLite. */
  schema?: string;
  proc: ChildProcess;
  output: () => string;
  stop: () => Promise<void>;
}

export interface CpStartOptions {
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** Run the local reconciler (default: no, `--no-reconcile`: revisions stay QUEUED). */
  reconcile?: boolean;
  /** Default CP_STORE. */
  store?: CpStoreKind;
}

/** The PostgreSQL schema of the control plane store of a data dir (postgres store). */
export function cpSchemaFor(dataDir: string): string {
  const hash = createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 16);
  return `${TEST_SCHEMA_PREFIX}cp${hash}`;
}

/** Schemas this test file's control planes used: dropped after the file (their processes stopped by then). */
const schemas = new Set<string>();

/** After each test file (test/helpers/file-cleanup.ts): drops the schemas its control planes used. */
export async function dropFileCpSchemas(): Promise<void> {
  for (const s of [...schemas]) await dropCpSchema(s);
}

/** Drops a control plane store's schema (its processes must be stopped). */
export async function dropCpSchema(schema: string): Promise<void> {
  const db = testPg();
  try {
    await db.connect();
    await db.query(`DROP SCHEMA IF EXISTS ${ident(schema)} CASCADE`);
  } finally {
    await db.end().catch(() => {});
  }
  schemas.delete(schema);
}

/** The env selecting the store of `dataDir`: nothing for SQLite, DATABASE_URL + the schema for PostgreSQL. */
export function cpStoreEnv(dataDir: string, store: CpStoreKind = CP_STORE): Record<string, string> {
  if (store === "sqlite") return {};
  const schema = cpSchemaFor(dataDir);
  if (BACKEND !== "postgres") throw new Error("a PostgreSQL control plane store needs the postgres project");
  schemas.add(schema);
  return { DATABASE_URL, HANGAR_CP_DATABASE_SCHEMA: schema };
}

/** Env that selects a backend: a control plane gets it only from the harness or the test. */
const BACKEND_ENV = ["DATABASE_URL", "REDIS_URL", "HANGAR_DATABASE_SCHEMA", "HANGAR_REDIS_PREFIX"];

/**
 * Where test control planes may deploy local directories from (HANGAR_CP_SOURCE_ROOTS; a test may give its
 * own): the repository (examples/) and the temp directory the tests' projects are made in.
 */
export const TEST_SOURCE_ROOTS = [ROOT, realpathSync(tmpdir())].join(":");

function cpEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.startsWith("HANGAR_CP_")) delete env[k];
  for (const k of BACKEND_ENV) delete env[k];
  delete env.PORT;
  // Pretty logs (the command's default is JSON): tests read its human lines, quotes unescaped.
  // Its deployments without graph threads and without compiling their graphs' types ahead (the control plane
  // passes its HANGAR_GRAPH_THREADS and HANGAR_SCHEMAS_AHEAD on), as the harness's servers (test/helpers/server.ts
  // baseEnv): each revision's start compiled them again, seconds of CPU per graph that few tests ask for.
  return {
    ...env,
    LOG_FORMAT: "pretty",
    HANGAR_GRAPH_THREADS: env.HANGAR_GRAPH_THREADS ?? "0",
    HANGAR_SCHEMAS_AHEAD: env.HANGAR_SCHEMAS_AHEAD ?? "false",
    HANGAR_CP_SOURCE_ROOTS: TEST_SOURCE_ROOTS,
    ...extra,
  };
}

/**
 * Everything the store of `dataDir` holds, as text (to check what is, or is not, stored): the SQLite files'
 * bytes, or every row of the PostgreSQL schema's tables.
 */
export async function cpStoreDump(dataDir: string, store: CpStoreKind = CP_STORE): Promise<string> {
  if (store === "sqlite") {
    return ["control-plane.db", "control-plane.db-wal"]
      .filter((f) => existsSync(join(dataDir, f)))
      .map((f) => readFileSync(join(dataDir, f)).toString("latin1"))
      .join("");
  }
  const schema = cpSchemaFor(dataDir);
  const db = testPg();
  try {
    await db.connect();
    const { rows } = await db.query<{ t: string }>(
      "SELECT table_name AS t FROM information_schema.tables WHERE table_schema = $1",
      [schema],
    );
    let out = "";
    for (const { t } of rows) {
      const r = await db.query(`SELECT x::text AS row FROM ${ident(schema)}.${ident(t)} x`);
      out += r.rows.map((x) => x.row).join("\n") + "\n";
    }
    return out;
  } finally {
    await db.end().catch(() => {});
  }
}

function waitExit(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((res) => proc.once("exit", () => res()));
}

/** Starts `hangar control-plane --port 0 --data-dir <dir>`; resolves once it prints where it listens. */
export async function startCp(opts: CpStartOptions = {}): Promise<CpProcess> {
  const dataDir = opts.dataDir ?? tempDir("hangar-cp-test-");
  const storeEnv = cpStoreEnv(dataDir, opts.store);
  const args = [
    BIN,
    "control-plane",
    "--port",
    "0",
    "--host",
    "127.0.0.1",
    "--data-dir",
    dataDir,
    ...(opts.reconcile ? [] : ["--no-reconcile"]),
    ...(opts.args ?? []),
  ];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: cpEnv({ ...storeEnv, ...opts.env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((res, rej) => {
    const onData = () => {
      const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
      if (m) {
        proc.stdout!.off("data", onData);
        res(m[1]);
      }
    };
    proc.stdout!.on("data", onData);
    proc.once("exit", (code) =>
      rej(new Error(`hangar control-plane exited with ${code} before listening:\n${out}`)),
    );
  });
  return {
    url,
    dataDir,
    schema: storeEnv.HANGAR_CP_DATABASE_SCHEMA,
    proc,
    output: () => out,
    stop: async () => {
      proc.kill("SIGTERM");
      await waitExit(proc);
    },
  };
}

/** Runs `hangar control-plane admin <args> --data-dir <dir>` on the store of `dataDir` (CP_STORE). */
export function cpAdmin(
  dataDir: string,
  ...args: string[]
): Promise<{ code: number | null; output: string }> {
  return runHangar(["control-plane", "admin", ...args, "--data-dir", dataDir], cpStoreEnv(dataDir));
}

/** Runs `fn` on the store of `dataDir` (CP_STORE), opened in this process as `hangar control-plane admin` opens it. */
async function onCpStore<T>(dataDir: string, fn: (store: CpStore) => Promise<T>): Promise<T> {
  const env = cpStoreEnv(dataDir);
  const store = env.DATABASE_URL
    ? await openCpPostgresStore({
        url: env.DATABASE_URL,
        schema: env.HANGAR_CP_DATABASE_SCHEMA,
        dataDir,
        poolSize: 2,
      })
    : openCpSqliteStore(dataDir);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

/**
 * The admin actions of `hangar control-plane admin` (src/control-plane/admin.ts), run in this process on the
 * store of `dataDir` (a control plane may be running on it): for tests that need tenants but are not about the
 * admin CLI (test/control-plane/admin.test.ts is), without a CLI start per call. Each returns the new id or key.
 */
export function cpTenancy(dataDir: string) {
  return {
    createOrg: (name: string, plan: Plan) =>
      onCpStore(dataDir, async (s) => (await createOrg(s, name, plan)).id),
    createWorkspace: (orgId: string, name: string) =>
      onCpStore(dataDir, async (s) => (await createWorkspace(s, orgId, name)).id),
    createKey: (scope: { workspaceId: string } | { orgId: string }) =>
      onCpStore(dataDir, async (s) => (await createKey(s, scope)).key),
    /** An organization on `plan` with one workspace, and a key of that workspace. */
    tenant: (name: string, plan: Plan) =>
      onCpStore(dataDir, async (s) => {
        const org = await createOrg(s, name, plan);
        const ws = await createWorkspace(s, org.id, "main");
        return { orgId: org.id, workspaceId: ws.id, key: (await createKey(s, { workspaceId: ws.id })).key };
      }),
  };
}

/** The id an admin command printed after `Created <what> `. */
export function createdId(output: string, what: "organization" | "workspace"): string {
  const m = new RegExp(`Created ${what} ([0-9a-f-]{36})`).exec(output);
  if (!m) throw new Error(`no ${what} id in: ${output}`);
  return m[1];
}

/** The key `admin create-key` printed (its last line). */
export const createdKey = (output: string): string => output.trim().split("\n").pop()!.trim();

export interface CpResponse {
  status: number;
  body: any;
  headers: Headers;
}

/** A JSON client for the control plane with fixed headers (the key, the tenant). */
export function cpClient(url: string, headers: Record<string, string> = {}) {
  const call = async (method: string, path: string, body?: unknown): Promise<CpResponse> => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { ...headers, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: any = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: the raw text
    }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    get: (path: string) => call("GET", path),
    post: (path: string, body?: unknown) => call("POST", path, body),
    patch: (path: string, body?: unknown) => call("PATCH", path, body),
    put: (path: string, body?: unknown) => call("PUT", path, body),
    del: (path: string) => call("DELETE", path),
  };
}

export type CpClient = ReturnType<typeof cpClient>;
