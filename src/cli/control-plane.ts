// `hangar control-plane`: runs the control plane; `hangar control-plane admin ...` manages organizations,
// workspaces and API keys in its store (whether the control plane runs or not). The store is PostgreSQL when
// DATABASE_URL is set (schema HANGAR_CP_DATABASE_SCHEMA, default hangar_control_plane), else SQLite in the
// data directory, which holds uploads, builds and embedded deployments' data either way.
import { join, resolve } from "node:path";
import type { Command } from "commander";
import { AdminError, createKey, createOrg, createWorkspace } from "../control-plane/admin.js";
import { principal } from "../control-plane/http/auth.js";
import { forbidden } from "../control-plane/http/errors.js";
import { SandboxConfigError, sandboxFor, type Sandbox } from "../control-plane/runtime/local/sandbox.js";
import { tenantGate } from "../control-plane/runtime/local/sandbox-gate.js";
import {
  ControlPlaneConfigError,
  startControlPlane,
  type ControlPlaneOptions,
} from "../control-plane/server.js";
import { registerDeploymentRoutes, type DeploymentRouter } from "../control-plane/http/router.js";
import { startLocalReconciler } from "../control-plane/runtime/local/runtime.js";
import { DEFAULT_CP_SCHEMA, openCpPostgresStore } from "../control-plane/store/postgres.js";
import { openCpSqliteStore } from "../control-plane/store/sqlite.js";
import type { CpStore } from "../control-plane/domain/types.js";
import { settings, SettingsError, type ControlPlaneSettings } from "../lib/settings.js";
import { checkSchemaName, PostgresConnectError } from "../lib/db/postgres.js";
import { MigrationError } from "../lib/errors.js";
import { rootLogger } from "../lib/logger.js";
import { setUpLogging } from "./dev.js";

/** The data directory when --data-dir is not given (named in the help, in ./main.ts). */
const DEFAULT_DATA_DIR = ".hangar-control-plane";

export interface RunOptions {
  port?: string;
  host: string;
  dataDir?: string;
  publicUrl?: string;
  /** false with --no-reconcile: serve the API only (revisions stay QUEUED). */
  reconcile: boolean;
}

interface CpDatabase {
  url: string;
  schema: string;
}

/**
 * The control plane's PostgreSQL store when DATABASE_URL is set (schema HANGAR_CP_DATABASE_SCHEMA, default
 * hangar_control_plane, separate from the `d_<id>` schemas of prod deployments); undefined for SQLite.
 */
function cpDatabase(env: ControlPlaneSettings = settings().controlPlane): CpDatabase | undefined {
  const url = env.databaseUrl?.trim();
  if (!url) return undefined;
  const schema = env.databaseSchema?.trim() || DEFAULT_CP_SCHEMA;
  try {
    checkSchemaName(schema);
  } catch (e) {
    throw new ControlPlaneConfigError(`HANGAR_CP_DATABASE_SCHEMA: ${(e as Error).message}`);
  }
  return { url, schema };
}

/** Where the PostgreSQL store is, for the start-up lines: host, port and database, never the password. */
function describeDatabase(db: CpDatabase): string {
  let where = "";
  try {
    const u = new URL(db.url);
    where = ` at ${u.hostname || "localhost"}:${u.port || "5432"}${u.pathname.length > 1 ? u.pathname : ""}`;
  } catch {
    // not a URL (a connection string pg understands otherwise): the server is not named
  }
  return `PostgreSQL${where}, schema "${db.schema}"`;
}

/** Errors reported in one line, without a stack: settings, an unreachable database, a migration. */
const oneLine = (e: unknown) =>
  e instanceof ControlPlaneConfigError ||
  e instanceof SettingsError ||
  e instanceof AdminError ||
  e instanceof PostgresConnectError ||
  e instanceof MigrationError ||
  e instanceof SandboxConfigError;

function parsePort(raw: string): number | undefined {
  const n = Number(raw);
  return /^\d+$/.test(raw) && n <= 65535 ? n : undefined;
}

/**
 * The deployment router (each deployment's URL, registered before the server listens) and the local
 * reconciler (builds revisions and runs their Agent Servers on this machine, started once it listens).
 * Prod deployments run on the control plane's own DATABASE_URL/REDIS_URL when both are set. Builds and
 * deployments run sandboxed where the host can; where it cannot, only one organization may deploy (a create
 * by another is refused).
 */
