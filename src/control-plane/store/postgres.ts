// The control plane's store on PostgreSQL (`hangar control-plane` with DATABASE_URL): the same records and
// behaviour as the SQLite store (store/sqlite.ts), in one schema (default "hangar_control_plane") with
// numbered migrations (migrations/postgres/) applied under an advisory lock with a ledger, so several control
// planes may start at once on one database. JSONB for the API's objects, TIMESTAMPTZ for times.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import {
  checkSchemaName,
  connectPool,
  Db,
  jsonb,
  type Queryable,
  type Row,
} from "../../storage/postgres/db.js";
import { ident, migratePostgres } from "../../storage/postgres/migrate.js";
import { sha256 } from "../domain/hash.js";
import { loadSecretBox, redactSecrets, wrongKeyError, type SecretBox } from "../domain/secrets-crypto.js";
import {
  CpConflictError,
  type ApiKey,
  type CpStore,
  type Deployment,
  type Listener,
  type LogLine,
  type Organization,
  type Revision,
  type Upload,
  type Workspace,
} from "../domain/types.js";

export const DEFAULT_CP_SCHEMA = "hangar_control_plane";

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "migrations", "postgres");
/** First key of the migrations' advisory lock (the Agent Server's storage uses another). */
const MIGRATION_LOCK = 0x48435031; // "HCP1"
/** First key of the advisory lock of `exclusive` (the bootstrap). */
const EXCLUSIVE_LOCK = 0x48435032; // "HCP2"

export interface CpPostgresOptions {
  /** postgres://user:password@host:port/database (any option pg understands). */
  url: string;
  /** The schema of the control plane's tables; created when missing. Default "hangar_control_plane". */
  schema?: string;
  /**
   * The control plane's data directory: purging a deployment also removes its uploaded files there
   * (`uploads/<deployment id>/`), as the SQLite store does. Without it, files are left alone.
   */
  dataDir?: string;
  /** Most connections the pool opens (default 10). */
  poolSize?: number;
  /** application_name of the connections (default "hangar control-plane <pid>"). */
  applicationName?: string;
  /** Told about connections that broke while idle in the pool (default: one line on stderr). */
  onError?: (err: Error) => void;
  /**
   * The key of deployments' secrets; default loadSecretBox (HANGAR_CP_SECRET_KEY of `env`, else the key file of
   * `dataDir`). Every control plane sharing a store needs the same key.
   */
  secretBox?: SecretBox;
  /** HANGAR_CP_SECRET_KEY's value, when no secretBox is given; default this process's setting. */
  secretKey?: string;
  /** Told when a key file is generated. */
  log?: (msg: string) => void;
}

const now = () => new Date().toISOString();

/** A TIMESTAMPTZ (a Date from pg) as the records' ISO string. */
const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : String(v));
const isoOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : iso(v));

/** PostgreSQL TEXT cannot hold U+0000 (SQLite can): it is dropped. */
const text = <T extends string | null | undefined>(v: T): T =>
  (typeof v === "string" && v.includes("\0") ? v.replace(/\0/g, "") : v) as T;

const isUniqueViolation = (e: unknown) => (e as { code?: string }).code === "23505";

const toDeploymentRow = (r: Row, box: SecretBox): Deployment => ({
  id: r.id,
  tenant_id: r.tenant_id,
  name: r.name,
  source: r.source,
  source_config: r.source_config,
  source_revision_config: r.source_revision_config,
  secrets: box.open(r.secrets, r.id),
  secret_references: r.secret_references ?? null,
  status: r.status,
  latest_revision_id: r.latest_revision_id,
  active_revision_id: r.active_revision_id,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
  deleted_at: isoOrNull(r.deleted_at),
});

const toRevision = (r: Row): Revision => ({
  id: r.id,
  deployment_id: r.deployment_id,
  status: r.status,
  source: r.source,
  source_revision_config: r.source_revision_config,
  status_message: r.status_message,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const toListener = (r: Row): Listener => ({
  id: r.id,
  tenant_id: r.tenant_id,
  version: r.version,
  compute_type: r.compute_type,
  compute_id: r.compute_id,
  compute_config: r.compute_config,
  created_at: iso(r.created_at),
  updated_at: iso(r.updated_at),
});

const toApiKey = (r: Row): ApiKey => ({
  id: r.id,
  workspace_id: r.workspace_id,
  organization_id: r.organization_id,
  prefix: r.prefix,
  hash: r.hash,
  created_at: iso(r.created_at),
});

const toOrganization = (r: Row): Organization => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  created_at: iso(r.created_at),
});

