// Control plane records and the store interface shared by the API, the reconcilers and the store backends.
// Field names follow the official Control Plane API (test/fixtures/openapi/control-plane-openapi.json).
import { ConflictError } from "../../lib/errors.js";

export type Plan = "free" | "plus" | "enterprise" | "self_hosted_enterprise";

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  created_at: string;
}

export interface Workspace {
  /** The tenant id. */
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
}

export interface ApiKey {
  id: string;
  /** The workspace the key belongs to; null for an organization key (reaches all its workspaces). */
  workspace_id: string | null;
  organization_id: string;
  /** First characters of the key, to recognise it in lists. */
  prefix: string;
  /** SHA-256 (hex) of the key. The key itself is never stored. */
  hash: string;
  created_at: string;
}

export type DeploymentSource = "github" | "external_docker" | "internal_docker" | "internal_source";
export type DeploymentType = "dev_free" | "dev" | "prod";
export type DeploymentStatus = "AWAITING_DATABASE" | "READY" | "UNUSED" | "AWAITING_DELETE" | "UNKNOWN";

export type RevisionStatus =
  | "CREATING"
  | "QUEUED"
  | "AWAITING_BUILD"
  | "BUILDING"
  | "AWAITING_DEPLOY"
  | "DEPLOYING"
  | "CREATE_FAILED"
  | "BUILD_FAILED"
  | "DEPLOY_FAILED"
  | "DEPLOYED"
  | "SKIPPED"
  | "INTERRUPTED"
  | "UNKNOWN";

/** Revision statuses before its build started, then while it builds and deploys; with DEPLOYED and the final ones, all. */
export const PENDING_REVISION_STATUSES: RevisionStatus[] = ["CREATING", "QUEUED", "AWAITING_BUILD"];
export const STARTED_REVISION_STATUSES: RevisionStatus[] = ["BUILDING", "AWAITING_DEPLOY", "DEPLOYING"];
export const IN_PROGRESS_REVISION_STATUSES: RevisionStatus[] = [
  ...PENDING_REVISION_STATUSES,
  ...STARTED_REVISION_STATUSES,
];

/** Statuses a revision never leaves. */
export const FINAL_REVISION_STATUSES: RevisionStatus[] = [
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "SKIPPED",
  "INTERRUPTED",
];

export interface SourceConfig {
  integration_id?: string | null;
  repo_url?: string | null;
  deployment_type?: DeploymentType | null;
  build_on_push?: boolean | null;
  custom_url?: string | null;
  resource_spec?: Record<string, unknown> | null;
  listener_id?: string | null;
  listener_config?: { k8s_namespace?: string | null } | null;
  install_command?: string | null;
  build_command?: string | null;
}

export interface SourceRevisionConfig {
  repo_ref?: string | null;
  langgraph_config_path?: string | null;
  image_uri?: string | null;
  source_tarball_path?: string | null;
  repo_commit_sha?: string | null;
}

export interface Secret {
  name: string;
  value: string;
}

/** A Kubernetes Secret key to expose as an environment variable (`external_docker` deployments of a listener). */
export interface SecretReference {
  name: string;
  secret_name: string;
  secret_key: string;
}

export interface Deployment {
  id: string;
  /** The workspace id. */
  tenant_id: string;
  name: string;
  source: DeploymentSource;
  source_config: SourceConfig;
  /** Of the latest revision. */
  source_revision_config: SourceRevisionConfig;
  /** Stored values; the API masks them. */
  secrets: Secret[];
  /** Kubernetes Secret references (listener deployments); null when none were given. */
  secret_references?: SecretReference[] | null;
  status: DeploymentStatus;
  latest_revision_id: string | null;
  /** The revision serving now (DEPLOYED), if any. */
  active_revision_id: string | null;
  created_at: string;
  updated_at: string;
  /** Set when deletion was asked: the reconciler stops its processes, then the record goes. */
  deleted_at?: string | null;
  /**
   * A listener's assignment only: the pull secret of the images the control plane built for the deployment, as
   * the `.dockerconfigjson` of a Kubernetes Secret (the credentials' entry for the control plane's registry).
   */
  image_pull_secret?: { dockerconfigjson: string } | null;
}

/** Sources the control plane builds: for a listener, into an image pushed to its registry. */
export const BUILT_SOURCES: readonly DeploymentSource[] = ["github", "internal_source"];

export interface Revision {
  id: string;
  deployment_id: string;
  status: RevisionStatus;
  source: DeploymentSource;
  source_revision_config: SourceRevisionConfig;
  /** Why the revision failed, when it did (one line; the details are in its logs). */
  status_message?: string | null;
  created_at: string;
  updated_at: string;
}

export interface Listener {
  id: string;
  tenant_id: string;
  version: string | null;
  compute_type: "k8s";
  compute_id: string;
  compute_config: { k8s_namespaces?: string[] | null };
  created_at: string;
  updated_at: string;
}

export type LogKind = "build" | "deploy";
export type LogLevel = "DEBUG" | "INFO" | "WARNING" | "ERROR";

export interface LogLine {
  deployment_id: string;
  revision_id: string | null;
  kind: LogKind;
  level: LogLevel;
  message: string;
  timestamp: string;
}

export interface Page {
  limit: number;
  offset: number;
}

export interface DeploymentQuery extends Page {
  /** Exact name. */
  name?: string;
  name_contains?: string;
  deployment_type?: DeploymentType;
  deployment_ids?: string[];
  status?: DeploymentStatus;
}

export interface LogQuery extends Page {
  kind: LogKind;
  revision_id?: string;
  order: "asc" | "desc";
  level?: LogLevel;
  /** Only lines whose message contains it (case-insensitive). */
  query?: string;
  start_time?: string;
  end_time?: string;
}

