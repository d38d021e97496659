// `hangar listener`'s side of the reconcile loop: the same `Reconciler` as the local control plane, on a
// `ReconcileSource` that polls the control plane's listener API (`/v2/listeners/{id}/...`: the deployments assigned
// to the listener, status reports, deploy logs, removals) and a `K8sRuntime`. The control plane never calls a
// listener.
import { LogSink } from "../../domain/log-sink.js";
import type { Logger } from "../../../lib/logger.js";
import { PENDING_REVISION_STATUSES } from "../../domain/types.js";
import {
  Reconciler,
  StableAddress,
  type DeploymentPatch,
  type DeploymentState,
  type ReconcileSource,
} from "../../domain/reconcile.js";
import type {
  Deployment,
  DeploymentStatus,
  Listener,
  LogLine,
  Revision,
  RevisionStatus,
} from "../../domain/types.js";
import type { Cluster } from "./client.js";
import { namespaceFor } from "./render.js";
import { K8sRuntime } from "./runtime.js";
import { HangarError } from "../../../lib/errors.js";

/**
 * A deployment assigned to the listener, as `GET /v2/listeners/{id}/assignments` gives it: its secrets in clear,
 * and the revisions the reconciler looks at (those in progress, the latest and the active one), newest first.
 */
export type Assignment = DeploymentState;

/** A control plane answer the listener cannot go on with; `fatal` ones (bad key, unknown listener) end it. */
export class ControlPlaneError extends HangarError {
  static override readonly code = "remote_error";
  constructor(
    message: string,
    readonly fatal: boolean,
    readonly status?: number,
  ) {
    super(message);
  }
}

function toAssignment(r: any): Assignment {
  const { revisions, latest_revision: _l, active_revision: _a, ...deployment } = r;
  return { deployment: deployment as Deployment, revisions: (revisions ?? []) as Revision[] };
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
    const body = await this.call<{ resources: any[] }>("GET", "/assignments");
    return (body?.resources ?? []).map(toAssignment);
  }

  /** One assignment; null when the deployment is not (or no longer) assigned to the listener. */
  async assignment(deploymentId: string): Promise<Assignment | null> {
    try {
      return toAssignment(await this.call("GET", `/assignments/${deploymentId}`));
    } catch (e) {
      if (e instanceof ControlPlaneError && e.status === 404) return null;
      throw e;
    }
  }

  /** Sets the deployment's active revision (the one serving), status, and the address the cluster gives it. */
  async updateAssignment(deploymentId: string, patch: DeploymentPatch): Promise<void> {
    const { address, ...rest } = patch;
    await this.call("PATCH", `/assignments/${deploymentId}`, {
      ...rest,
      ...(address ? { url: address } : {}),
    });
  }

  async reportStatus(revisionId: string, status: RevisionStatus, message?: string | null): Promise<void> {
    await this.call("POST", `/revisions/${revisionId}/status`, { status, message: message ?? null });
  }

  async appendLogs(lines: LogLine[]): Promise<void> {
    if (lines.length) await this.call("POST", "/logs", { lines });
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
    throw new ControlPlaneError(`${method} ${url} failed (${res.status}: ${detail})`, false, res.status);
  }
}

export interface ListenerSourceOptions {
  /** Reads from the control plane, writes nothing: statuses and removals are kept in memory, logs dropped. */
  dryRun?: boolean;
}

/** The reconciler's source for a listener: the control plane's listener API. */
export class ListenerSource implements ReconcileSource {
  /** The listener's record as of the last listing (its namespaces). */
  listener: Listener | null = null;
  /** Dry run: what would have been written. */
  private statuses = new Map<string, { status: RevisionStatus; status_message: string | null }>();
  private patches = new Map<string, { active_revision_id?: string; status?: DeploymentStatus }>();
  private purged = new Set<string>();

  constructor(
    private readonly client: ControlPlaneClient,
    private readonly opts: ListenerSourceOptions = {},
  ) {}