const toWorkspace = (r: Row): Workspace => ({
  id: r.id,
  organization_id: r.organization_id,
  name: r.name,
  created_at: iso(r.created_at),
});

const toUpload = (r: Row): Upload => ({
  id: r.id,
  tenant_id: r.tenant_id,
  deployment_id: r.deployment_id,
  token_hash: r.token_hash,
  path: r.path,
  state: r.state,
  expires_at: iso(r.expires_at),
  created_at: iso(r.created_at),
});

/**
 * Binds the store to the secrets key (its id recorded on first use; another key refused with SecretKeyError),
 * then encrypts the secrets of rows written before encryption (a JSONB array), all in one transaction under a
 * lock of the settings table, so control planes starting together agree.
 */
async function sealStoredSecrets(pool: pg.Pool, s: string, box: SecretBox): Promise<void> {
  const c = await pool.connect();
  try {
    await c.query("BEGIN");
    await c.query(`LOCK TABLE ${s}.store_settings IN EXCLUSIVE MODE`);
    await c.query(
      `INSERT INTO ${s}.store_settings (key, value) VALUES ('secrets_key_id', $1) ON CONFLICT DO NOTHING`,
      [box.keyId],
    );
    const { rows } = await c.query(`SELECT value FROM ${s}.store_settings WHERE key = 'secrets_key_id'`);
    if (rows[0].value !== box.keyId) throw wrongKeyError(rows[0].value as string, box);
    const plain = await c.query(
      `SELECT id, secrets FROM ${s}.deployments WHERE jsonb_typeof(secrets) <> 'string' FOR UPDATE`,
    );
    for (const r of plain.rows) {
      const sealed = box.seal(box.open(r.secrets, r.id), r.id);
      await c.query(`UPDATE ${s}.deployments SET secrets = $1::jsonb WHERE id = $2`, [jsonb(sealed), r.id]);
    }
    await c.query("COMMIT");
  } catch (e) {
    await c.query("ROLLBACK").catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/** Collects positional parameters: `p(v)` adds one and returns its placeholder ($1, $2, ...). */
function params() {
  const values: unknown[] = [];
  const p = (v: unknown) => {
    values.push(v);
    return `$${values.length}`;
  };
  return { values, p };
}

/**
 * Opens the control plane's store on PostgreSQL: connects (one-line PostgresConnectError when the server
 * cannot be reached), creates the schema and applies pending migrations.
 */
export async function openCpPostgresStore(opts: CpPostgresOptions): Promise<CpStore> {
  const schema = opts.schema ?? DEFAULT_CP_SCHEMA;
  checkSchemaName(schema);
  const pool: pg.Pool = await connectPool(
    {
      connectionString: opts.url,
      max: opts.poolSize ?? 10,
      application_name: opts.applicationName ?? `hangar control-plane ${process.pid}`,
    },
    opts.onError ??
      ((err: Error) =>
        console.error(
          `hangar control-plane: PostgreSQL connection lost (the pool replaces it): ${err.message}`,
        )),
  );
  let box: SecretBox;
  try {
    box =
      opts.secretBox ?? loadSecretBox({ secretKey: opts.secretKey, dataDir: opts.dataDir, log: opts.log });
    await migratePostgres(pool, schema, { dir: MIGRATIONS_DIR, lockKey: MIGRATION_LOCK });
    await sealStoredSecrets(pool, ident(schema), box);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }

  const db = new Db(pool, schema);
  const s = ident(schema);
  const t = {
    organizations: `${s}.organizations`,
    workspaces: `${s}.workspaces`,
    api_keys: `${s}.api_keys`,
    deployments: `${s}.deployments`,
    revisions: `${s}.revisions`,
    listeners: `${s}.listeners`,
    uploads: `${s}.uploads`,
    logs: `${s}.logs`,
  };

  const one = async (q: Queryable, sql: string, args: unknown[] = []) =>
    (await q.query(sql, args)).rows[0] as Row | undefined;
  const all = async (q: Queryable, sql: string, args: unknown[] = []) => (await q.query(sql, args)).rows;

  const toDeployment = (r: Row) => toDeploymentRow(r, box);
  const deploymentById = async (q: Queryable, id: string) => {
    const r = await one(q, `SELECT * FROM ${t.deployments} WHERE id = $1`, [id]);
    return r ? toDeployment(r) : null;
  };

  const insertRevision = async (
    q: Queryable,
    deploymentId: string,
    r: Omit<Revision, "created_at" | "updated_at" | "deployment_id">,
  ) => {
    const ts = now();
    const row = await one(
      q,
      `INSERT INTO ${t.revisions}
         (id, deployment_id, status, source, source_revision_config, status_message, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $7) RETURNING *`,
      [
        r.id,
        deploymentId,
        r.status,
        r.source,
        jsonb(r.source_revision_config ?? {}),
        text(r.status_message ?? null),
        ts,
      ],
    );
    return toRevision(row!);
  };

  /** The columns a deployment is written with (insert and update), in this order. */
  const deploymentValues = (d: Deployment) => [
    text(d.name),
    d.source,
    jsonb(d.source_config ?? {}),
    jsonb(d.source_revision_config ?? {}),
    jsonb(box.seal(d.secrets ?? [], d.id)),
    d.secret_references ? jsonb(d.secret_references) : null,
    d.status,
    d.source_config?.deployment_type ?? null,
    d.source_config?.listener_id ?? null,
    d.latest_revision_id,
    d.active_revision_id,
  ];

  const nameConflict = (name: string) => new CpConflictError(`A deployment named '${name}' already exists.`);

  let closing: Promise<void> | undefined;
  const store: CpStore = {
    // tenancy
    async createOrganization(name, plan) {
      const org: Organization = { id: randomUUID(), name, plan, created_at: now() };
      await db.query(`INSERT INTO ${t.organizations} (id, name, plan, created_at) VALUES ($1, $2, $3, $4)`, [
        org.id,
        text(name),
        plan,
        org.created_at,
      ]);
      return org;
    },
    async getOrganization(id) {
      const r = await one(db, `SELECT * FROM ${t.organizations} WHERE id = $1`, [id]);
      return r ? toOrganization(r) : null;
    },
    async createWorkspace(organizationId, name) {
      const ws: Workspace = { id: randomUUID(), organization_id: organizationId, name, created_at: now() };
      await db.query(
        `INSERT INTO ${t.workspaces} (id, organization_id, name, created_at) VALUES ($1, $2, $3, $4)`,
        [ws.id, organizationId, text(name), ws.created_at],
      );
      return ws;
    },
    async getWorkspace(id) {
      const r = await one(db, `SELECT * FROM ${t.workspaces} WHERE id = $1`, [id]);
      return r ? toWorkspace(r) : null;
    },
    async listWorkspaces(organizationId) {
      return (
        await all(db, `SELECT * FROM ${t.workspaces} WHERE organization_id = $1 ORDER BY created_at, id`, [
          organizationId,
        ])
      ).map(toWorkspace);
    },
    async createApiKey(key, organizationId, workspaceId) {
      const k: ApiKey = {
        id: randomUUID(),
        workspace_id: workspaceId,
        organization_id: organizationId,
        // Enough to recognise a key, never enough to reveal a short one.
        prefix: text(key.slice(0, Math.min(12, Math.floor(key.length / 4)))),
        hash: sha256(key),
        created_at: now(),
      };
      try {
        await db.query(
          `INSERT INTO ${t.api_keys} (id, organization_id, workspace_id, prefix, hash, created_at)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [k.id, k.organization_id, k.workspace_id, k.prefix, k.hash, k.created_at],
        );
      } catch (e) {
        if (isUniqueViolation(e)) throw new CpConflictError("this API key already exists");
        throw e;
      }
      return k;
    },
    async findApiKey(key) {
      const r = await one(db, `SELECT * FROM ${t.api_keys} WHERE hash = $1`, [sha256(key)]);
      return r ? toApiKey(r) : null;
    },
    async countOrganizations() {
      const r = await one(db, `SELECT count(*)::int AS n FROM ${t.organizations}`);
      return (r?.n as number) ?? 0;
    },

    // deployments and revisions
    async createDeployment(d, first) {
      const ts = now();
      const rec: Deployment = {
        ...d,
        latest_revision_id: first?.id ?? null,
        active_revision_id: null,
        created_at: ts,
        updated_at: ts,
      };
      try {
        await db.tx(async (q) => {
          await q.query(
            `INSERT INTO ${t.deployments} (name, source, source_config, source_revision_config, secrets,
               secret_references, status, deployment_type, listener_id, latest_revision_id, active_revision_id,
               id, tenant_id, created_at, updated_at, deleted_at)
             VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, $12, $13, $14, $14,
               $15)`,
            [...deploymentValues(rec), d.id, d.tenant_id, ts, d.deleted_at ?? null],
          );
          if (first) await insertRevision(q, d.id, first);
        });
      } catch (e) {
        if (isUniqueViolation(e)) throw nameConflict(d.name);
        throw e;
      }
      return (await deploymentById(db, d.id))!;
    },
    async getDeployment(tenantId, id) {
      const r = await one(
        db,
        `SELECT * FROM ${t.deployments} WHERE id = $1 AND tenant_id = $2 AND deleted_at IS NULL`,
        [id, tenantId],
      );
      return r ? toDeployment(r) : null;
    },
    async getDeploymentById(id) {
      return deploymentById(db, id);
    },
    async listDeployments(tenantId, q) {
      const { values, p } = params();
      const where = [`tenant_id = ${p(tenantId)}`, "deleted_at IS NULL"];
      if (q.name !== undefined) where.push(`name = ${p(q.name)}`);
      if (q.name_contains) where.push(`strpos(lower(name), lower(${p(q.name_contains)})) > 0`);
      if (q.deployment_type) where.push(`deployment_type = ${p(q.deployment_type)}`);
      if (q.status) where.push(`status = ${p(q.status)}`);
      if (q.deployment_ids) {
        if (!q.deployment_ids.length) return [];
        where.push(`id = ANY(${p(q.deployment_ids)}::text[])`);
      }
      return (
        await all(
          db,
          `SELECT * FROM ${t.deployments} WHERE ${where.join(" AND ")}
           ORDER BY seq DESC LIMIT ${p(q.limit)} OFFSET ${p(q.offset)}`,
          values,
        )
      ).map(toDeployment);
    },
    async updateDeployment(id, patch) {
      let name = patch.name ?? "";
      try {
        return await db.tx(async (q) => {
          const r = await one(q, `SELECT * FROM ${t.deployments} WHERE id = $1 FOR UPDATE`, [id]);
          if (!r) throw new Error(`deployment ${id} does not exist`);
          const d: Deployment = { ...toDeployment(r), ...patch };
          name = d.name;
          const row = await one(
            q,
            `UPDATE ${t.deployments} SET name = $1, source = $2, source_config = $3::jsonb,
               source_revision_config = $4::jsonb, secrets = $5::jsonb, secret_references = $6::jsonb, status = $7,
               deployment_type = $8, listener_id = $9, latest_revision_id = $10, active_revision_id = $11,
               updated_at = $12, deleted_at = $13
             WHERE id = $14 RETURNING *`,
            [...deploymentValues(d), patch.updated_at ?? now(), d.deleted_at ?? null, id],
          );
          return toDeployment(row!);
        });
      } catch (e) {
        if (isUniqueViolation(e)) throw nameConflict(name);
        throw e;
      }
    },
    async addRevision(deploymentId, r) {
      return db.tx(async (q) => {
        const rev = await insertRevision(q, deploymentId, r);
        await q.query(
          `UPDATE ${t.deployments} SET latest_revision_id = $1, source_revision_config = $2::jsonb, updated_at = $3
           WHERE id = $4`,
          [rev.id, jsonb(rev.source_revision_config), rev.created_at, deploymentId],
        );
        return rev;
      });
    },
    async getRevision(deploymentId, revisionId) {
      const r = await one(db, `SELECT * FROM ${t.revisions} WHERE id = $1 AND deployment_id = $2`, [
        revisionId,
        deploymentId,
      ]);
      return r ? toRevision(r) : null;
    },
    async listRevisions(deploymentId, q) {
      const { values, p } = params();
      const where = [`deployment_id = ${p(deploymentId)}`];
      if (q.status) {
        if (!q.status.length) return [];
        where.push(`status = ANY(${p(q.status)}::text[])`);
      }
      return (
        await all(
          db,
          `SELECT * FROM ${t.revisions} WHERE ${where.join(" AND ")}
           ORDER BY seq DESC LIMIT ${p(q.limit)} OFFSET ${p(q.offset)}`,
          values,
        )
      ).map(toRevision);
    },
    async setRevisionStatus(revisionId, status, message) {
      // A failure's reason may quote a command's output: the deployment's secrets are masked in it.
      let masked = message ?? null;
      if (masked) {
        const owner = await one(db, `SELECT deployment_id FROM ${t.revisions} WHERE id = $1`, [revisionId]);
        const dep = owner ? await deploymentById(db, owner.deployment_id as string) : null;
        masked = redactSecrets(masked, dep?.secrets ?? []);
      }
      await db.query(
        `UPDATE ${t.revisions} SET status = $1, status_message = $2, updated_at = $3 WHERE id = $4`,
        [status, text(masked), now(), revisionId],
      );
    },
    async skipPendingRevisions(deploymentId, exceptRevisionId) {
      const rows = await all(
        db,
        `WITH skipped AS (
           UPDATE ${t.revisions} SET status = 'SKIPPED', status_message = $3, updated_at = $4
            WHERE deployment_id = $1 AND id <> $2 AND status IN ('CREATING', 'QUEUED', 'AWAITING_BUILD')
           RETURNING id, seq)
         SELECT id FROM skipped ORDER BY seq`,
        [deploymentId, exceptRevisionId, `Superseded by revision ${exceptRevisionId}`, now()],
      );
      return rows.map((r) => r.id as string);
    },
    async deploymentsFor(listenerId) {
      const rows =
        listenerId === null
          ? await all(db, `SELECT * FROM ${t.deployments} WHERE listener_id IS NULL ORDER BY seq`)
          : await all(db, `SELECT * FROM ${t.deployments} WHERE listener_id = $1 ORDER BY seq`, [listenerId]);
      return rows.map(toDeployment);
    },
    async purgeDeployment(id) {
      await db.tx(async (q) => {
        await q.query(`DELETE FROM ${t.logs} WHERE deployment_id = $1`, [id]);
        await q.query(`DELETE FROM ${t.revisions} WHERE deployment_id = $1`, [id]);
        await q.query(`DELETE FROM ${t.uploads} WHERE deployment_id = $1`, [id]);
        await q.query(`DELETE FROM ${t.deployments} WHERE id = $1`, [id]);
      });
      if (opts.dataDir) rmSync(join(opts.dataDir, "uploads", id), { recursive: true, force: true });
    },

    // listeners
    async createListener(l) {
      const ts = now();
      try {
        const row = await one(
          db,
          `INSERT INTO ${t.listeners}
             (id, tenant_id, version, compute_type, compute_id, compute_config, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $7) RETURNING *`,
          [
            l.id,
            l.tenant_id,
            text(l.version ?? null),
            l.compute_type,
            text(l.compute_id),
            jsonb(l.compute_config ?? {}),
            ts,
          ],
        );
        return toListener(row!);
      } catch (e) {
        if (isUniqueViolation(e)) return "conflict";
        throw e;
      }
    },
    async getListener(tenantId, id) {
      const r = await one(db, `SELECT * FROM ${t.listeners} WHERE id = $1 AND tenant_id = $2`, [
        id,
        tenantId,
      ]);
      return r ? toListener(r) : null;
    },
    async listListeners(tenantId, q) {
      return (
        await all(
          db,
          `SELECT * FROM ${t.listeners} WHERE tenant_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`,
          [tenantId, q.limit, q.offset],
        )
      ).map(toListener);
    },
    async updateListener(tenantId, id, patch) {
      // A field not given keeps its value (COALESCE would not tell "not given" from null for version).
      const row = await one(
        db,
        `UPDATE ${t.listeners}
            SET version = CASE WHEN $3 THEN $4 ELSE version END,
                compute_config = CASE WHEN $5 THEN $6::jsonb ELSE compute_config END,
                updated_at = $7
          WHERE id = $1 AND tenant_id = $2 RETURNING *`,
        [
          id,
          tenantId,
          patch.version !== undefined,
          text(patch.version ?? null),
          patch.compute_config !== undefined,
          jsonb(patch.compute_config ?? null),
          now(),
        ],
      );
      return row ? toListener(row) : null;
    },
    async deleteListener(tenantId, id) {
      const r = await db.query(`DELETE FROM ${t.listeners} WHERE id = $1 AND tenant_id = $2`, [id, tenantId]);
      return (r.rowCount ?? 0) > 0;
    },

    // uploads
    async createUpload(u) {
      const up: Upload = { ...u, state: "issued", created_at: now() };
      await db.query(
        `INSERT INTO ${t.uploads} (id, tenant_id, deployment_id, token_hash, path, state, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          up.id,
          up.tenant_id,
          up.deployment_id,
          up.token_hash,
          up.path,
          up.state,
          up.expires_at,
          up.created_at,
        ],
      );
      return up;
    },
    async claimUpload(tokenHash) {
      // One statement: of two PUTs at once, the second finds the row no longer `issued`.
      const r = await one(
        db,
        `UPDATE ${t.uploads} SET state = 'uploading'
          WHERE token_hash = $1 AND state = 'issued' AND expires_at > $2 RETURNING *`,
        [tokenHash, now()],
      );
      return r ? toUpload(r) : null;
    },
    async finishUpload(id, ok) {
      await db.query(`UPDATE ${t.uploads} SET state = $1 WHERE id = $2 AND state = 'uploading'`, [
        ok ? "done" : "issued",
        id,
      ]);
    },
    async findUpload(tenantId, path) {
      const r = await one(
        db,
        `SELECT * FROM ${t.uploads} WHERE tenant_id = $1 AND path = $2 AND state = 'done'`,
        [tenantId, path],
      );
      return r ? toUpload(r) : null;
    },
    async bindUpload(id, deploymentId, path) {
      await db.query(`UPDATE ${t.uploads} SET deployment_id = $1, path = $2 WHERE id = $3`, [
        deploymentId,
        path,
        id,
      ]);
    },

    // logs
    async appendLogs(lines: LogLine[]) {
      if (!lines.length) return;
      // A build or an Agent Server that prints its environment must not store the deployment's secrets.
      const secretsOf = new Map<string, Deployment["secrets"]>();
      for (const id of new Set(lines.map((l) => l.deployment_id))) {
        secretsOf.set(id, (await deploymentById(db, id))?.secrets ?? []);
      }
      const message = (l: LogLine) => text(redactSecrets(l.message, secretsOf.get(l.deployment_id) ?? []));
      // One statement (unnest of arrays): the lines keep their order in `seq`.
      await db.query(
        `INSERT INTO ${t.logs} (deployment_id, revision_id, kind, level, message, timestamp)
         SELECT deployment_id, revision_id, kind, level, message, timestamp FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::timestamptz[])
           WITH ORDINALITY AS l(deployment_id, revision_id, kind, level, message, timestamp, n)
         ORDER BY n`,
        [
          lines.map((l) => l.deployment_id),
          lines.map((l) => l.revision_id ?? null),
          lines.map((l) => l.kind),
          lines.map((l) => l.level),
          lines.map(message),
          lines.map((l) => l.timestamp),
        ],
      );
    },
    async readLogs(deploymentId, q) {
      const { values, p } = params();
      const where = [`deployment_id = ${p(deploymentId)}`, `kind = ${p(q.kind)}`];
      if (q.revision_id) where.push(`revision_id = ${p(q.revision_id)}`);
      if (q.level) where.push(`level = ${p(q.level)}`);
      if (q.query) where.push(`strpos(lower(message), lower(${p(q.query)})) > 0`);
      if (q.start_time) where.push(`timestamp >= ${p(q.start_time)}::timestamptz`);
      if (q.end_time) where.push(`timestamp <= ${p(q.end_time)}::timestamptz`);
      return (
        await all(
          db,
          `SELECT deployment_id, revision_id, kind, level, message, timestamp FROM ${t.logs}
            WHERE ${where.join(" AND ")}
            ORDER BY seq ${q.order === "desc" ? "DESC" : "ASC"} LIMIT ${p(q.limit)} OFFSET ${p(q.offset)}`,
          values,
        )
      ).map((r) => ({
        deployment_id: r.deployment_id,
        revision_id: r.revision_id,
        kind: r.kind,
        level: r.level,
        message: r.message,
        timestamp: iso(r.timestamp),
      }));
    },

    async exclusive(fn) {
      // A session lock on a client of its own; `fn` runs its statements on the pool meanwhile.
      const client = await pool.connect();
      try {
        await client.query("SELECT pg_advisory_lock($1, hashtext($2))", [EXCLUSIVE_LOCK, schema]);
        try {
          return await fn();
        } finally {
          await client.query("SELECT pg_advisory_unlock($1, hashtext($2))", [EXCLUSIVE_LOCK, schema]);
        }
      } finally {
        client.release();
      }
    },

    async close() {
      closing ??= pool.end();
      return closing;
    },
  };
  return store;
}
