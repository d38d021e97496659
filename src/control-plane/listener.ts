// The listener's reconcile loop: polls the control plane for the deployments assigned to a listener, rolls
// their revisions out on Kubernetes (or prints the objects, dry run), and reports statuses and deploy logs back.
// The control plane never calls a listener.
import { RenderError, namespaceFor, renderRevision, toYaml, type HangarObject } from "./k8s.js";
import {
  FINAL_REVISION_STATUSES,
  type Deployment,
  type Listener,
  type LogLevel,
  type Revision,
  type RevisionStatus,
  type Secret,
} from "./types.js";

/** A deployment assigned to the listener, as `GET /v2/listeners/{id}/assignments` gives it. */
export interface Assignment {
  deployment: Deployment;
  latest_revision: Revision | null;
  active_revision: Revision | null;
  /** In clear. */
  secrets: Secret[];
}

/** A control plane answer the listener cannot go on with; `fatal` ones (bad key, unknown listener) end it. */
export class ControlPlaneError extends Error {
  constructor(
    message: string,
    readonly fatal: boolean,
  ) {
    super(message);
  }
}

export interface ControlPlaneClientOptions {
  url: string;
  apiKey: string;
  listenerId: string;
  /** For an organization key that reaches several workspaces: the listener's workspace. */
  tenantId?: string;
}

/** The listener's side of the control plane API (`/v2/listeners/{id}/...`). */
export class ControlPlaneClient {
  readonly url: string;

  constructor(private readonly opts: ControlPlaneClientOptions) {
    this.url = opts.url.replace(/\/+$/, "");
  }

  listener(): Promise<Listener> {
    return this.call("GET", "");
  }

  async assignments(): Promise<Assignment[]> {
    const body = await this.call<any>("GET", "/assignments");
    const rows: any[] = Array.isArray(body) ? body : (body?.resources ?? []);
    // Either {deployment, latest_revision, ...} or the deployment's fields with those beside them.
    return rows.map((r) => ({
      deployment: (r.deployment ?? r) as Deployment,
      latest_revision: r.latest_revision ?? null,
      active_revision: r.active_revision ?? null,
      secrets: r.secrets ?? r.deployment?.secrets ?? [],
    }));
  }

  async reportStatus(revisionId: string, status: RevisionStatus, message?: string | null): Promise<void> {
    await this.call("POST", `/revisions/${revisionId}/status`, { status, message: message ?? null });
  }

  async log(
    lines: { deployment_id: string; revision_id: string | null; level: LogLevel; message: string }[],
  ) {
    if (lines.length)
      await this.call("POST", "/logs", { lines: lines.map((l) => ({ ...l, kind: "deploy" })) });
  }

