// Helpers of the control plane's SQLite store: its migrations (numbered .sql files under a ledger) and the
// mapping of rows to records.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { migrate as migrateDir } from "../../storage/sqlite/db.js";
import { wrongKeyError, type SecretBox } from "../domain/secrets-crypto.js";
import type { ApiKey, Deployment, Listener, Revision } from "../domain/types.js";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations", "sqlite");

/** Applies the control plane's pending SQLite migrations (the Agent Server's runner, on its own directory). */
export const migrate = (db: Database.Database): void =>
  migrateDir(db, MIGRATIONS_DIR, "control plane database");

export type Row = Record<string, any>;

/**
 * Binds the store to the secrets key: records its id on first use, refuses another key (SecretKeyError), then
 * encrypts the secrets of rows written before encryption (a JSON array in the `secrets` column).
 */
export function sealStoredSecrets(db: Database.Database, box: SecretBox): void {
  const sealed = db.transaction(() => {
    db.prepare(
      "INSERT INTO store_settings (key, value) VALUES ('secrets_key_id', ?) ON CONFLICT DO NOTHING",
    ).run(box.keyId);
    const { value } = db
      .prepare("SELECT value FROM store_settings WHERE key = 'secrets_key_id'")
      .get() as Row;
    if (value !== box.keyId) throw wrongKeyError(value, box);
    const plain = db
      .prepare("SELECT id, secrets FROM deployments WHERE json_type(secrets) <> 'text'")
      .all() as Row[];
    const update = db.prepare("UPDATE deployments SET secrets = ? WHERE id = ?");
    for (const r of plain) {
      const secrets = box.open(JSON.parse(r.secrets), r.id);
      update.run(JSON.stringify(box.seal(secrets, r.id)), r.id);
    }
    return plain.length;
  })();
  // The plaintext must not survive in the file: freed cells are zeroed (secure_delete, set on open) and the
  // pages written through the WAL are copied back and the WAL emptied.
  if (sealed) db.pragma("wal_checkpoint(TRUNCATE)");
}

export const toDeployment = (r: Row, box: SecretBox): Deployment => ({
  id: r.id,
  tenant_id: r.tenant_id,
  name: r.name,
  source: r.source,
  source_config: JSON.parse(r.source_config),
  source_revision_config: JSON.parse(r.source_revision_config),
  secrets: box.open(JSON.parse(r.secrets), r.id),
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
