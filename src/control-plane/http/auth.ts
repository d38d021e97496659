// Request → workspace: the API key (`X-Api-Key` or `Authorization: Bearer`), and `X-Tenant-Id` to pick one of
// the workspaces an organization key reaches. Keys are looked up by their SHA-256.
import { randomBytes } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { safeEqual } from "../../lib/safe-equal.js";
import { forbidden, unauthorized } from "./errors.js";
import { sha256 } from "../domain/hash.js";
import type { ApiKey, CpStore, Organization, Workspace } from "../domain/types.js";

/** Who a request acts as: its key, and the workspace (tenant) it works in. */
export interface CpPrincipal {
  key: ApiKey;
  workspace: Workspace;
  organization: Organization;
}

/** A new random API key (`hcp_` + 43 base64url characters). */
export function generateApiKey(): string {
  return `hcp_${randomBytes(32).toString("base64url")}`;
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  const s = Array.isArray(v) ? v[0] : v;
  return s?.trim() || undefined;
};

/** The key a request carries: `X-Api-Key`, else `Authorization: Bearer <key>`. */
export function requestKey(req: FastifyRequest): string | undefined {
  const key = header(req, "x-api-key");
  if (key) return key;
  const m = /^Bearer\s+(.+)$/i.exec(header(req, "authorization") ?? "");
  return m?.[1].trim() || undefined;
}

/** Authenticates a request and resolves its workspace; throws the 401/403 to answer otherwise. */
export async function authenticate(store: CpStore, req: FastifyRequest): Promise<CpPrincipal> {
  const secret = requestKey(req);
  if (!secret) {
    throw unauthorized(
      "Missing API key: send it in the X-Api-Key header (or as Authorization: Bearer <key>).",
    );
  }
  // Found by its SHA-256 (the store keeps no key); the digest is then compared again in constant time.
  const key = await store.findApiKey(secret);
  if (!key || !safeEqual(sha256(secret), key.hash)) throw unauthorized("Invalid API key.");
  const organization = await store.getOrganization(key.organization_id);
  if (!organization) throw unauthorized("Invalid API key.");
  const tenant = header(req, "x-tenant-id");
  if (key.workspace_id) {
    if (tenant && tenant.toLowerCase() !== key.workspace_id) {
      throw forbidden(`This API key does not have access to workspace ID '${tenant}' (X-Tenant-Id).`);
    }
    const workspace = await store.getWorkspace(key.workspace_id);
    if (!workspace) throw unauthorized("Invalid API key.");
    return { key, workspace, organization };
  }
  // An organization key reaches every workspace of its organization.
  const workspaces = await store.listWorkspaces(key.organization_id);
  if (tenant) {
    const workspace = workspaces.find((w) => w.id === tenant.toLowerCase());
    if (!workspace) {
      throw forbidden(`This API key does not have access to workspace ID '${tenant}' (X-Tenant-Id).`);
    }
    return { key, workspace, organization };
  }
  if (workspaces.length === 1) return { key, workspace: workspaces[0], organization };
  if (!workspaces.length) throw forbidden(`Organization '${organization.id}' has no workspace.`);
  // The official server's wording ("requires workspace specification"), which the official CLI recognises
  // (it then asks for the workspace ID, or says to set LANGSMITH_TENANT_ID).
  throw forbidden(
    `This API key is org-scoped and requires workspace specification: organization '${organization.id}' ` +
      "has several workspaces; send the X-Tenant-Id header with the ID of the workspace to use.",
  );
}

const principals = new WeakMap<FastifyRequest, CpPrincipal>();

export function setPrincipal(req: FastifyRequest, p: CpPrincipal): void {
  principals.set(req, p);
}

/** The authenticated principal of a request (set by the API's onRequest hook). */
export function principal(req: FastifyRequest): CpPrincipal {
  const p = principals.get(req);
  if (!p) throw unauthorized("Missing API key.");
  return p;
}

/** The workspace (tenant) id a request works in. */
export const tenantOf = (req: FastifyRequest): string => principal(req).workspace.id;
