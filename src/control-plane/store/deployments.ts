// The control plane store's deployments and revisions, written once for both databases (see queries.ts).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { redactSecrets } from "../domain/secrets-crypto.js";
import { CpConflictError, type CpStore, type Deployment, type Revision } from "../domain/types.js";
import { marks, now, page, type StoreContext } from "./rows.js";
import { where, type SqlExec } from "./sql.js";

/** Revision statuses of revisions that have not started (skipped when a newer one supersedes them). */
const NOT_STARTED = "('CREATING', 'QUEUED', 'AWAITING_BUILD')";

/** The columns a deployment is written with (insert and update), in this order. */
const DEPLOYMENT_COLUMNS = [
  "name",
  "source",
  "source_config",
  "source_revision_config",
  "secrets",
  "secret_references",
  "status",
  "deployment_type",
  "listener_id",
  "latest_revision_id",
  "active_revision_id",
];

type DeploymentQueries = Pick<
  CpStore,
  | "createDeployment"
  | "getDeployment"
  | "getDeploymentById"
  | "listDeployments"
  | "updateDeployment"
  | "addRevision"
  | "getRevision"
  | "listRevisions"
  | "setRevisionStatus"
  | "skipPendingRevisions"
  | "deploymentsFor"
  | "deploymentsOnListeners"
  | "setRevisionImage"
  | "purgeDeployment"
>;

