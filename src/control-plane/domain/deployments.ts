// Deployments and revisions: the rules of create, PATCH, redeploy and delete (sources, immutable fields,
// secrets, uploads, superseded revisions), and the records as the API shows them (secrets masked).
import { randomUUID } from "node:crypto";
import { isAbsolute } from "node:path";
import type { DeploymentCreateBody, DeploymentPatchBody } from "./schemas.js";
import type { CpContext } from "./context.js";
import { conflict, deploymentNotFound, valueError } from "./errors.js";
import {
  BUILT_SOURCES,
  CpConflictError,
  type Deployment,
  type DeploymentSource,
  type Revision,
  type Secret,
  type SourceConfig,
  type SourceRevisionConfig,
} from "./types.js";
import { checkLocalSource, localPathOf } from "./source-roots.js";
import { adoptTarball } from "./uploads.js";

/** What responses show instead of a secret's value. */
export const MASK = "********";

const SOURCE_CONFIG_KEYS = [
  "integration_id",
  "repo_url",
  "deployment_type",
  "build_on_push",
  "custom_url",
  "resource_spec",
  "listener_id",
  "listener_config",
  "install_command",
  "build_command",
] as const;
const REVISION_CONFIG_KEYS = [
  "repo_ref",
  "langgraph_config_path",
  "image_uri",
  "source_tarball_path",
  "repo_commit_sha",
] as const;
/** source_config fields fixed at creation (PATCH may repeat them, not change them). */
const IMMUTABLE_SOURCE_CONFIG = ["integration_id", "repo_url", "deployment_type", "listener_id"] as const;

const full = <K extends string>(keys: readonly K[], o: Partial<Record<K, unknown>> | null | undefined) =>
  Object.fromEntries(keys.map((k) => [k, o?.[k] ?? null])) as Record<K, unknown>;

const isDocker = (s: DeploymentSource) => s === "external_docker" || s === "internal_docker";

/** A Deployment as the API returns it: every field of the official schema, secrets masked. */
export function deploymentOut(d: Deployment) {
  return {
    name: d.name,
    source: d.source,
    source_config: full(SOURCE_CONFIG_KEYS, d.source_config),
    source_revision_config: full(REVISION_CONFIG_KEYS, d.source_revision_config),
    secrets: d.secrets.map((s) => ({ name: s.name, value: MASK })),
    secret_references: d.secret_references ?? null,
    id: d.id,
    tenant_id: d.tenant_id,
    created_at: d.created_at,
    updated_at: d.updated_at,
    status: d.status,
    latest_revision_id: d.latest_revision_id,
    active_revision_id: d.active_revision_id,
    image_version: null,
  };
}

/** A Revision as the API returns it (with `status_message`, a Hangar addition, when it failed). */
export function revisionOut(r: Revision) {
  return {
    id: r.id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    status: r.status,
    source: r.source,
    source_revision_config: full(REVISION_CONFIG_KEYS, r.source_revision_config),
    status_message: r.status_message ?? null,
  };
}

const GIT_URL = /^(https?|git|ssh|file):\/\/\S+$|^[\w.-]+@[\w.-]+:\S+$/;

/** A 422 HTTPValidationError for a rule of the request body the schema cannot say. */
const invalid = (loc: (string | number)[], message: string, input?: unknown) =>
  valueError(["body", ...loc], message, input);

/** A 422 for a value git would read as an option (repo_url, repo_ref): one beginning with "-". */
const refuseOptionLike = (loc: string[], value?: string | null) => {
  if (value?.startsWith("-"))
    throw invalid(loc, `${loc.join(".")} '${value}' must not begin with '-'.`, value);
};

/**
 * Checks a revision's source_revision_config against its source (422 when a field is missing or foreign).
 * `awaitingSource`: an `internal_source` deployment being created may come without its tarball (the official
 * CLI creates it first, then asks for an upload URL and PATCHes the tarball in): it then has no revision yet.
 */
