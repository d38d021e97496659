// The control plane's store on SQLite: `<data-dir>/control-plane.db` (WAL), numbered migrations under a ledger.
import { randomUUID } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { sha256 } from "../domain/hash.js";
import { loadSecretBox, redactSecrets, type SecretBox } from "../domain/secrets-crypto.js";
import {
  isUniqueViolation,
  migrate,
  sealStoredSecrets,
  toApiKey,
  toDeployment as toDeploymentRow,
  toListener,
  toRevision,
  type Row,
} from "./sqlite-rows.js";
import {
  CpConflictError,
  type ApiKey,
  type CpStore,
  type Deployment,
  type LogLine,
  type Organization,
  type Revision,
  type Upload,
  type Workspace,
} from "../domain/types.js";

const now = () => new Date().toISOString();

export interface CpSqliteOptions {
  /** The key of deployments' secrets; default loadSecretBox (HANGAR_CP_SECRET_KEY, else `<dataDir>/secret.key`). */
  secretBox?: SecretBox;
  /** HANGAR_CP_SECRET_KEY's value, when no secretBox is given; default this process's setting. */
  secretKey?: string;
  /** Told when a key file is generated. */
  log?: (msg: string) => void;
}

/**
 * Opens (creating and migrating if needed) the control plane's SQLite store in `dataDir`. Deployments' secrets
 * are stored encrypted (secrets-crypto.ts); a store sealed with another key is refused (SecretKeyError).
 */