function localRuntime(
  onSandbox: (s: Sandbox) => void,
): Pick<ControlPlaneOptions, "reconciler" | "extraRoutes"> {
  let router: DeploymentRouter | undefined;
  let sandbox: Sandbox | undefined;
  return {
    extraRoutes: (app, ctx) => {
      router = registerDeploymentRoutes(app);
      const s = (sandbox = sandboxFor(ctx.dataDir));
      onSandbox(s);
      if (s.enabled) return;
      const gate = tenantGate(ctx.store, s);
      app.addHook("preHandler", async (req) => {
        if (req.method !== "POST" || req.routeOptions.url !== "/v2/deployments") return;
        const body = req.body as { source_config?: { listener_id?: string | null } } | undefined;
        if (body?.source_config?.listener_id) return; // runs on a listener's machine, not here
        const refused = await gate.refusal(principal(req).organization.id);
        if (refused) throw forbidden(refused);
      });
    },
    reconciler: (ctx) => {
      // startControlPlane adds the extra routes (the router) before it starts the reconciler.
      if (!router) throw new Error("the deployment router must be registered before the reconciler starts");
      return startLocalReconciler({
        ...ctx,
        router,
        sandbox,
        databaseUrl: settings().controlPlane.databaseUrl,
        redisUrl: settings().controlPlane.redisUrl,
      });
    },
  };
}

export async function runControlPlane(opts: RunOptions): Promise<number> {
  let env: ControlPlaneSettings;
  try {
    env = settings().controlPlane;
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    console.error(`hangar control-plane: ${e.message}`);
    // A bad PORT is a usage error, as a bad --port (PORT is the group's first variable, so named first).
    return e.message.startsWith("PORT ") ? 2 : 1;
  }
  const port = opts.port === undefined ? (env.port ?? 8300) : parsePort(opts.port);
  if (port === undefined) {
    console.error(`hangar control-plane: invalid port "${opts.port}": expected 0-65535`);
    return 2;
  }
  if (!setUpLogging("control-plane", "json")) return 2;
  const log = rootLogger();
  const dataDir = resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  try {
    const database = cpDatabase(env);
    let sandbox: Sandbox | undefined;
    const cp = await startControlPlane({
      dataDir,
      database,
      host: opts.host,
      port,
      publicUrl: opts.publicUrl ?? env.publicUrl,
      log,
      ...(opts.reconcile ? localRuntime((s) => (sandbox = s)) : {}),
    });
    // The URL ends the message: test harnesses read it there (in JSON too).
    log.info(`Hangar control plane listening on ${cp.url}`);
    log.info(`data: ${dataDir}`);
    log.info(`store: ${database ? describeDatabase(database) : join(dataDir, "control-plane.db")}`);
    log.info(`docs: ${cp.url}/docs`);
    if (sandbox) log.info(`sandbox: ${sandbox.describe()}`);
    let stopping = false;
    const stop = async () => {
      if (stopping) process.exit(130);
      stopping = true;
      await cp.close().catch(() => {});
      process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    return await new Promise<number>(() => {});
  } catch (e) {
    if (oneLine(e)) {
      log.error(`hangar control-plane: ${(e as Error).message}`);
      return 1;
    }
    log.error({ err: e }, `hangar control-plane: failed to start: ${(e as Error)?.message ?? e}`);
    return 1;
  }
}

/**
 * Runs one admin action on the control plane's store (the same choice as `hangar control-plane`: PostgreSQL
 * when DATABASE_URL is set, else the data directory's SQLite file), printing its result or its error.
 */
async function admin(cmd: Command, action: (store: CpStore) => Promise<string>): Promise<number> {
  const opts = cmd.optsWithGlobals() as { dataDir?: string };
  const dataDir = resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  let store: CpStore | undefined;
  try {
    const database = cpDatabase();
    store = database
      ? await openCpPostgresStore({ ...database, dataDir, poolSize: 2 })
      : openCpSqliteStore(dataDir);
    console.log(await action(store));
    return 0;
  } catch (e) {
    if (oneLine(e)) {
      console.error(`hangar control-plane admin: ${(e as Error).message}`);
      return 1;
    }
    throw e;
  } finally {
    await store?.close();
  }
}

/** The `control-plane admin` actions (their flags are declared in ./main.ts). */
export type AdminAction =
  | { kind: "create-org"; name: string; plan: string }
  | { kind: "create-workspace"; org: string; name: string }
  | { kind: "create-key"; workspace?: string; org?: string };

/** Runs one `control-plane admin` action on the store, printing its result; the exit code. */
export function runAdmin(cmd: Command, a: AdminAction): Promise<number> {
  return admin(cmd, async (store) => {
    switch (a.kind) {
      case "create-org": {
        const org = await createOrg(store, a.name, a.plan);
        return `Created organization ${org.id} (name "${org.name}", plan ${org.plan})`;
      }
      case "create-workspace": {
        const ws = await createWorkspace(store, a.org, a.name);
        return `Created workspace ${ws.id} (name "${ws.name}") in organization ${ws.organization_id}`;
      }
      case "create-key": {
        if (a.workspace && a.org) throw new AdminError("give either --workspace or --org, not both");
        const { key, record } = await createKey(store, { workspaceId: a.workspace, orgId: a.org });
        const scope = record.workspace_id
          ? `workspace ${record.workspace_id}`
          : `organization ${record.organization_id} (all its workspaces)`;
        return `Created API key ${record.id} for ${scope}. It is shown only now:\n${key}`;
      }
    }
  });
}