export function deploymentQueries(c: StoreContext): DeploymentQueries {
  const { db, t, to, box, deploymentById } = c;
  const insertRevision = async (
    q: SqlExec,
    deploymentId: string,
    r: Omit<Revision, "created_at" | "updated_at" | "deployment_id">,
  ) => {
    const ts = now();
    const row = await q.one(
      `INSERT INTO ${t.revisions}
         (id, deployment_id, status, source, source_revision_config, status_message, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
      [
        r.id,
        deploymentId,
        r.status,
        r.source,
        db.toJson(r.source_revision_config ?? {}),
        db.text(r.status_message ?? null),
        ts,
        ts,
      ],
    );
    return to.revision(row!);
  };

  const deploymentValues = (d: Deployment) => [
    db.text(d.name),
    d.source,
    db.toJson(d.source_config ?? {}),
    db.toJson(d.source_revision_config ?? {}),
    db.toJson(box.seal(d.secrets ?? [], d.id)),
    d.secret_references ? db.toJson(d.secret_references) : null,
    d.status,
    d.source_config?.deployment_type ?? null,
    d.source_config?.listener_id ?? null,
    d.latest_revision_id,
    d.active_revision_id,
  ];

  const nameConflict = (name: string) => new CpConflictError(`A deployment named '${name}' already exists.`);

  return {
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
          await q.run(
            `INSERT INTO ${t.deployments}
               (${DEPLOYMENT_COLUMNS.join(", ")}, id, tenant_id, created_at, updated_at, deleted_at)
             VALUES (${marks(DEPLOYMENT_COLUMNS.length + 5)})`,
            [...deploymentValues(rec), d.id, d.tenant_id, ts, ts, d.deleted_at ?? null],
          );
          if (first) await insertRevision(q, d.id, first);
        });
      } catch (e) {
        if (db.isUniqueViolation(e)) throw nameConflict(d.name);
        throw e;
      }
      return (await deploymentById(db, d.id))!;
    },
    async getDeployment(tenantId, id) {
      const r = await db.one(
        `SELECT * FROM ${t.deployments} WHERE id = ? AND tenant_id = ? AND deleted_at IS NULL`,
        [id, tenantId],
      );
      return r ? to.deployment(r) : null;
    },
    async getDeploymentById(id) {
      return deploymentById(db, id);
    },
    async listDeployments(tenantId, q) {
      const w = where("tenant_id = ?", tenantId).add("deleted_at IS NULL");
      if (q.name !== undefined) w.add("name = ?", q.name);
      if (q.name_contains) w.add(db.contains("name"), q.name_contains);
      if (q.deployment_type) w.add("deployment_type = ?", q.deployment_type);
      if (q.status) w.add("status = ?", q.status);
      if (q.deployment_ids) {
        if (!q.deployment_ids.length) return [];
        w.add(`id IN (${marks(q.deployment_ids.length)})`, ...q.deployment_ids);
      }
      const p = page(q);
      const rows = await db.all(`SELECT * FROM ${t.deployments} WHERE ${w.sql} ORDER BY seq DESC ${p.sql}`, [
        ...w.args,
        ...p.args,
      ]);
      return rows.map(to.deployment);
    },
    async updateDeployment(id, patch) {
      let name = patch.name ?? "";
      try {
        return await db.tx(async (q) => {
          const r = await q.one(`SELECT * FROM ${t.deployments} WHERE id = ?${db.forUpdate}`, [id]);
          if (!r) throw new Error(`deployment ${id} does not exist`);
          const d: Deployment = { ...to.deployment(r), ...patch };
          name = d.name;
          const row = await q.one(
            `UPDATE ${t.deployments} SET ${DEPLOYMENT_COLUMNS.map((c) => `${c} = ?`).join(", ")},
               updated_at = ?, deleted_at = ?
             WHERE id = ? RETURNING *`,
            [...deploymentValues(d), patch.updated_at ?? now(), d.deleted_at ?? null, id],
          );
          return to.deployment(row!);
        });
      } catch (e) {
        if (db.isUniqueViolation(e)) throw nameConflict(name);
        throw e;
      }
    },
    async addRevision(deploymentId, r) {
      return db.tx(async (q) => {
        const rev = await insertRevision(q, deploymentId, r);
        await q.run(
          `UPDATE ${t.deployments} SET latest_revision_id = ?, source_revision_config = ?, updated_at = ?
           WHERE id = ?`,
          [rev.id, db.toJson(rev.source_revision_config), rev.created_at, deploymentId],
        );
        return rev;
      });
    },
    async getRevision(deploymentId, revisionId) {
      const r = await db.one(`SELECT * FROM ${t.revisions} WHERE id = ? AND deployment_id = ?`, [
        revisionId,
        deploymentId,
      ]);
      return r ? to.revision(r) : null;
    },
    async listRevisions(deploymentId, q) {
      const w = where("deployment_id = ?", deploymentId);
      if (q.status) {
        if (!q.status.length) return [];
        w.add(`status IN (${marks(q.status.length)})`, ...q.status);
      }
      const p = page(q);
      const rows = await db.all(`SELECT * FROM ${t.revisions} WHERE ${w.sql} ORDER BY seq DESC ${p.sql}`, [
        ...w.args,
        ...p.args,
      ]);
      return rows.map(to.revision);
    },
    async setRevisionStatus(revisionId, status, message) {
      // A failure's reason may quote a command's output: the deployment's secrets are masked in it.
      let masked = message ?? null;
      if (masked) {
        const owner = await db.one(`SELECT deployment_id FROM ${t.revisions} WHERE id = ?`, [revisionId]);
        const dep = owner ? await deploymentById(db, owner.deployment_id as string) : null;
        masked = redactSecrets(masked, dep?.secrets ?? []);
      }
      await db.run(`UPDATE ${t.revisions} SET status = ?, status_message = ?, updated_at = ? WHERE id = ?`, [
        status,
        db.text(masked),
        now(),
        revisionId,
      ]);
    },
    async skipPendingRevisions(deploymentId, exceptRevisionId) {
      // One statement: a revision that starts meanwhile is either skipped or not, never half.
      const rows = await db.all(
        `UPDATE ${t.revisions} SET status = 'SKIPPED', status_message = ?, updated_at = ?
          WHERE deployment_id = ? AND id <> ? AND status IN ${NOT_STARTED}
         RETURNING id, seq`,
        [`Superseded by revision ${exceptRevisionId}`, now(), deploymentId, exceptRevisionId],
      );
      return rows.sort((a, b) => Number(a.seq) - Number(b.seq)).map((r) => r.id as string);
    },
    async deploymentsFor(listenerId) {
      const rows =
        listenerId === null
          ? await db.all(`SELECT * FROM ${t.deployments} WHERE listener_id IS NULL ORDER BY seq`)
          : await db.all(`SELECT * FROM ${t.deployments} WHERE listener_id = ? ORDER BY seq`, [listenerId]);
      return rows.map(to.deployment);
    },
    async deploymentsOnListeners() {
      const rows = await db.all(`SELECT * FROM ${t.deployments} WHERE listener_id IS NOT NULL ORDER BY seq`);
      return rows.map(to.deployment);
    },
    async setRevisionImage(revisionId, imageUri) {
      await db.tx(async (q) => {
        const row = await q.one(`SELECT * FROM ${t.revisions} WHERE id = ?`, [revisionId]);
        if (!row) return;
        const rev = to.revision(row);
        const config = db.toJson({ ...rev.source_revision_config, image_uri: imageUri });
        const ts = now();
        await q.run(`UPDATE ${t.revisions} SET source_revision_config = ?, updated_at = ? WHERE id = ?`, [
          config,
          ts,
          revisionId,
        ]);
        // The deployment's source_revision_config is its latest revision's.
        await q.run(
          `UPDATE ${t.deployments} SET source_revision_config = ? WHERE id = ? AND latest_revision_id = ?`,
          [config, rev.deployment_id, revisionId],
        );
      });
    },
    async purgeDeployment(id) {
      await db.tx(async (q) => {
        await q.run(`DELETE FROM ${t.logs} WHERE deployment_id = ?`, [id]);
        await q.run(`DELETE FROM ${t.revisions} WHERE deployment_id = ?`, [id]);
        await q.run(`DELETE FROM ${t.uploads} WHERE deployment_id = ?`, [id]);
        await q.run(`DELETE FROM ${t.deployments} WHERE id = ?`, [id]);
      });
      if (c.dataDir) rmSync(join(c.dataDir, "uploads", id), { recursive: true, force: true });
    },
  };
}