  /** Tells the control plane a deleted deployment's objects are gone (it then forgets the deployment). */
  async removed(deploymentId: string): Promise<void> {
    await this.call("DELETE", `/assignments/${deploymentId}`);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const { apiKey, listenerId, tenantId } = this.opts;
    const url = `${this.url}/v2/listeners/${encodeURIComponent(listenerId)}${path}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          "X-Api-Key": apiKey,
          ...(tenantId ? { "X-Tenant-Id": tenantId } : {}),
          ...(body !== undefined ? { "Content-Type": "application/json" } : {}),
        },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(30_000),
      });
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      throw new ControlPlaneError(`cannot reach the control plane at ${this.url} (${why})`, false);
    }
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: reported as text below
    }
    if (res.ok) return parsed as T;
    const detail =
      typeof parsed?.detail === "string" ? parsed.detail : JSON.stringify(parsed?.detail ?? text);
    if (res.status === 401) {
      throw new ControlPlaneError(
        `the control plane at ${this.url} refused the API key (401: ${detail})`,
        true,
      );
    }
    if (res.status === 403) throw new ControlPlaneError(`the control plane refused (403): ${detail}`, true);
    if (res.status === 404 && path === "") {
      throw new ControlPlaneError(
        `listener ${listenerId} not found on the control plane at ${this.url}`,
        true,
      );
    }
    throw new ControlPlaneError(`${method} ${url} failed (${res.status}: ${detail})`, res.status === 404);
  }
}

/** Where revisions go: a cluster (`K8sRuntime`). */
export interface ListenerRuntime {
  apply(objects: HangarObject[]): Promise<{ url: string }>;
  remove(deploymentId: string, namespace: string): Promise<void>;
}

export interface ListenerLoopOptions {
  client: ControlPlaneClient;
  /** null: dry run, the objects are printed (`out`) and nothing is applied or reported. */
  runtime: ListenerRuntime | null;
  /** The image of revisions without `image_uri`. */
  image: string;
  /** PostgreSQL and Redis for `prod` deployments. */
  databaseUrl?: string;
  redisUrl?: string;
  out: (text: string) => void;
  log: (msg: string) => void;
}

export interface PassResult {
  /** Revisions rolled out (or printed) in this pass. */
  deployed: string[];
  /** Revisions that failed. */
  failed: string[];
  /** Deployments deleted (failed deletions are in `failed`, by deployment id). */
  removed: string[];
}

/**
 * What to do for one assignment: a new revision rolls out and its status is reported; the revision that should
 * be serving (latest DEPLOYED, or the active one while a newer one failed) is applied again once per process, as
 * the local reconciler starts a DEPLOYED revision again after a restart (server-side apply leaves a running one
 * untouched).
 */
export type Plan =
  | { action: "deploy"; revision: Revision }
  | { action: "ensure"; revision: Revision }
  | { action: "remove" }
  | { action: "wait" };

export function planFor(a: Assignment): Plan {
  if (a.deployment.deleted_at) return { action: "remove" };
  const latest = a.latest_revision;
  if (!latest) return { action: "wait" };
  // Images deploy from QUEUED; sources are built by the control plane first (AWAITING_DEPLOY once built).
  const docker = !!latest.source_revision_config.image_uri || latest.source.endsWith("_docker");
  if (["AWAITING_DEPLOY", "DEPLOYING"].includes(latest.status) || (docker && latest.status === "QUEUED")) {
    return { action: "deploy", revision: latest };
  }
  if (latest.status === "DEPLOYED") return { action: "ensure", revision: latest };
  if (FINAL_REVISION_STATUSES.includes(latest.status) && a.active_revision?.status === "DEPLOYED") {
    return { action: "ensure", revision: a.active_revision };
  }
  return { action: "wait" };
}

/** One listener's reconcile loop. */
export class ListenerLoop {
  /** Revisions applied (or printed) by this process, and deployments removed. */
  private readonly done = new Set<string>();

  constructor(private readonly opts: ListenerLoopOptions) {}

  /** One pass over the assignments. Throws ControlPlaneError when the control plane cannot be used. */
  async pass(): Promise<PassResult> {
    const { client } = this.opts;
    const listener = await client.listener();
    const result: PassResult = { deployed: [], failed: [], removed: [] };
    for (const a of await client.assignments()) {
      const plan = planFor(a);
      const d = a.deployment;
      if (plan.action === "wait") continue;
      const namespace = namespaceFor(d, listener);
      if (plan.action === "remove") {
        if (this.done.has(d.id)) continue;
        if (await this.remove(d, namespace)) result.removed.push(d.id);
        else result.failed.push(d.id);
        continue;
      }
      if (this.done.has(plan.revision.id)) continue;
      const ok = await this.rollOut(a, plan.revision, namespace, plan.action === "deploy");
      (ok ? result.deployed : result.failed).push(plan.revision.id);
    }
    return result;
  }

  /** Passes every `intervalMs` until the signal aborts; a fatal control plane error ends it (thrown). */
  async run(intervalMs: number, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.pass();
      } catch (e) {
        if (!(e instanceof ControlPlaneError) || e.fatal) throw e;
        this.opts.log(e.message);
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, intervalMs);
        signal.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }

  private async rollOut(
    a: Assignment,
    revision: Revision,
    namespace: string,
    report: boolean,
  ): Promise<boolean> {
    const { client, runtime, log } = this.opts;
    const d = a.deployment;
    const say = async (level: LogLevel, message: string) => {
      log(`deployment ${d.name} (${d.id}) revision ${revision.id}: ${message}`);
      if (runtime) {
        await client
          .log([{ deployment_id: d.id, revision_id: revision.id, level, message: `listener: ${message}` }])
          .catch((e: Error) => log(`could not send a deploy log line: ${e.message}`));
      }
    };
    let objects: HangarObject[];
    try {
      objects = renderRevision({
        deployment: d,
        revision,
        secrets: a.secrets,
        namespace,
        image: this.opts.image,
        databaseUrl: this.opts.databaseUrl,
        redisUrl: this.opts.redisUrl,
      });
    } catch (e) {
      if (!(e instanceof RenderError)) throw e;
      this.done.add(revision.id);
      await say("ERROR", e.message);
      if (runtime && report) await client.reportStatus(revision.id, "DEPLOY_FAILED", e.message);
      return false;
    }
    if (!runtime) {
      this.opts.out(toYaml(objects));
      this.done.add(revision.id);
      await say("INFO", `rendered ${objects.length} objects for namespace ${namespace} (dry run)`);
      return true;
    }
    if (report) await client.reportStatus(revision.id, "DEPLOYING");
    await say("INFO", `${report ? "rolling out" : "applying again"} in namespace ${namespace}`);
    try {
      const { url } = await runtime.apply(objects);
      this.done.add(revision.id);
      await say("INFO", `rolled out; in-cluster URL ${url}`);
      if (report) await client.reportStatus(revision.id, "DEPLOYED", null);
      return true;
    } catch (e) {
      if (e instanceof ControlPlaneError) throw e;
      const message = `roll-out failed: ${errorMessage(e)}`;
      // A new revision fails for good; the serving one is applied again at the next pass.
      if (report) this.done.add(revision.id);
      await say("ERROR", message);
      if (report) await client.reportStatus(revision.id, "DEPLOY_FAILED", message);
      return false;
    }
  }

  private async remove(d: Deployment, namespace: string): Promise<boolean> {
    const { client, runtime, log } = this.opts;
    if (!runtime) {
      this.done.add(d.id);
      log(
        `deployment ${d.name} (${d.id}) is deleted: its objects in namespace ${namespace} would be deleted (dry run)`,
      );
      return true;
    }
    try {
      await runtime.remove(d.id, namespace);
    } catch (e) {
      log(
        `deployment ${d.name} (${d.id}) is deleted, but deleting its objects failed (retried): ${errorMessage(e)}`,
      );
      return false;
    }
    this.done.add(d.id);
    log(`deployment ${d.name} (${d.id}) is deleted: its objects in namespace ${namespace} are deleted`);
    await client.removed(d.id);
    return true;
  }
}

/** A one-line reason from a Kubernetes client error (its body carries the API server's message). */
function errorMessage(e: unknown): string {
  const err = e as { message?: string; body?: unknown; code?: number };
  try {
    const body = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
    if (body && typeof body === "object" && "message" in body)
      return `${err.code ?? ""} ${String(body.message)}`.trim();
  } catch {
    // fall through
  }
  return (err.message ?? String(e)).split("\n")[0];
}