function checkRevisionConfig(
  source: DeploymentSource,
  c: SourceRevisionConfig,
  opts: { awaitingSource?: boolean } = {},
): void {
  const must = (field: keyof SourceRevisionConfig) => {
    if (!c[field]) {
      throw invalid(
        ["source_revision_config", field],
        `source_revision_config.${field} is required for source '${source}'.`,
        c[field] ?? null,
      );
    }
  };
  const mustNot = (field: keyof SourceRevisionConfig) => {
    if (c[field]) {
      throw invalid(
        ["source_revision_config", field],
        `source_revision_config.${field} must be null for source '${source}'.`,
        c[field],
      );
    }
  };
  refuseOptionLike(["source_revision_config", "repo_ref"], c.repo_ref);
  if (isDocker(source)) {
    must("image_uri");
    mustNot("langgraph_config_path");
    mustNot("source_tarball_path");
    mustNot("repo_ref");
    return;
  }
  mustNot("image_uri");
  if (source === "internal_source") {
    mustNot("repo_ref");
    if (opts.awaitingSource && !c.source_tarball_path) return;
    must("source_tarball_path");
  } else mustNot("source_tarball_path");
  must("langgraph_config_path");
}

function checkSecrets(secrets: Secret[]): void {
  const seen = new Set<string>();
  secrets.forEach((s, i) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(s.name)) {
      throw invalid(
        ["secrets", i, "name"],
        `Secret name '${s.name}' is not a valid environment variable name.`,
        s.name,
      );
    }
    if (seen.has(s.name)) {
      throw invalid(["secrets", i, "name"], `Secret '${s.name}' is given more than once.`, s.name);
    }
    seen.add(s.name);
  });
}

/** Checks source_config on create against the source; resolves and checks the listener. */
async function checkSourceConfig(
  ctx: CpContext,
  tenantId: string,
  source: DeploymentSource,
  c: SourceConfig,
) {
  if (source === "github") {
    const url = c.repo_url;
    const loc = ["source_config", "repo_url"];
    if (!url) throw invalid(loc, "source_config.repo_url is required for source 'github'.", null);
    refuseOptionLike(loc, url);
    if (!GIT_URL.test(url) && !isAbsolute(url)) {
      throw invalid(
        loc,
        `source_config.repo_url '${url}' is neither a git URL nor an absolute path of a local directory.`,
        url,
      );
    }
    const local = localPathOf(url);
    if (local !== null) {
      // One answer for every path outside the allowed directories, whether it exists or not.
      const checked = checkLocalSource(local, ctx.sourceRoots, [ctx.dataDir]);
      if (!checked.ok && checked.reason === "not-allowed") {
        throw invalid(
          loc,
          `source_config.repo_url '${url}' is not in a directory this control plane deploys local sources from ` +
            "(the operator lists them in HANGAR_CP_SOURCE_ROOTS); use a git URL or upload the source.",
          url,
        );
      }
      if (!checked.ok) {
        throw invalid(loc, `source_config.repo_url '${url}' is not a directory.`, url);
      }
    }
  } else if (c.repo_url) {
    throw invalid(
      ["source_config", "repo_url"],
      "source_config.repo_url is only applicable for source 'github'.",
      c.repo_url,
    );
  }
  if (!isDocker(source)) {
    // Hangar extension: a built source runs on a listener when the control plane pushes its images to a registry.
    if (c.listener_id && ctx.imageRegistry) return checkListener(ctx, tenantId, c);
    if (c.listener_id) {
      throw invalid(
        ["source_config", "listener_id"],
        `source_config.listener_id is only applicable for sources 'external_docker' and 'internal_docker'` +
          (BUILT_SOURCES.includes(source)
            ? `, or for '${source}' when the control plane builds images (HANGAR_CP_IMAGE_REGISTRY is not set).`
            : "."),
        c.listener_id,
      );
    }
    if (c.listener_config?.k8s_namespace) {
      throw invalid(
        ["source_config", "listener_config"],
        "source_config.listener_config is only applicable for deployments of a listener.",
        c.listener_config,
      );
    }
    return;
  }
  if (!c.listener_id) {
    throw invalid(
      ["source_config", "listener_id"],
      `source_config.listener_id is required for source '${source}'.`,
      null,
    );
  }
  await checkListener(ctx, tenantId, c);
}

