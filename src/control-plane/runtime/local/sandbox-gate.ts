// One organization per machine where the control plane cannot sandbox: its builds and deployments would run as
// the control plane's own user, seeing each other; only the organization that deployed here first is served.
import type { Sandbox } from "./sandbox.js";
import type { CpStore, Deployment } from "../../domain/types.js";

export interface TenantGate {
  /** Why the organization may not run deployments on this machine; null when it may. */
  refusal(organizationId: string): Promise<string | null>;
  /** The same for an existing deployment (its workspace's organization). */
  refusalFor(d: Deployment): Promise<string | null>;
}

export function tenantGate(store: CpStore, sandbox: Sandbox): TenantGate {
  /** The organization of the oldest local deployment that is not deleted, if any. */
  const owner = async (): Promise<string | null> => {
    for (const d of await store.deploymentsFor(null)) {
      if (d.deleted_at) continue;
      const ws = await store.getWorkspace(d.tenant_id);
      if (ws) return ws.organization_id;
    }
    return null;
  };
  const refusal = async (organizationId: string): Promise<string | null> => {
    if (sandbox.enabled) return null;
    const first = await owner();
    if (!first || first === organizationId) return null;
    return (
      `This control plane cannot sandbox builds and deployments (${sandbox.reason}), so it runs the ` +
      `deployments of one organization only, and organization '${first}' already deploys here. Run the ` +
      "control plane as root on Linux with bubblewrap installed (see the README, Security), or use a control " +
      "plane of your own."
    );
  };
  return {
    refusal,
    refusalFor: async (d) => {
      if (sandbox.enabled) return null;
      const ws = await store.getWorkspace(d.tenant_id);
      return ws ? refusal(ws.organization_id) : null;
    },
  };
}