/**
 * A source tarball upload: issued by `POST .../upload-url` with a one-use token (only its SHA-256 is kept),
 * then `uploading` while its PUT streams, `done` once the file is complete.
 */
export interface Upload {
  id: string;
  tenant_id: string;
  /** The deployment it was issued for; null for a workspace upload (usable when creating a deployment). */
  deployment_id: string | null;
  token_hash: string;
  /** Where the file is (or will be), relative to the data directory. */
  path: string;
  state: "issued" | "uploading" | "done";
  expires_at: string;
  created_at: string;
}

/** A uniqueness rule was broken (e.g. a deployment name already used in the workspace). */
export class CpConflictError extends ConflictError {}

/** Everything the control plane keeps. Every method scoped by tenant takes the workspace id. */
export interface CpStore {
  // tenancy
  createOrganization(name: string, plan: Plan): Promise<Organization>;
  getOrganization(id: string): Promise<Organization | null>;
  createWorkspace(organizationId: string, name: string): Promise<Workspace>;
  getWorkspace(id: string): Promise<Workspace | null>;
  listWorkspaces(organizationId: string): Promise<Workspace[]>;
  /** Stores a key (by its hash) for a workspace, or for a whole organization when workspaceId is null. */
  createApiKey(key: string, organizationId: string, workspaceId: string | null): Promise<ApiKey>;
  findApiKey(key: string): Promise<ApiKey | null>;
  countOrganizations(): Promise<number>;

  // deployments and revisions
  createDeployment(
    d: Omit<Deployment, "created_at" | "updated_at" | "latest_revision_id" | "active_revision_id">,
    /** Null: no revision yet (an internal_source deployment waiting for its tarball). */
    firstRevision: Omit<Revision, "created_at" | "updated_at" | "deployment_id"> | null,
  ): Promise<Deployment>;
  /** A deployment of the tenant that is not deleted (the API's view). */
  getDeployment(tenantId: string, id: string): Promise<Deployment | null>;
  /** Any tenant, deleted ones included (reconcilers). */
  getDeploymentById(id: string): Promise<Deployment | null>;
  /** The tenant's deployments that are not deleted, newest first. */
  listDeployments(tenantId: string, q: DeploymentQuery): Promise<Deployment[]>;
  updateDeployment(
    id: string,
    patch: Partial<Omit<Deployment, "id" | "tenant_id" | "created_at">>,
  ): Promise<Deployment>;
  /** Adds a revision and makes it the deployment's latest. */
  addRevision(
    deploymentId: string,
    r: Omit<Revision, "created_at" | "updated_at" | "deployment_id">,
  ): Promise<Revision>;
  getRevision(deploymentId: string, revisionId: string): Promise<Revision | null>;
  /** Newest first. */
  listRevisions(deploymentId: string, q: Page & { status?: RevisionStatus[] }): Promise<Revision[]>;
  setRevisionStatus(revisionId: string, status: RevisionStatus, message?: string | null): Promise<void>;
  /**
   * Marks the deployment's revisions that have not started (CREATING, QUEUED, AWAITING_BUILD), other than
   * `exceptRevisionId`, SKIPPED; returns their ids.
   */
  skipPendingRevisions(deploymentId: string, exceptRevisionId: string): Promise<string[]>;
  /** Deployments a target reconciles: local (listenerId null) or a listener's; includes deleted ones. */
  deploymentsFor(listenerId: string | null): Promise<Deployment[]>;
  /** Deployments assigned to any listener (deleted ones included): those the control plane builds images for. */
  deploymentsOnListeners(): Promise<Deployment[]>;
  /** Records the image a revision was built into (its `source_revision_config.image_uri`, and its deployment's). */
  setRevisionImage(revisionId: string, imageUri: string): Promise<void>;
  /** Removes a deleted deployment's records for good. */
  purgeDeployment(id: string): Promise<void>;

  // listeners
  createListener(l: Omit<Listener, "created_at" | "updated_at">): Promise<Listener | "conflict">;
  getListener(tenantId: string, id: string): Promise<Listener | null>;
  listListeners(tenantId: string, q: Page): Promise<Listener[]>;
  updateListener(
    tenantId: string,
    id: string,
    patch: { version?: string | null; compute_config?: Listener["compute_config"] },
  ): Promise<Listener | null>;
  deleteListener(tenantId: string, id: string): Promise<boolean>;

  // uploads
  createUpload(u: Omit<Upload, "created_at" | "state">): Promise<Upload>;
  /** Takes an issued, unexpired upload by its token hash for its PUT (state `uploading`); null if none. */
  claimUpload(tokenHash: string): Promise<Upload | null>;
  /** Ends a PUT: `done` when the file is complete, back to `issued` (usable again) when it failed. */
  finishUpload(id: string, ok: boolean): Promise<void>;
  /** A completed upload of the tenant by its path. */
  findUpload(tenantId: string, path: string): Promise<Upload | null>;
  /** Gives a workspace upload to a deployment (its file moved to `path`), or back to the workspace (null). */
  bindUpload(id: string, deploymentId: string | null, path: string): Promise<void>;

  // logs
  appendLogs(lines: LogLine[]): Promise<void>;
  readLogs(deploymentId: string, q: LogQuery): Promise<LogLine[]>;

  /**
   * Runs `fn` while no other process on the same store runs it (PostgreSQL: several control planes may share
   * a database, and a fresh one's bootstrap must happen once). Absent: `fn` simply runs.
   */
  exclusive?<T>(fn: () => Promise<T>): Promise<T>;

  close(): Promise<void>;
}
