// Rows of the control plane's tables as its records, for both databases (JSON columns through the dialect; times
// as ISO-8601 strings, which SQLite keeps and PostgreSQL's TIMESTAMPTZ gives as Dates).
import type { SecretBox } from "../domain/secrets-crypto.js";
import type {
  ApiKey,
  Deployment,
  Listener,
  LogLine,
  Organization,
  Revision,
  Upload,
  Workspace,
} from "../domain/types.js";
import type { Row, SqlDb, SqlDialect, SqlExec, Table } from "./sql.js";

/** A time column as the records' ISO string. */
export const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));

/** Maps rows to records; deployments' secrets are opened with the store's key. */
export function rowMappers(db: Pick<SqlDialect, "fromJson">, box: SecretBox) {
  return {
    deployment: (r: Row): Deployment => ({
      id: r.id,
      tenant_id: r.tenant_id,
      name: r.name,
      source: r.source,
      source_config: db.fromJson(r.source_config),
      source_revision_config: db.fromJson(r.source_revision_config),
      secrets: box.open(db.fromJson(r.secrets), r.id),
      secret_references: r.secret_references ? db.fromJson(r.secret_references) : null,
      status: r.status,
      latest_revision_id: r.latest_revision_id,
      active_revision_id: r.active_revision_id,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
      deleted_at: isoOrNull(r.deleted_at),
    }),
    revision: (r: Row): Revision => ({
      id: r.id,
      deployment_id: r.deployment_id,
      status: r.status,
      source: r.source,
      source_revision_config: db.fromJson(r.source_revision_config),
      status_message: r.status_message,
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
    listener: (r: Row): Listener => ({
      id: r.id,
      tenant_id: r.tenant_id,
      version: r.version,
      compute_type: r.compute_type,
      compute_id: r.compute_id,
      compute_config: db.fromJson(r.compute_config),
      created_at: iso(r.created_at),
      updated_at: iso(r.updated_at),
    }),
    apiKey: (r: Row): ApiKey => ({
      id: r.id,
      workspace_id: r.workspace_id,
      organization_id: r.organization_id,
      prefix: r.prefix,
      hash: r.hash,
      created_at: iso(r.created_at),
    }),
    organization: (r: Row): Organization => ({
      id: r.id,
      name: r.name,
      plan: r.plan,
      created_at: iso(r.created_at),
    }),
    workspace: (r: Row): Workspace => ({
      id: r.id,
      organization_id: r.organization_id,
      name: r.name,
      created_at: iso(r.created_at),
    }),
    upload: (r: Row): Upload => ({
      id: r.id,
      tenant_id: r.tenant_id,
      deployment_id: r.deployment_id,
      token_hash: r.token_hash,
      path: r.path,
      state: r.state,
      expires_at: iso(r.expires_at),
      created_at: iso(r.created_at),
    }),
    logLine: (r: Row): LogLine => ({
      deployment_id: r.deployment_id,
      revision_id: r.revision_id,
      kind: r.kind,
      level: r.level,
      message: r.message,
      timestamp: iso(r.timestamp),
    }),
  };
}

/** What the store's queries share: the database, its tables' names, the row mappers, the secrets key. */
export interface StoreContext {
  db: SqlDb;
  t: Record<Table, string>;
  to: ReturnType<typeof rowMappers>;
  box: SecretBox;
  /** The control plane's data directory (uploads), when the store knows it. */
  dataDir?: string;
  /** A deployment by id (any tenant, deleted ones included), read on `q`. */
  deploymentById(q: SqlExec, id: string): Promise<Deployment | null>;
}

const TABLES: Table[] = [
  "organizations",
  "workspaces",
  "api_keys",
  "deployments",
  "revisions",
  "listeners",
  "uploads",
  "logs",
];

export function storeContext(db: SqlDb, box: SecretBox, dataDir?: string): StoreContext {
  const t = Object.fromEntries(TABLES.map((name) => [name, db.table(name)])) as Record<Table, string>;
  const to = rowMappers(db, box);
  return {
    db,
    t,
    to,
    box,
    dataDir,
    async deploymentById(q, id) {
      const r = await q.one(`SELECT * FROM ${t.deployments} WHERE id = ?`, [id]);
      return r ? to.deployment(r) : null;
    },
  };
}

export const now = () => new Date().toISOString();

/** `?, ?, ?` for n arguments. */
export const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** A query's page: `LIMIT ? OFFSET ?` and its two arguments. */
export const page = (q: { limit: number; offset: number }) => ({
  sql: "LIMIT ? OFFSET ?",
  args: [q.limit, q.offset],
});
