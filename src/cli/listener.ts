// `hangar listener`: the reconcile loop of one listener against Kubernetes. It polls the control plane for the
// deployments assigned to the listener; with --dry-run it prints their objects as YAML instead of applying them.
import { DEFAULT_IMAGE, K8sRuntime } from "../control-plane/k8s.js";
import { ControlPlaneClient, ControlPlaneError, ListenerLoop } from "../control-plane/listener.js";

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

const fail = (msg: string, code = 1) => {
  console.error(`hangar listener: ${msg}`);
  return code;
};

export async function runListener(opts: ListenerOptions): Promise<number> {
  const url = opts.controlPlane ?? process.env.HANGAR_CONTROL_PLANE_URL;
  const apiKey = opts.apiKey ?? process.env.HANGAR_API_KEY;
  const listenerId = opts.listenerId ?? process.env.HANGAR_LISTENER_ID;
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

  const log = (msg: string) => console.error(`hangar listener: ${msg}`);
  let runtime: K8sRuntime | null = null;
  if (!opts.dryRun) {
    try {
      runtime = new K8sRuntime({ rolloutTimeoutMs: timeout * 1000, log });
    } catch (e) {
      return fail(`${(e as Error).message}; --dry-run prints the objects without a cluster`);
    }
  }
  const loop = new ListenerLoop({
    client: new ControlPlaneClient({ url, apiKey, listenerId, tenantId: opts.tenantId }),
    runtime,
    image: opts.image ?? DEFAULT_IMAGE,
    databaseUrl: opts.databaseUrl,
    redisUrl: opts.redisUrl,
    out: (text) => process.stdout.write(text),
    log,
  });
  try {
    if (opts.once) {
      const r = await loop.pass();
      return r.failed.length ? 1 : 0;
    }
    const stop = new AbortController();
    for (const sig of ["SIGINT", "SIGTERM"] as const) process.once(sig, () => stop.abort());
    log(`listener ${listenerId} polling ${url} every ${interval}s${opts.dryRun ? " (dry run)" : ""}`);
    await loop.run(interval * 1000, stop.signal);
    return 0;
  } catch (e) {
    if (e instanceof ControlPlaneError) return fail(e.message);
    return fail(`unexpected error: ${(e as Error).message ?? e}`);
  }
}
