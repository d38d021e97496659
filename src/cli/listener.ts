// `hangar listener`: the control plane's reconcile loop for the deployments assigned to one listener, on
// Kubernetes. It polls the control plane; with --dry-run it prints the objects as YAML instead of applying them
// and reports nothing.
import type { Cluster } from "../control-plane/runtime/k8s/client.js";
import type { ControlPlaneError } from "../control-plane/runtime/k8s/listener.js";
import { configureLogging } from "../lib/logger.js";
import { settings, SettingsError } from "../lib/settings.js";

export interface ListenerOptions {
  controlPlane?: string;
  apiKey?: string;
  listenerId?: string;
  tenantId?: string;
  dryRun?: boolean;
  once?: boolean;
  image?: string;
  databaseUrl?: string;
  redisUrl?: string;
  pollInterval: string;
  rolloutTimeout: string;
}

/** The k8s runtime's modules, which load @kubernetes/client-node (K8sClientMissingError when it is absent). */
async function loadK8sRuntime() {
  const [render, client, listener] = await Promise.all([
    import("../control-plane/runtime/k8s/render.js"),
    import("../control-plane/runtime/k8s/client.js"),
    import("../control-plane/runtime/k8s/listener.js"),
  ]);
  return { ...render, ...client, ...listener };
}

const fail = (msg: string, code = 1) => {
  console.error(`hangar listener: ${msg}`);
  return code;
};

export async function runListener(opts: ListenerOptions): Promise<number> {
  const env = settings().listener;
  const url = opts.controlPlane ?? env.controlPlaneUrl;
  const apiKey = opts.apiKey ?? env.apiKey;
  const listenerId = opts.listenerId ?? env.listenerId;
  if (!url) return fail("--control-plane <url> is required (or HANGAR_CONTROL_PLANE_URL)", 2);
  if (!apiKey) return fail("--api-key <key> is required (or HANGAR_API_KEY)", 2);
  if (!listenerId) return fail("--listener-id <id> is required (or HANGAR_LISTENER_ID)", 2);
  if (!/^https?:\/\/[^/]/.test(url)) return fail(`--control-plane must be an http(s) URL, not "${url}"`, 2);
  const interval = Number(opts.pollInterval);
  const timeout = Number(opts.rolloutTimeout);
  if (!(interval > 0))
    return fail(`--poll-interval must be a positive number of seconds, not "${opts.pollInterval}"`, 2);
  if (!(timeout > 0))
    return fail(`--rollout-timeout must be a positive number of seconds, not "${opts.rolloutTimeout}"`, 2);
  if (!!opts.databaseUrl !== !!opts.redisUrl) return fail("--database-url and --redis-url go together", 2);

  // The Kubernetes client is an optional peer dependency that only this command loads: a clear message without it.
  let k8s: Awaited<ReturnType<typeof loadK8sRuntime>>;
  try {
    k8s = await loadK8sRuntime();
  } catch (e) {
    return fail((e as Error).message);
  }
  const {
    DEFAULT_IMAGE,
    KubeCluster,
    PrintCluster,
    ControlPlaneClient,
    ControlPlaneError,
    listenerReconciler,
  } = k8s;

  let log;
  try {
    // On stderr: stdout carries the YAML of --dry-run.
    log = configureLogging("json", { fd: 2 });
  } catch (e) {
    if (e instanceof SettingsError) return fail(e.message, 2);
    throw e;
  }
  let cluster: Cluster;
  if (opts.dryRun) {
    cluster = new PrintCluster((text) => process.stdout.write(text), log);
  } else {
    try {
      cluster = new KubeCluster({ rolloutTimeoutMs: timeout * 1000, log });
    } catch (e) {
      return fail(`${(e as Error).message}; --dry-run prints the objects without a cluster`);
    }
  }
  let failures = 0;
  let fatal: ControlPlaneError | null = null;
  const stop = new AbortController();
  const reconciler = listenerReconciler({
    client: new ControlPlaneClient({ url, apiKey, listenerId, tenantId: opts.tenantId }),
    cluster,
    dryRun: opts.dryRun,
    image: opts.image ?? DEFAULT_IMAGE,
    databaseUrl: opts.databaseUrl,
    redisUrl: opts.redisUrl,
    log,
    intervalMs: interval * 1000,
    onFailure: () => failures++,
    onPassError: (e) => {
      if (e instanceof ControlPlaneError && e.fatal) {
        fatal = e;
        stop.abort();
      } else if (e instanceof ControlPlaneError) log.warn(e.message);
      else log.error({ err: e }, "reconcile pass failed");
    },
  });
  try {
    if (opts.once) {
      try {
        await reconciler.once();
      } finally {
        await reconciler.stop();
      }
      return failures ? 1 : 0;
    }
    for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => stop.abort());
    log.info(`listener ${listenerId} polling ${url} every ${interval}s${opts.dryRun ? " (dry run)" : ""}`);
    reconciler.start();
    await new Promise((resolve) => stop.signal.addEventListener("abort", resolve, { once: true }));
    await reconciler.stop();
    return fatal ? fail((fatal as ControlPlaneError).message) : 0;
  } catch (e) {
    if (e instanceof ControlPlaneError) return fail(e.message);
    return fail(`unexpected error: ${(e as Error).message ?? e}`);
  }
}
