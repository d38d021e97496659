// `hangar control-plane`: runs the control plane (its `admin` commands are in ./control-plane-admin.ts). The
// store is PostgreSQL when DATABASE_URL is set (./cp-store.ts), else SQLite in the data directory, which holds
// uploads, builds and embedded deployments' data either way.
import { join, resolve } from "node:path";
import { principal } from "../control-plane/http/auth.js";
import { forbidden } from "../control-plane/http/errors.js";
import { sandboxFor, type Sandbox } from "../control-plane/runtime/local/sandbox.js";
import { tenantGate } from "../control-plane/runtime/local/sandbox-gate.js";
import { imageSettingsOf, startControlPlane, type ControlPlaneOptions } from "../control-plane/server.js";
import { registerDeploymentRoutes, type DeploymentRouter } from "../control-plane/http/router.js";
import { startLocalReconciler } from "../control-plane/runtime/local/runtime.js";
import { settings, SettingsError, type ControlPlaneSettings } from "../lib/settings.js";
import { rootLogger } from "../lib/logger.js";
import { ensureConsoles } from "./consoles.js";
import { setUpLogging } from "./logging.js";
import { invalidPort, portFlag } from "./port.js";
import { cpDatabase, DEFAULT_DATA_DIR, describeDatabase, reportedInOneLine } from "./cp-store.js";

export interface RunOptions {
  port?: string;
  host: string;
  dataDir?: string;
  publicUrl?: string;
  /** false with --no-reconcile: serve the API only (revisions stay QUEUED). */
  reconcile: boolean;
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
        // startControlPlane checked them.
        images: imageSettingsOf(settings().controlPlane),
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
  const port = opts.port === undefined ? (env.port ?? 8300) : portFlag(opts.port);
  if (port === undefined) {
    console.error(`hangar control-plane: ${invalidPort(String(opts.port))}`);
    return 2;
  }
  if (!setUpLogging("control-plane", "json")) return 2;
  const log = rootLogger();
  const dataDir = resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  await ensureConsoles(log);
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
    log.info(`console: ${cp.url}/`);
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
    if (reportedInOneLine(e)) {
      log.error(`hangar control-plane: ${(e as Error).message}`);
      return 1;
    }
    log.error({ err: e }, `hangar control-plane: failed to start: ${(e as Error)?.message ?? e}`);
    return 1;
  }
}
