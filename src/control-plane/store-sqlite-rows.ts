// Helpers of the control plane's SQLite store: its migrations (numbered .sql files under a ledger) and the
// mapping of rows to records.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { migrate as migrateDir } from "../storage/sqlite/db.js";
import type { ApiKey, Deployment, Listener, Revision } from "./types.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations", "sqlite");

/** Applies the control plane's pending SQLite migrations (the Agent Server's runner, on its own directory). */
export const migrate = (db: Database.Database): void =>
  migrateDir(db, MIGRATIONS_DIR, "control plane database");

export type Row = Record<string, any>;

export const toDeployment = (r: Row): Deployment => ({
  id: r.id,
  tenant_id: r.tenant_id,
  name: r.name,
  source: r.source,
  source_config: JSON.parse(r.source_config),
  source_revision_config: JSON.parse(r.source_revision_config),
  secrets: JSON.parse(r.secrets),
  secret_references: r.secret_references ? JSON.parse(r.secret_references) : null,
  status: r.status,
  latest_revision_id: r.latest_revision_id,
  active_revision_id: r.active_revision_id,
  created_at: r.created_at,
  updated_at: r.updated_at,
  deleted_at: r.deleted_at,
});

export const toRevision = (r: Row): Revision => ({
  id: r.id,
  deployment_id: r.deployment_id,
  status: r.status,
  source: r.source,
  source_revision_config: JSON.parse(r.source_revision_config),
  status_message: r.status_message,
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const toListener = (r: Row): Listener => ({
  id: r.id,
  tenant_id: r.tenant_id,
  version: r.version,
  compute_type: r.compute_type,
  compute_id: r.compute_id,
  compute_config: JSON.parse(r.compute_config),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

export const toApiKey = (r: Row): ApiKey => ({
  id: r.id,
  workspace_id: r.workspace_id,
  organization_id: r.organization_id,
  prefix: r.prefix,
  hash: r.hash,
  created_at: r.created_at,
});

export const isUniqueViolation = (e: unknown) =>
  (e as { code?: string }).code === "SQLITE_CONSTRAINT_UNIQUE" ||
  (e as { code?: string }).code === "SQLITE_CONSTRAINT_PRIMARYKEY";
