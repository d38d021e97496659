// Tenancy administration: organizations, workspaces and API keys (the `hangar control-plane admin` commands),
// and the bootstrap of a fresh control plane from HANGAR_CP_BOOTSTRAP_API_KEY / HANGAR_CP_BOOTSTRAP_PLAN.
import type { ControlPlaneSettings } from "../lib/settings.js";
import type { Logger } from "../lib/logger.js";
import { generateApiKey } from "./http/auth.js";
import { DEFAULT_CP_SCHEMA } from "./store/postgres.js";
import type { ApiKey, CpStore, Organization, Plan, Workspace } from "./domain/types.js";
import { InvalidInputError } from "../lib/errors.js";

export const PLANS: Plan[] = ["free", "plus", "enterprise", "self_hosted_enterprise"];

/** An administration request that cannot be done (unknown plan, organization or workspace). */
export class AdminError extends InvalidInputError {}

export function parsePlan(plan: string): Plan {
  if (!PLANS.includes(plan as Plan)) {
    throw new AdminError(`unknown plan "${plan}": expected one of ${PLANS.join(", ")}`);
  }
  return plan as Plan;
}

export async function createOrg(store: CpStore, name: string, plan: string): Promise<Organization> {
  if (!name.trim()) throw new AdminError("an organization needs a name");
  return store.createOrganization(name, parsePlan(plan));
}

export async function createWorkspace(store: CpStore, orgId: string, name: string): Promise<Workspace> {
  if (!name.trim()) throw new AdminError("a workspace needs a name");
  if (!(await store.getOrganization(orgId))) throw new AdminError(`no organization with id ${orgId}`);
  return store.createWorkspace(orgId, name);
}

/** Creates a key for a workspace, or an organization key (every workspace of the organization). */
export async function createKey(
  store: CpStore,
  scope: { workspaceId?: string; orgId?: string },
  key: string = generateApiKey(),
): Promise<{ key: string; record: ApiKey }> {
  if (scope.workspaceId) {
    const ws = await store.getWorkspace(scope.workspaceId);
    if (!ws) throw new AdminError(`no workspace with id ${scope.workspaceId}`);
    return { key, record: await store.createApiKey(key, ws.organization_id, ws.id) };
  }
  if (scope.orgId) {
    if (!(await store.getOrganization(scope.orgId)))
      throw new AdminError(`no organization with id ${scope.orgId}`);
    return { key, record: await store.createApiKey(key, scope.orgId, null) };
  }
  throw new AdminError("give --workspace <id> (a workspace key) or --org <id> (an organization key)");
}

/**
 * How to create the first organization, workspace and key, for a control plane on `dataDir` (its SQLite
 * store), or on PostgreSQL in `postgresSchema` (the admin commands then need the same DATABASE_URL).
 */
export function adminHelp(dataDir: string, postgresSchema?: string): string {
  const dd = postgresSchema ? "" : ` --data-dir ${JSON.stringify(dataDir)}`;
  const where = postgresSchema
    ? [
        `  (with the control plane's DATABASE_URL` +
          (postgresSchema === DEFAULT_CP_SCHEMA ? ")" : ` and HANGAR_CP_DATABASE_SCHEMA=${postgresSchema})`),
      ]
    : [];
  return [
    "No organization exists yet. Create one (the control plane may keep running):",
    ...where,
    `  hangar control-plane admin create-org --name <name> --plan <${PLANS.join("|")}>${dd}`,
    `  hangar control-plane admin create-workspace --org <organization id> --name <name>${dd}`,
    `  hangar control-plane admin create-key --workspace <workspace id>${dd}`,
    "    (or create-key --org <organization id> for an organization key; the key is printed once)",
    "or start the control plane with HANGAR_CP_BOOTSTRAP_API_KEY=<key> (and HANGAR_CP_BOOTSTRAP_PLAN, default plus).",
  ].join("\n");
}

/**
 * On a store without any organization: with HANGAR_CP_BOOTSTRAP_API_KEY, creates organization "default" on
 * HANGAR_CP_BOOTSTRAP_PLAN (default plus), workspace "default" and that key; without it, prints how to.
 */
export async function bootstrap(
  store: CpStore,
  env: Pick<ControlPlaneSettings, "bootstrapApiKey" | "bootstrapPlan">,
  dataDir: string,
  log: Logger,
  postgresSchema?: string,
): Promise<Workspace | null> {
  const key = env.bootstrapApiKey?.trim();
  const plan = parsePlan(env.bootstrapPlan.trim());
  // Control planes starting at once on one PostgreSQL store: only the first bootstraps.
  const exclusive = store.exclusive?.bind(store) ?? (<T>(fn: () => Promise<T>) => fn());
  return exclusive(async () => {
    if ((await store.countOrganizations()) > 0) return null;
    if (!key) {
      log.warn(adminHelp(dataDir, postgresSchema));
      return null;
    }
    const org = await store.createOrganization("default", plan);
    const ws = await store.createWorkspace(org.id, "default");
    await store.createApiKey(key, org.id, ws.id);
    log.info(
      `Bootstrapped organization "default" (${org.id}, plan ${plan}) with workspace "default": ${ws.id}; ` +
        "its API key is HANGAR_CP_BOOTSTRAP_API_KEY",
    );
    return ws;
  });
}
