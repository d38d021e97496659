// The control plane's store (`CpStore`), written once over a `SqlDb` (sql.ts): the same statements on SQLite
// (sqlite.ts) and PostgreSQL (postgres.ts), which differ only in what the dialect says. Deployments and
// revisions are in deployments.ts; tenancy, listeners, uploads and logs here.
import { randomUUID } from "node:crypto";
import { sha256 } from "../domain/hash.js";
import { redactSecrets, type SecretBox } from "../domain/secrets-crypto.js";
import {
  CpConflictError,
  type ApiKey,
  type CpStore,
  type Deployment,
  type LogLine,
  type Organization,
  type Upload,
  type Workspace,
} from "../domain/types.js";
import { deploymentQueries } from "./deployments.js";
import { now, page, storeContext } from "./rows.js";
import { assignments, where, type SqlDb } from "./sql.js";

export interface CpStoreOptions {
  /** The key of deployments' secrets (stored sealed). */
  box: SecretBox;
  /** The control plane's data directory: purging a deployment removes its uploads there. None: files stay. */
  dataDir?: string;
  close(): Promise<void>;
  exclusive?: CpStore["exclusive"];
}

/** The control plane's store on `db`. */
export function cpStoreOn(db: SqlDb, opts: CpStoreOptions): CpStore {
  const c = storeContext(db, opts.box, opts.dataDir);
  const { t, to, deploymentById } = c;

  return {
    // tenancy
    async createOrganization(name, plan) {
      const org: Organization = { id: randomUUID(), name, plan, created_at: now() };
      await db.run(`INSERT INTO ${t.organizations} (id, name, plan, created_at) VALUES (?, ?, ?, ?)`, [
        org.id,
        db.text(name),
        plan,
        org.created_at,
      ]);
      return org;
    },
    async getOrganization(id) {
      const r = await db.one(`SELECT * FROM ${t.organizations} WHERE id = ?`, [id]);
      return r ? to.organization(r) : null;
    },
    async createWorkspace(organizationId, name) {
      const ws: Workspace = { id: randomUUID(), organization_id: organizationId, name, created_at: now() };
      await db.run(
        `INSERT INTO ${t.workspaces} (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)`,
        [ws.id, organizationId, db.text(name), ws.created_at],
      );
      return ws;
    },
    async getWorkspace(id) {
      const r = await db.one(`SELECT * FROM ${t.workspaces} WHERE id = ?`, [id]);
      return r ? to.workspace(r) : null;
    },
    async listWorkspaces(organizationId) {
      const rows = await db.all(
        `SELECT * FROM ${t.workspaces} WHERE organization_id = ? ORDER BY created_at, id`,
        [organizationId],
      );
      return rows.map(to.workspace);
    },
    async createApiKey(key, organizationId, workspaceId) {
      const k: ApiKey = {
        id: randomUUID(),
        workspace_id: workspaceId,
        organization_id: organizationId,
        // Enough to recognise a key, never enough to reveal a short one.
        prefix: db.text(key.slice(0, Math.min(12, Math.floor(key.length / 4)))),
        hash: sha256(key),
        created_at: now(),
      };
      try {
        await db.run(
          `INSERT INTO ${t.api_keys} (id, organization_id, workspace_id, prefix, hash, created_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
          [k.id, k.organization_id, k.workspace_id, k.prefix, k.hash, k.created_at],
        );
      } catch (e) {
        if (db.isUniqueViolation(e)) throw new CpConflictError("this API key already exists");
        throw e;
      }
      return k;
    },
    async findApiKey(key) {
      const r = await db.one(`SELECT * FROM ${t.api_keys} WHERE hash = ?`, [sha256(key)]);
      return r ? to.apiKey(r) : null;
    },
    async countOrganizations() {
      const r = await db.one(`SELECT CAST(COUNT(*) AS INTEGER) AS n FROM ${t.organizations}`);
      return (r?.n as number) ?? 0;
    },

    ...deploymentQueries(c),

    // listeners
    async createListener(l) {
      const ts = now();
      try {
        const row = await db.one(
          `INSERT INTO ${t.listeners}
             (id, tenant_id, version, compute_type, compute_id, compute_config, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          [
            l.id,
            l.tenant_id,
            db.text(l.version ?? null),
            l.compute_type,
            db.text(l.compute_id),
            db.toJson(l.compute_config ?? {}),
            ts,
            ts,
          ],
        );
        return to.listener(row!);
      } catch (e) {
        if (db.isUniqueViolation(e)) return "conflict";
        throw e;
      }
    },
    async getListener(tenantId, id) {
      const r = await db.one(`SELECT * FROM ${t.listeners} WHERE id = ? AND tenant_id = ?`, [id, tenantId]);
      return r ? to.listener(r) : null;
    },
    async listListeners(tenantId, q) {
      const p = page(q);
      const rows = await db.all(
        `SELECT * FROM ${t.listeners} WHERE tenant_id = ? ORDER BY seq DESC ${p.sql}`,
        [tenantId, ...p.args],
      );
      return rows.map(to.listener);
    },
    async updateListener(tenantId, id, patch) {
      // Only the fields given change (a null version is a value, not "keep").
      const set = assignments();
      if (patch.version !== undefined) set.add("version = ?", db.text(patch.version));
      if (patch.compute_config !== undefined) set.add("compute_config = ?", db.toJson(patch.compute_config));
      set.add("updated_at = ?", now());
      const row = await db.one(
        `UPDATE ${t.listeners} SET ${set.sql} WHERE id = ? AND tenant_id = ? RETURNING *`,
        [...set.args, id, tenantId],
      );
      return row ? to.listener(row) : null;
    },
    async deleteListener(tenantId, id) {
      return (await db.run(`DELETE FROM ${t.listeners} WHERE id = ? AND tenant_id = ?`, [id, tenantId])) > 0;
    },

    // uploads
    async createUpload(u) {
      const up: Upload = { ...u, state: "issued", created_at: now() };
      await db.run(
        `INSERT INTO ${t.uploads} (id, tenant_id, deployment_id, token_hash, path, state, expires_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
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
      const r = await db.one(
        `UPDATE ${t.uploads} SET state = 'uploading'
          WHERE token_hash = ? AND state = 'issued' AND expires_at > ? RETURNING *`,
        [tokenHash, now()],
      );
      return r ? to.upload(r) : null;
    },
    async finishUpload(id, ok) {
      await db.run(`UPDATE ${t.uploads} SET state = ? WHERE id = ? AND state = 'uploading'`, [
        ok ? "done" : "issued",
        id,
      ]);
    },
    async findUpload(tenantId, path) {
      const r = await db.one(
        `SELECT * FROM ${t.uploads} WHERE tenant_id = ? AND path = ? AND state = 'done'`,
        [tenantId, path],
      );
      return r ? to.upload(r) : null;
    },
    async bindUpload(id, deploymentId, path) {
      await db.run(`UPDATE ${t.uploads} SET deployment_id = ?, path = ? WHERE id = ?`, [
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
      await db.insertLogs(
        lines.map((l) => ({
          ...l,
          revision_id: l.revision_id ?? null,
          message: db.text(redactSecrets(l.message, secretsOf.get(l.deployment_id) ?? [])),
        })),
      );
    },
    async readLogs(deploymentId, q) {
      const w = where("deployment_id = ?", deploymentId).add("kind = ?", q.kind);
      if (q.revision_id) w.add("revision_id = ?", q.revision_id);
      if (q.level) w.add("level = ?", q.level);
      if (q.query) w.add(db.contains("message"), q.query);
      if (q.start_time) w.add("timestamp >= ?", q.start_time);
      if (q.end_time) w.add("timestamp <= ?", q.end_time);
      const p = page(q);
      const rows = await db.all(
        `SELECT deployment_id, revision_id, kind, level, message, timestamp FROM ${t.logs} WHERE ${w.sql}
          ORDER BY seq ${q.order === "desc" ? "DESC" : "ASC"} ${p.sql}`,
        [...w.args, ...p.args],
      );
      return rows.map(to.logLine);
    },

    ...(opts.exclusive ? { exclusive: opts.exclusive } : {}),
    close: opts.close,
  };
}