export function openCpSqliteStore(dataDir: string, opts: CpSqliteOptions = {}): CpStore {
  mkdirSync(dataDir, { recursive: true });
  const box = opts.secretBox ?? loadSecretBox({ secretKey: opts.secretKey, dataDir, log: opts.log });
  const db = new Database(join(dataDir, "control-plane.db"));
  try {
    db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.pragma("foreign_keys = ON");
    db.pragma("busy_timeout = 5000");
    // Deleted or rewritten content is overwritten, not left in free space (secrets of older versions).
    db.pragma("secure_delete = ON");
    migrate(db);
    sealStoredSecrets(db, box);
  } catch (e) {
    db.close();
    throw e;
  }
  const toDeployment = (r: Row) => toDeploymentRow(r, box);

  const one = (sql: string, ...args: unknown[]) => db.prepare(sql).get(...args) as Row | undefined;
  const all = (sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as Row[];
  const run = (sql: string, ...args: unknown[]) => db.prepare(sql).run(...args);

  const deploymentById = (id: string) => {
    const r = one("SELECT * FROM deployments WHERE id = ?", id);
    return r ? toDeployment(r) : null;
  };

  const insertRevision = (
    deploymentId: string,
    r: Omit<Revision, "created_at" | "updated_at" | "deployment_id">,
  ) => {
    const ts = now();
    run(
      `INSERT INTO revisions (id, deployment_id, status, source, source_revision_config, status_message, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      r.id,
      deploymentId,
      r.status,
      r.source,
      JSON.stringify(r.source_revision_config ?? {}),
      r.status_message ?? null,
      ts,
      ts,
    );
    return toRevision(one("SELECT * FROM revisions WHERE id = ?", r.id)!);
  };

  const store: CpStore = {
    // tenancy
    async createOrganization(name, plan) {
      const org: Organization = { id: randomUUID(), name, plan, created_at: now() };
      run(
        "INSERT INTO organizations (id, name, plan, created_at) VALUES (?, ?, ?, ?)",
        org.id,
        name,
        plan,
        org.created_at,
      );
      return org;
    },
    async getOrganization(id) {
      return (one("SELECT * FROM organizations WHERE id = ?", id) as Organization | undefined) ?? null;
    },
    async createWorkspace(organizationId, name) {
      const ws: Workspace = { id: randomUUID(), organization_id: organizationId, name, created_at: now() };
      run(
        "INSERT INTO workspaces (id, organization_id, name, created_at) VALUES (?, ?, ?, ?)",
        ws.id,
        organizationId,
        name,
        ws.created_at,
      );
      return ws;
    },
    async getWorkspace(id) {
      return (one("SELECT * FROM workspaces WHERE id = ?", id) as Workspace | undefined) ?? null;
    },
    async listWorkspaces(organizationId) {
      return all(
        "SELECT * FROM workspaces WHERE organization_id = ? ORDER BY created_at, id",
        organizationId,
      ) as Workspace[];
    },
    async createApiKey(key, organizationId, workspaceId) {
      const k: ApiKey = {
        id: randomUUID(),
        workspace_id: workspaceId,
        organization_id: organizationId,
        // Enough to recognise a key, never enough to reveal a short one.
        prefix: key.slice(0, Math.min(12, Math.floor(key.length / 4))),
        hash: sha256(key),
        created_at: now(),
      };
      try {
        run(
          "INSERT INTO api_keys (id, organization_id, workspace_id, prefix, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)",
          k.id,
          k.organization_id,
          k.workspace_id,
          k.prefix,
          k.hash,
          k.created_at,
        );
      } catch (e) {
        if (isUniqueViolation(e)) throw new CpConflictError("this API key already exists");
        throw e;
      }
      return k;
    },
    async findApiKey(key) {
      const r = one("SELECT * FROM api_keys WHERE hash = ?", sha256(key));
      return r ? toApiKey(r) : null;
    },
    async countOrganizations() {
      return (one("SELECT COUNT(*) AS n FROM organizations")!.n as number) ?? 0;
    },

    // deployments and revisions
    async createDeployment(d, first) {
      const ts = now();
      const tx = db.transaction(() => {
        run(
          `INSERT INTO deployments (id, tenant_id, name, source, source_config, source_revision_config, secrets,
             secret_references, status, deployment_type, listener_id, latest_revision_id, active_revision_id,
             created_at, updated_at, deleted_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
          d.id,
          d.tenant_id,
          d.name,
          d.source,
          JSON.stringify(d.source_config ?? {}),
          JSON.stringify(d.source_revision_config ?? {}),
          JSON.stringify(box.seal(d.secrets ?? [], d.id)),
          d.secret_references ? JSON.stringify(d.secret_references) : null,
          d.status,
          d.source_config?.deployment_type ?? null,
          d.source_config?.listener_id ?? null,
          first?.id ?? null,
          ts,
          ts,
          d.deleted_at ?? null,
        );
        if (first) insertRevision(d.id, first);
      });
      try {
        tx();
      } catch (e) {
        if (isUniqueViolation(e)) throw new CpConflictError(`A deployment named '${d.name}' already exists.`);
        throw e;
      }
      return deploymentById(d.id)!;
    },
    async getDeployment(tenantId, id) {
      const r = one(
        "SELECT * FROM deployments WHERE id = ? AND tenant_id = ? AND deleted_at IS NULL",
        id,
        tenantId,
      );
      return r ? toDeployment(r) : null;
    },
    async getDeploymentById(id) {
      return deploymentById(id);
    },
    async listDeployments(tenantId, q) {
      const where = ["tenant_id = ?", "deleted_at IS NULL"];
      const args: unknown[] = [tenantId];
      if (q.name !== undefined) {
        where.push("name = ?");
        args.push(q.name);
      }
      if (q.name_contains) {
        where.push("instr(lower(name), lower(?)) > 0");
        args.push(q.name_contains);
      }
      if (q.deployment_type) {
        where.push("deployment_type = ?");
        args.push(q.deployment_type);
      }
      if (q.status) {
        where.push("status = ?");
        args.push(q.status);
      }
      if (q.deployment_ids) {
        if (!q.deployment_ids.length) return [];
        where.push(`id IN (${q.deployment_ids.map(() => "?").join(", ")})`);
        args.push(...q.deployment_ids);
      }
      return all(
        `SELECT * FROM deployments WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ? OFFSET ?`,
        ...args,
        q.limit,
        q.offset,
      ).map(toDeployment);
    },
    async updateDeployment(id, patch) {
      const cur = deploymentById(id);
      if (!cur) throw new Error(`deployment ${id} does not exist`);
      const d: Deployment = { ...cur, ...patch };
      try {
        run(
          `UPDATE deployments SET name = ?, source = ?, source_config = ?, source_revision_config = ?, secrets = ?,
             secret_references = ?, status = ?, deployment_type = ?, listener_id = ?, latest_revision_id = ?,
             active_revision_id = ?, updated_at = ?, deleted_at = ?
           WHERE id = ?`,
          d.name,
          d.source,
          JSON.stringify(d.source_config ?? {}),
          JSON.stringify(d.source_revision_config ?? {}),
          JSON.stringify(box.seal(d.secrets ?? [], id)),
          d.secret_references ? JSON.stringify(d.secret_references) : null,
          d.status,
          d.source_config?.deployment_type ?? null,
          d.source_config?.listener_id ?? null,
          d.latest_revision_id,
          d.active_revision_id,
          patch.updated_at ?? now(),
          d.deleted_at ?? null,
          id,
        );
      } catch (e) {
        if (isUniqueViolation(e)) throw new CpConflictError(`A deployment named '${d.name}' already exists.`);
        throw e;
      }
      return deploymentById(id)!;
    },
    async addRevision(deploymentId, r) {
      return db.transaction(() => {
        const rev = insertRevision(deploymentId, r);
        run(
          "UPDATE deployments SET latest_revision_id = ?, source_revision_config = ?, updated_at = ? WHERE id = ?",
          rev.id,
          JSON.stringify(rev.source_revision_config),
          rev.created_at,
          deploymentId,
        );
        return rev;
      })();
    },
    async getRevision(deploymentId, revisionId) {
      const r = one("SELECT * FROM revisions WHERE id = ? AND deployment_id = ?", revisionId, deploymentId);
      return r ? toRevision(r) : null;
    },
    async listRevisions(deploymentId, q) {
      const where = ["deployment_id = ?"];
      const args: unknown[] = [deploymentId];
      if (q.status) {
        if (!q.status.length) return [];
        where.push(`status IN (${q.status.map(() => "?").join(", ")})`);
        args.push(...q.status);
      }
      return all(
        `SELECT * FROM revisions WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ? OFFSET ?`,
        ...args,
        q.limit,
        q.offset,
      ).map(toRevision);
    },
    async setRevisionStatus(revisionId, status, message) {
      // A failure's reason may quote a command's output: the deployment's secrets are masked in it.
      const owner = message ? one("SELECT deployment_id FROM revisions WHERE id = ?", revisionId) : undefined;
      const secrets = owner ? (deploymentById(owner.deployment_id)?.secrets ?? []) : [];
      run(
        "UPDATE revisions SET status = ?, status_message = ?, updated_at = ? WHERE id = ?",
        status,
        message ? redactSecrets(message, secrets) : null,
        now(),
        revisionId,
      );
    },
    async skipPendingRevisions(deploymentId, exceptRevisionId) {
      return db.transaction(() => {
        const ids = all(
          `SELECT id FROM revisions WHERE deployment_id = ? AND id <> ?
             AND status IN ('CREATING', 'QUEUED', 'AWAITING_BUILD')`,
          deploymentId,
          exceptRevisionId,
        ).map((r) => r.id as string);
        const ts = now();
        for (const id of ids) {
          run(
            "UPDATE revisions SET status = 'SKIPPED', status_message = ?, updated_at = ? WHERE id = ?",
            `Superseded by revision ${exceptRevisionId}`,
            ts,
            id,
          );
        }
        return ids;
      })();
    },
    async deploymentsFor(listenerId) {
      const rows =
        listenerId === null
          ? all("SELECT * FROM deployments WHERE listener_id IS NULL ORDER BY seq")
          : all("SELECT * FROM deployments WHERE listener_id = ? ORDER BY seq", listenerId);
      return rows.map(toDeployment);
    },
    async purgeDeployment(id) {
      db.transaction(() => {
        run("DELETE FROM logs WHERE deployment_id = ?", id);
        run("DELETE FROM revisions WHERE deployment_id = ?", id);
        run("DELETE FROM uploads WHERE deployment_id = ?", id);
        run("DELETE FROM deployments WHERE id = ?", id);
      })();
      rmSync(join(dataDir, "uploads", id), { recursive: true, force: true });
    },

    // listeners
    async createListener(l) {
      const ts = now();
      try {
        run(
          `INSERT INTO listeners (id, tenant_id, version, compute_type, compute_id, compute_config, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          l.id,
          l.tenant_id,
          l.version ?? null,
          l.compute_type,
          l.compute_id,
          JSON.stringify(l.compute_config ?? {}),
          ts,
          ts,
        );
      } catch (e) {
        if (isUniqueViolation(e)) return "conflict";
        throw e;
      }
      return toListener(one("SELECT * FROM listeners WHERE id = ?", l.id)!);
    },
    async getListener(tenantId, id) {
      const r = one("SELECT * FROM listeners WHERE id = ? AND tenant_id = ?", id, tenantId);
      return r ? toListener(r) : null;
    },
    async listListeners(tenantId, q) {
      return all(
        "SELECT * FROM listeners WHERE tenant_id = ? ORDER BY seq DESC LIMIT ? OFFSET ?",
        tenantId,
        q.limit,
        q.offset,
      ).map(toListener);
    },
    async updateListener(tenantId, id, patch) {
      const r = one("SELECT * FROM listeners WHERE id = ? AND tenant_id = ?", id, tenantId);
      if (!r) return null;
      const cur = toListener(r);
      run(
        "UPDATE listeners SET version = ?, compute_config = ?, updated_at = ? WHERE id = ?",
        patch.version !== undefined ? patch.version : cur.version,
        JSON.stringify(patch.compute_config !== undefined ? patch.compute_config : cur.compute_config),
        now(),
        id,
      );
      return toListener(one("SELECT * FROM listeners WHERE id = ?", id)!);
    },
    async deleteListener(tenantId, id) {
      return run("DELETE FROM listeners WHERE id = ? AND tenant_id = ?", id, tenantId).changes > 0;
    },

    // uploads
    async createUpload(u) {
      const up: Upload = { ...u, state: "issued", created_at: now() };
      run(
        `INSERT INTO uploads (id, tenant_id, deployment_id, token_hash, path, state, expires_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        up.id,
        up.tenant_id,
        up.deployment_id,
        up.token_hash,
        up.path,
        up.state,
        up.expires_at,
        up.created_at,
      );
      return up;
    },
    async claimUpload(tokenHash) {
      const r = one(
        `UPDATE uploads SET state = 'uploading' WHERE token_hash = ? AND state = 'issued' AND expires_at > ?
         RETURNING *`,
        tokenHash,
        now(),
      );
      return (r as Upload | undefined) ?? null;
    },
    async finishUpload(id, ok) {
      run("UPDATE uploads SET state = ? WHERE id = ? AND state = 'uploading'", ok ? "done" : "issued", id);
    },
    async findUpload(tenantId, path) {
      const r = one(
        "SELECT * FROM uploads WHERE tenant_id = ? AND path = ? AND state = 'done'",
        tenantId,
        path,
      );
      return (r as Upload | undefined) ?? null;
    },
    async bindUpload(id, deploymentId, path) {
      run("UPDATE uploads SET deployment_id = ?, path = ? WHERE id = ?", deploymentId, path, id);
    },

    // logs
    async appendLogs(lines: LogLine[]) {
      if (!lines.length) return;
      const stmt = db.prepare(
        "INSERT INTO logs (deployment_id, revision_id, kind, level, message, timestamp) VALUES (?, ?, ?, ?, ?, ?)",
      );
      // A build or an Agent Server that prints its environment must not store the deployment's secrets.
      const secretsOf = new Map<string, Deployment["secrets"]>();
      const redact = (l: LogLine) => {
        if (!secretsOf.has(l.deployment_id)) {
          secretsOf.set(l.deployment_id, deploymentById(l.deployment_id)?.secrets ?? []);
        }
        return redactSecrets(l.message, secretsOf.get(l.deployment_id)!);
      };
      db.transaction(() => {
        for (const l of lines) {
          stmt.run(l.deployment_id, l.revision_id ?? null, l.kind, l.level, redact(l), l.timestamp);
        }
      })();
    },
    async readLogs(deploymentId, q) {
      const where = ["deployment_id = ?", "kind = ?"];
      const args: unknown[] = [deploymentId, q.kind];
      if (q.revision_id) {
        where.push("revision_id = ?");
        args.push(q.revision_id);
      }
      if (q.level) {
        where.push("level = ?");
        args.push(q.level);
      }
      if (q.query) {
        where.push("instr(lower(message), lower(?)) > 0");
        args.push(q.query);
      }
      if (q.start_time) {
        where.push("timestamp >= ?");
        args.push(q.start_time);
      }
      if (q.end_time) {
        where.push("timestamp <= ?");
        args.push(q.end_time);
      }
      return all(
        `SELECT * FROM logs WHERE ${where.join(" AND ")} ORDER BY seq ${q.order === "desc" ? "DESC" : "ASC"}
         LIMIT ? OFFSET ?`,
        ...args,
        q.limit,
        q.offset,
      ).map((r) => ({
        deployment_id: r.deployment_id,
        revision_id: r.revision_id,
        kind: r.kind,
        level: r.level,
        message: r.message,
        timestamp: r.timestamp,
      }));
    },

    async close() {
      if (db.open) db.close();
    },
  };
  return store;
}
