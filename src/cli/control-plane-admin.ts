// `hangar control-plane admin ...`: organizations, workspaces and API keys in the control plane's store, whether
// the control plane runs or not. Loads the store and the admin rules only, never the control plane's server.
import { resolve } from "node:path";
import type { Command } from "commander";
import { AdminError, createKey, createOrg, createWorkspace } from "../control-plane/admin.js";
import type { CpStore } from "../control-plane/domain/types.js";
import { openCpPostgresStore } from "../control-plane/store/postgres.js";
import { openCpSqliteStore } from "../control-plane/store/sqlite.js";
import { cpDatabase, DEFAULT_DATA_DIR, reportedInOneLine } from "./cp-store.js";

/**
 * Runs one admin action on the control plane's store (the same choice as `hangar control-plane`: PostgreSQL
 * when DATABASE_URL is set, else the data directory's SQLite file), printing its result or its error.
 */
async function admin(cmd: Command, action: (store: CpStore) => Promise<string>): Promise<number> {
  const opts = cmd.optsWithGlobals() as { dataDir?: string };
  const dataDir = resolve(opts.dataDir ?? DEFAULT_DATA_DIR);
  let store: CpStore | undefined;
  try {
    const database = cpDatabase();
    store = database
      ? await openCpPostgresStore({ ...database, dataDir, poolSize: 2 })
      : openCpSqliteStore(dataDir);
    console.log(await action(store));
    return 0;
  } catch (e) {
    if (reportedInOneLine(e)) {
      console.error(`hangar control-plane admin: ${(e as Error).message}`);
      return 1;
    }
    throw e;
  } finally {
    await store?.close();
  }
}

/** The `control-plane admin` actions (their flags are declared in ./main.ts). */
export type AdminAction =
  | { kind: "create-org"; name: string; plan: string }
  | { kind: "create-workspace"; org: string; name: string }
  | { kind: "create-key"; workspace?: string; org?: string };

/** Runs one `control-plane admin` action on the store, printing its result; the exit code. */
export function runAdmin(cmd: Command, a: AdminAction): Promise<number> {
  return admin(cmd, async (store) => {
    switch (a.kind) {
      case "create-org": {
        const org = await createOrg(store, a.name, a.plan);
        return `Created organization ${org.id} (name "${org.name}", plan ${org.plan})`;
      }
      case "create-workspace": {
        const ws = await createWorkspace(store, a.org, a.name);
        return `Created workspace ${ws.id} (name "${ws.name}") in organization ${ws.organization_id}`;
      }
      case "create-key": {
        if (a.workspace && a.org) throw new AdminError("give either --workspace or --org, not both");
        const { key, record } = await createKey(store, { workspaceId: a.workspace, orgId: a.org });
        const scope = record.workspace_id
          ? `workspace ${record.workspace_id}`
          : `organization ${record.organization_id} (all its workspaces)`;
        return `Created API key ${record.id} for ${scope}. It is shown only now:\n${key}`;
      }
    }
  });
}
