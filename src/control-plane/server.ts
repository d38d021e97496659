// `startControlPlane`: opens the store (SQLite in the data dir, or PostgreSQL), bootstraps tenancy, builds the
// app (plus extra routes such as the deployment router), listens, then starts the reconciler, which the API
// wakes after every change.
import { resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { rootLogger, type Logger } from "../lib/logger.js";
import { bootstrap } from "./admin.js";
import { buildCpApp } from "./http/app.js";
import type { CpContext } from "./domain/context.js";
import { DEFAULT_CP_SCHEMA, openCpPostgresStore } from "./store/postgres.js";
import { openCpSqliteStore } from "./store/sqlite.js";
import type { CpStore } from "./domain/types.js";
import { parseSourceRoots } from "./domain/source-roots.js";
import { settings, type ControlPlaneSettings } from "../lib/settings.js";
import { ConfigError } from "../lib/errors.js";
import { listen } from "../lib/request-log.js";
import { pullConfig, type ImageSettings } from "./runtime/local/image.js";

/** What a reconciler gets once the control plane listens. */
export interface ReconcilerContext {
  store: CpStore;
  dataDir: string;
  /** The URL the control plane answers at (deployments are at `<publicUrl>/deployments/<id>`). */
  publicUrl: string;
  app: FastifyInstance;
  log: Logger;
}

export interface ReconcilerHandle {
  /** Something changed: reconcile soon. */
  wake(): void;
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  dataDir: string;
  host: string;
  port: number;
  /** The URL clients use; default `http://<host>:<port>` (127.0.0.1 for a wildcard host). */
  publicUrl?: string;
  /** Where the control plane logs; default the process's logger (`rootLogger()`). */
  log?: Logger;
  reconciler?: (ctx: ReconcilerContext) => ReconcilerHandle | Promise<ReconcilerHandle>;
  /** Routes added to the app before it listens (e.g. the deployment router). */
  extraRoutes?: (
    app: FastifyInstance,
    ctx: { store: CpStore; dataDir: string; log: Logger },
  ) => void | Promise<void>;
  /** Largest accepted upload; default HANGAR_CP_MAX_UPLOAD_BYTES, else 200 MB. */
  maxUploadBytes?: number;
  /** The HANGAR_CP_* settings; default this process's. */
  settings?: ControlPlaneSettings;
  /** A store to use instead of `<dataDir>/control-plane.db`. */
  store?: CpStore;
  /**
   * Keep the store on PostgreSQL (in `schema`, default "hangar_control_plane") instead of
   * `<dataDir>/control-plane.db`; the data directory still holds uploads, builds and deployments' data.
   */
  database?: { url: string; schema?: string };
}

export interface ControlPlane {
  url: string;
  store: CpStore;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** A wrong setting (e.g. HANGAR_CP_MAX_UPLOAD_BYTES), reported without a stack. */
export class ControlPlaneConfigError extends ConfigError {}

/**
 * The settings of images built for listeners (HANGAR_CP_IMAGE_*), or undefined when none are built; throws when
 * they are incomplete.
 */
export function imageSettingsOf(env: ControlPlaneSettings): ImageSettings | undefined {
  if (!env.imageRegistry) return undefined;
  if (!env.imageBase) {
    throw new Error(
      "HANGAR_CP_IMAGE_REGISTRY is set without HANGAR_CP_IMAGE_BASE, the image (Node and Hangar: `hangar build " +
        "--base-only`) the images of listeners' deployments are assembled on",
    );
  }
  return { registry: env.imageRegistry, base: env.imageBase, dockerConfig: env.imageDockerConfig };
}

function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "" || host === "::") return "127.0.0.1";
  return host.includes(":") ? `[${host}]` : host;
}

export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const log = opts.log ?? rootLogger();
  const dataDir = resolve(opts.dataDir);
  let env: ControlPlaneSettings;
  let sourceRoots: string[];
  let imagePullConfig: string | undefined;
  try {
    env = opts.settings ?? settings().controlPlane;
    sourceRoots = parseSourceRoots(env.sourceRoots);
    imagePullConfig = imageSettingsOf(env) && pullConfig(imageSettingsOf(env)!);
  } catch (e) {
    throw new ControlPlaneConfigError((e as Error).message);
  }
  const maxBytes = opts.maxUploadBytes ?? env.maxUploadBytes;
  const pgSchema = opts.database ? (opts.database.schema ?? DEFAULT_CP_SCHEMA) : undefined;
  const store =
    opts.store ??
    (opts.database
      ? await openCpPostgresStore({
          url: opts.database.url,
          schema: pgSchema,
          dataDir,
          secretKey: env.secretKey,
          log,
        })
      : openCpSqliteStore(dataDir, { secretKey: env.secretKey, log }));
  let publicUrl = "";
  let reconciler: ReconcilerHandle | undefined;
  const ctx: CpContext = {
    store,
    dataDir,
    publicUrl: () => publicUrl,
    wake: () => reconciler?.wake(),
    maxUploadBytes: maxBytes,
    sourceRoots,
    imageRegistry: env.imageRegistry,
    imagePullConfig,
    log,
  };
  let app: FastifyInstance | undefined;
  try {
    await bootstrap(store, env, dataDir, log, opts.store ? undefined : pgSchema);
    app = await buildCpApp(
      ctx,
      opts.extraRoutes ? (a) => opts.extraRoutes!(a, { store, dataDir, log }) : undefined,
    );
    await listen(app, { host: opts.host, port: opts.port });
    const address = app.server.address();
    const port = typeof address === "object" && address ? address.port : opts.port;
    publicUrl = (opts.publicUrl ?? `http://${urlHost(opts.host)}:${port}`).replace(/\/+$/, "");
    if (opts.reconciler) reconciler = await opts.reconciler({ store, dataDir, publicUrl, app, log });
  } catch (e) {
    await app?.close().catch(() => {});
    await store.close().catch(() => {});
    throw e;
  }
  const started = app;
  let closing: Promise<void> | undefined;
  return {
    url: publicUrl,
    store,
    app: started,
    close: () =>
      (closing ??= (async () => {
        await reconciler?.stop().catch((e) => log.error({ err: e }, "reconciler stop failed"));
        await started.close();
        await store.close();
      })()),
  };
}