  /** A dry run's writes over what the control plane says. */
  private view(a: Assignment): Assignment | null {
    const id = a.deployment.id;
    if (this.purged.has(id)) return null;
    return {
      deployment: { ...a.deployment, ...this.patches.get(id) },
      revisions: a.revisions.map((r) => ({ ...r, ...this.statuses.get(r.id) })),
    };
  }

  async deployments(): Promise<Deployment[]> {
    // First: a wrong key or an unknown listener fails here, with its own message.
    this.listener = await this.client.listener();
    const all = await this.client.assignments();
    return all.flatMap((a) => this.view(a)?.deployment ?? []);
  }

  async deployment(id: string): Promise<DeploymentState | null> {
    const a = await this.client.assignment(id);
    return a && this.view(a);
  }

  async revision(deploymentId: string, revisionId: string): Promise<Revision | null> {
    return (await this.deployment(deploymentId))?.revisions.find((r) => r.id === revisionId) ?? null;
  }

  async setRevisionStatus(
    _deploymentId: string,
    revisionId: string,
    status: RevisionStatus,
    message?: string | null,
  ): Promise<void> {
    if (this.opts.dryRun) this.statuses.set(revisionId, { status, status_message: message ?? null });
    else await this.client.reportStatus(revisionId, status, message);
  }

  async skipPendingRevisions(deploymentId: string, exceptRevisionId: string): Promise<void> {
    for (const r of (await this.deployment(deploymentId))?.revisions ?? []) {
      if (r.id === exceptRevisionId || !PENDING_REVISION_STATUSES.includes(r.status)) continue;
      await this.setRevisionStatus(
        deploymentId,
        r.id,
        "SKIPPED",
        `Superseded by revision ${exceptRevisionId}`,
      );
    }
  }

  async updateDeployment(id: string, patch: DeploymentPatch): Promise<void> {
    if (this.opts.dryRun) this.patches.set(id, { ...this.patches.get(id), ...patch });
    else await this.client.updateAssignment(id, patch);
  }

  async purge(deploymentId: string): Promise<void> {
    if (this.opts.dryRun) this.purged.add(deploymentId);
    else await this.client.removed(deploymentId);
  }

  async appendLogs(lines: LogLine[]): Promise<void> {
    if (!this.opts.dryRun) await this.client.appendLogs(lines);
  }
}

export interface ListenerReconcilerOptions {
  client: ControlPlaneClient;
  /** Where the objects go: `KubeCluster`, or `PrintCluster` with `dryRun`. */
  cluster: Cluster;
  /** Nothing is reported to the control plane (see ListenerSource). */
  dryRun?: boolean;
  /** The image of revisions without `image_uri`. */
  image: string;
  /** PostgreSQL and Redis for `prod` deployments. */
  databaseUrl?: string;
  redisUrl?: string;
  log: Logger;
  /** Period of the loop (ms). */
  intervalMs?: number;
  onPassError?: (e: unknown) => void;
  onFailure?: (message: string) => void;
}

/** The reconcile loop of a listener: the local control plane's `Reconciler` on the listener API and Kubernetes. */
export function listenerReconciler(o: ListenerReconcilerOptions): Reconciler {
  const source = new ListenerSource(o.client, { dryRun: o.dryRun });
  const logs = new LogSink(source, (m) => o.log.warn(m));
  const runtime = new K8sRuntime({
    cluster: o.cluster,
    namespace: (d) => namespaceFor(d, source.listener),
    image: o.image,
    databaseUrl: o.databaseUrl,
    redisUrl: o.redisUrl,
    log: (d, r, level, message) => logs.write(d, r, "deploy", level, message),
  });
  return new Reconciler({
    source,
    runtime,
    router: new StableAddress(),
    logs,
    log: o.log,
    intervalMs: o.intervalMs,
    // Nothing to drain: the Service keeps the address, Kubernetes rolls the pods.
    drainMs: 0,
    onPassError: o.onPassError,
    onFailure: o.onFailure,
  });
}