/** The listener of `source_config` is the workspace's, and the namespace one of its own. */
async function checkListener(
  ctx: CpContext,
  tenantId: string,
  c: SourceConfig & { listener_id?: string | null },
) {
  if (!c.listener_id) return;
  const listener = await ctx.store.getListener(tenantId, c.listener_id);
  if (!listener) {
    throw invalid(["source_config", "listener_id"], `Listener ID ${c.listener_id} not found.`, c.listener_id);
  }
  const ns = c.listener_config?.k8s_namespace;
  const allowed = listener.compute_config.k8s_namespaces;
  if (ns && allowed?.length && !allowed.includes(ns)) {
    throw invalid(
      ["source_config", "listener_config", "k8s_namespace"],
      `source_config.listener_config.k8s_namespace '${ns}' is not one of the listener's namespaces (${allowed.join(", ")}).`,
      ns,
    );
  }
}

const withoutNulls = <T extends object>(o: T | null | undefined): Partial<T> =>
  Object.fromEntries(Object.entries(o ?? {}).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;

export async function createDeployment(
  ctx: CpContext,
  tenantId: string,
  body: DeploymentCreateBody,
): Promise<Deployment> {
  const sc: SourceConfig = { ...withoutNulls(body.source_config) };
  const src: SourceRevisionConfig = { ...withoutNulls(body.source_revision_config) };
  await checkSourceConfig(ctx, tenantId, body.source, sc);
  checkRevisionConfig(body.source, src, { awaitingSource: true });
  // An internal_source deployment created without its tarball has no revision until a PATCH brings one.
  const awaiting = body.source === "internal_source" && !src.source_tarball_path;
  checkSecrets(body.secrets);
  const taken = await ctx.store.listDeployments(tenantId, { name: body.name, limit: 1, offset: 0 });
  if (taken.length) throw nameTaken(tenantId, body.name);

  const id = randomUUID();
  sc.deployment_type = sc.deployment_type ?? "dev";
  // Served by this control plane: its router's URL; by a listener's cluster: the address the listener reports once
  // it has rolled the deployment out (null until then); an external_docker deployment may name its own either way.
  const ownUrl = body.source === "external_docker" && !!sc.custom_url;
  if (!ownUrl) sc.custom_url = sc.listener_id ? null : `${ctx.publicUrl()}/deployments/${id}`;
  let undo = () => {};
  if (body.source === "internal_source" && !awaiting) {
    const adopted = await adoptTarball(ctx, tenantId, id, src.source_tarball_path!);
    src.source_tarball_path = adopted.path;
    undo = adopted.undo;
  }
  try {
    const d = await ctx.store.createDeployment(
      {
        id,
        tenant_id: tenantId,
        name: body.name,
        source: body.source,
        source_config: sc,
        source_revision_config: src,
        secrets: body.secrets.map((s) => ({ name: s.name, value: s.value })),
        secret_references: body.secret_references ?? null,
        status: "READY",
        deleted_at: null,
      },
      awaiting
        ? null
        : { id: randomUUID(), status: "QUEUED", source: body.source, source_revision_config: src },
    );
    if (!awaiting) ctx.wake();
    return d;
  } catch (e) {
    undo();
    if (e instanceof CpConflictError) throw nameTaken(tenantId, body.name);
    throw e;
  }
}

const nameTaken = (tenantId: string, name: string) =>
  conflict(`A deployment named '${name}' already exists in workspace ID '${tenantId}'.`);

/** New secrets for PATCH: a value equal to the mask keeps the stored value of that name. */
function mergeSecrets(stored: Secret[], given: Secret[]): Secret[] {
  return given.map((s, i) => {
    if (s.value !== MASK) return { name: s.name, value: s.value };
    const old = stored.find((o) => o.name === s.name);
    if (!old) {
      throw invalid(
        ["secrets", i, "value"],
        `Secret '${s.name}' has no stored value to keep; give its value.`,
        s.value,
      );
    }
    return old;
  });
}

export async function patchDeployment(
  ctx: CpContext,
  dep: Deployment,
  body: DeploymentPatchBody,
): Promise<Deployment> {
  const given = withoutNulls(body.source_config);
  for (const field of IMMUTABLE_SOURCE_CONFIG) {
    if (given[field] !== undefined && given[field] !== (dep.source_config[field] ?? null)) {
      throw invalid(
        ["source_config", field],
        `source_config.${field} cannot be changed once the deployment is created.`,
        given[field],
      );
    }
  }
  const ns = given.listener_config?.k8s_namespace;
  if (ns && ns !== (dep.source_config.listener_config?.k8s_namespace ?? null)) {
    throw invalid(
      ["source_config", "listener_config", "k8s_namespace"],
      "source_config.listener_config.k8s_namespace cannot be changed once the deployment is created.",
      ns,
    );
  }
  if (
    given.custom_url &&
    dep.source !== "external_docker" &&
    given.custom_url !== dep.source_config.custom_url
  ) {
    throw invalid(
      ["source_config", "custom_url"],
      "source_config.custom_url can only be set for 'external_docker' deployments.",
      given.custom_url,
    );
  }
  const sourceConfig: SourceConfig = { ...dep.source_config };
  for (const k of [
    "build_on_push",
    "custom_url",
    "resource_spec",
    "install_command",
    "build_command",
  ] as const) {
    if (given[k] !== undefined) (sourceConfig as Record<string, unknown>)[k] = given[k];
  }

  const srcGiven = withoutNulls(body.source_revision_config);
  const newRevision =
    Object.keys(srcGiven).length > 0 || !!body.secrets || !!body.secret_references || !!body.revision_source;
  if (!newRevision) return ctx.store.updateDeployment(dep.id, { source_config: sourceConfig });

  const latest = dep.latest_revision_id ? await ctx.store.getRevision(dep.id, dep.latest_revision_id) : null;
  const prevSource = latest?.source ?? dep.source;
  const source = body.revision_source ?? prevSource;
  // A revision of another source starts from its given fields (and the config path), not the previous ones.
  const base: SourceRevisionConfig =
    source === prevSource
      ? { ...dep.source_revision_config }
      : { langgraph_config_path: dep.source_revision_config.langgraph_config_path ?? null };
  // The image the control plane built of the previous revision (for a listener) is not this one's.
  if (BUILT_SOURCES.includes(source)) delete base.image_uri;
  const src: SourceRevisionConfig = { ...base, ...srcGiven };
  if (srcGiven.repo_ref && srcGiven.repo_ref !== base.repo_ref) src.repo_commit_sha = null;
  let undo = () => {};
  if (srcGiven.source_tarball_path && srcGiven.source_tarball_path !== base.source_tarball_path) {
    const adopted = await adoptTarball(ctx, dep.tenant_id, dep.id, srcGiven.source_tarball_path);
    src.source_tarball_path = adopted.path;
    undo = adopted.undo;
  }
  try {
    checkRevisionConfig(source, src);
    if (body.secrets) checkSecrets(body.secrets);
  } catch (e) {
    undo();
    throw e;
  }
  await ctx.store.updateDeployment(dep.id, {
    source_config: sourceConfig,
    ...(body.secrets ? { secrets: mergeSecrets(dep.secrets, body.secrets) } : {}),
    ...(body.secret_references ? { secret_references: body.secret_references } : {}),
  });
  return addRevision(ctx, dep.id, source, src);
}

/** Adds a QUEUED revision as the latest, skips the older ones not started yet, wakes the reconciler. */
async function addRevision(
  ctx: CpContext,
  deploymentId: string,
  source: DeploymentSource,
  src: SourceRevisionConfig,
): Promise<Deployment> {
  const rev = await ctx.store.addRevision(deploymentId, {
    id: randomUUID(),
    status: "QUEUED",
    source,
    source_revision_config: src,
  });
  await ctx.store.skipPendingRevisions(deploymentId, rev.id);
  ctx.wake();
  return (await ctx.store.getDeploymentById(deploymentId))!;
}

/** A new revision with an older revision's source. */
export async function redeployRevision(ctx: CpContext, dep: Deployment, rev: Revision): Promise<Deployment> {
  return addRevision(ctx, dep.id, rev.source, { ...rev.source_revision_config });
}

/** Marks deployments deleted (all or none: 404 for the first unknown id); the reconciler does the rest. */
export async function deleteDeployments(ctx: CpContext, tenantId: string, ids: string[]): Promise<void> {
  const found: Deployment[] = [];
  for (const id of ids) {
    const d = await ctx.store.getDeployment(tenantId, id);
    if (!d) throw deploymentNotFound(id);
    found.push(d);
  }
  const at = new Date().toISOString();
  for (const d of found)
    await ctx.store.updateDeployment(d.id, { deleted_at: at, status: "AWAITING_DELETE" });
  ctx.wake();
}
