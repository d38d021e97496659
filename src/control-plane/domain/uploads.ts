// Source tarball uploads: one-use upload URLs (15 minutes; the PUT that receives the file is http/uploads.ts), and
// the check that a `source_tarball_path` given on create or PATCH was uploaded here (workspace uploads adopted).
import { randomBytes, randomUUID } from "node:crypto";
import { mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { valueError } from "./errors.js";
import type { CpContext } from "./context.js";
import { sha256 } from "./hash.js";

export const UPLOAD_TTL_MS = 15 * 60 * 1000;

/** Where workspace uploads (made before their deployment exists) wait, relative to the data directory. */
const WORKSPACE_DIR = "uploads/_workspaces";

/**
 * The answer of an upload URL request. `object_path` is the field the official CLI reads (the object path to
 * PATCH as `source_tarball_path`); `source_tarball_path` holds the same value under the name Hangar's CLI uses.
 */
export interface UploadUrl {
  upload_url: string;
  object_path: string;
  source_tarball_path: string;
  expires_at: string;
}

/** Issues an upload URL for a deployment, or for the workspace (deploymentId null: usable on create). */
export async function issueUpload(
  ctx: CpContext,
  tenantId: string,
  deploymentId: string | null,
): Promise<UploadUrl> {
  const token = randomBytes(32).toString("base64url");
  const dir = deploymentId ? `uploads/${deploymentId}` : `${WORKSPACE_DIR}/${tenantId}`;
  const up = await ctx.store.createUpload({
    id: randomUUID(),
    tenant_id: tenantId,
    deployment_id: deploymentId,
    token_hash: sha256(token),
    path: `${dir}/${randomUUID()}.tar.gz`,
    expires_at: new Date(Date.now() + UPLOAD_TTL_MS).toISOString(),
  });
  return {
    upload_url: `${ctx.publicUrl()}/v2/uploads/${token}`,
    object_path: up.path,
    source_tarball_path: up.path,
    expires_at: up.expires_at,
  };
}

/**
 * Checks a `source_tarball_path` given on create or PATCH and returns the path to store: a completed upload
 * of this deployment, or a workspace upload, which is then moved under the deployment's directory (its path
 * changes to `uploads/<deployment id>/...`). Anything else is a 422 on `source_revision_config.source_tarball_path`.
 */
export async function adoptTarball(
  ctx: CpContext,
  tenantId: string,
  deploymentId: string,
  path: string,
): Promise<{ path: string; undo: () => void }> {
  const up = await ctx.store.findUpload(tenantId, path);
  if (up && up.deployment_id === deploymentId) return { path, undo: () => {} };
  if (!up || up.deployment_id !== null) {
    throw valueError(
      ["body", "source_revision_config", "source_tarball_path"],
      `source_revision_config.source_tarball_path '${path}' is not an uploaded tarball of this deployment: ` +
        "get an upload URL from POST /v2/deployments/{deployment_id}/upload-url (or POST /v2/uploads/upload-url " +
        "before creating a deployment), PUT the .tar.gz there, then pass its object_path.",
      path,
    );
  }
  const moved = `uploads/${deploymentId}/${path.split("/").pop()}`;
  mkdirSync(join(ctx.dataDir, "uploads", deploymentId), { recursive: true });
  renameSync(join(ctx.dataDir, path), join(ctx.dataDir, moved));
  await ctx.store.bindUpload(up.id, deploymentId, moved);
  return {
    path: moved,
    undo: () => {
      renameSync(join(ctx.dataDir, moved), join(ctx.dataDir, path));
      void ctx.store.bindUpload(up.id, null, path);
    },
  };
}
