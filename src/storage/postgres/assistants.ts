// PostgreSQL assistant store: assistants with an append-only version table.
import type {
  Assistant,
  AssistantInput,
  AssistantPatch,
  AssistantSearch,
  AssistantStore,
  Json,
} from "../types.js";
import { isUuid, jsonb, requireUuid, type Db, type Queryable } from "./db.js";
import { containment, now, orderBy, toAssistant } from "./rows.js";

const SORTABLE = {
  assistant_id: {},
  graph_id: { text: true },
  name: { text: true },
  created_at: {},
  updated_at: {},
};

export class PostgresAssistants implements AssistantStore {
  constructor(private db: Db) {}

  private get t() {
    return this.db.t;
  }

  private async insertVersion(q: Queryable, a: Assistant): Promise<void> {
    await q.query(
      `INSERT INTO ${this.t.assistant_versions}
         (assistant_id, version, graph_id, config, context, metadata, name, description, created_at)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6::jsonb, $7, $8, $9)`,
      [
        a.assistant_id,
        a.version,
        a.graph_id,
        jsonb(a.config),
        jsonb(a.context),
        jsonb(a.metadata),
        a.name,
        a.description,
        a.updated_at,
      ],
    );
  }

  /** Makes `a` the current row (the assistant exists). */
  private async write(q: Queryable, a: Assistant): Promise<void> {
    await q.query(
      `UPDATE ${this.t.assistants} SET graph_id = $2, config = $3::jsonb, context = $4::jsonb,
         metadata = $5::jsonb, name = $6, description = $7, version = $8, updated_at = $9
       WHERE assistant_id = $1`,
      [
        a.assistant_id,
        a.graph_id,
        jsonb(a.config),
        jsonb(a.context),
        jsonb(a.metadata),
        a.name,
        a.description,
        a.version,
        a.updated_at,
      ],
    );
  }

  async create(input: AssistantInput): Promise<Assistant | null> {
    requireUuid("assistant_id", input.assistant_id);
    return this.db.tx(async (q) => {
      const ts = now();
      const a: Assistant = { ...input, version: 1, created_at: ts, updated_at: ts };
      const res = await q.query(
        `INSERT INTO ${this.t.assistants}
           (assistant_id, graph_id, config, context, metadata, name, description, version, created_at, updated_at)
         VALUES ($1, $2, $3::jsonb, $4::jsonb, $5::jsonb, $6, $7, 1, $8, $8)
         ON CONFLICT (assistant_id) DO NOTHING`,
        [
          a.assistant_id,
          a.graph_id,
          jsonb(a.config),
          jsonb(a.context),
          jsonb(a.metadata),
          a.name,
          a.description,
          ts,
        ],
      );
      if (res.rowCount === 0) return null;
      await this.insertVersion(q, a);
      return a;
    });
  }

  async get(id: string): Promise<Assistant | null> {
    if (!isUuid(id)) return null;
    const [r] = await this.db.rows(`SELECT * FROM ${this.t.assistants} WHERE assistant_id = $1`, [id]);
    return r ? toAssistant(r) : null;
  }

  async patch(id: string, patch: AssistantPatch): Promise<Assistant | null> {
    if (!isUuid(id)) return null;
    return this.db.tx(async (q) => {
      // The row lock orders concurrent patches, so each gets its own version number.
      const { rows } = await q.query(
        `SELECT * FROM ${this.t.assistants} WHERE assistant_id = $1 FOR UPDATE`,
        [id],
      );
      if (!rows.length) return null;
      const cur = toAssistant(rows[0]);
      const max = await q.query<{ v: number | null }>(
        `SELECT MAX(version) AS v FROM ${this.t.assistant_versions} WHERE assistant_id = $1`,
        [id],
      );
      const next: Assistant = {
        ...cur,
        graph_id: patch.graph_id ?? cur.graph_id,
        config: patch.config ?? cur.config,
        context: patch.context ?? cur.context,
        metadata: patch.metadata ? { ...cur.metadata, ...patch.metadata } : cur.metadata,
        name: patch.name ?? cur.name,
        description: patch.description !== undefined ? patch.description : cur.description,
        version: (max.rows[0]?.v ?? cur.version) + 1,
        updated_at: now(),
      };
      await this.write(q, next);
      await this.insertVersion(q, next);
      return next;
    });
  }

  async delete(id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const res = await this.db.query(`DELETE FROM ${this.t.assistants} WHERE assistant_id = $1`, [id]);
    return (res.rowCount ?? 0) > 0;
  }

  private where(q: Omit<AssistantSearch, "limit" | "offset">, params: unknown[]): string {
    const conds: string[] = [];
    if (q.graph_id) {
      params.push(q.graph_id);
      conds.push(`graph_id = $${params.length}`);
    }
    if (q.name) {
      // SQLite's LIKE ignores the case of ASCII letters.
      params.push(`%${q.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
      conds.push(`name ILIKE $${params.length} ESCAPE '\\'`);
    }
    conds.push(...containment("metadata", q.metadata, params));
    conds.push(...containment("metadata", q.authMetadata, params));
    return conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  }

  async search(q: AssistantSearch): Promise<Assistant[]> {
    const params: unknown[] = [];
    const where = this.where(q, params);
    params.push(q.limit, q.offset);
    const rows = await this.db.rows(
      `SELECT * FROM ${this.t.assistants} ${where} ${orderBy(SORTABLE, q.sort_by, q.sort_order, "created_at")}
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toAssistant);
  }

  async count(q: Omit<AssistantSearch, "limit" | "offset">): Promise<number> {
    const params: unknown[] = [];
    const [r] = await this.db.rows<{ n: number }>(
      `SELECT COUNT(*)::int AS n FROM ${this.t.assistants} ${this.where(q, params)}`,
      params,
    );
    return r.n;
  }

  async versions(id: string, q: { metadata?: Json; limit: number; offset: number }): Promise<Assistant[]> {
    if (!isUuid(id)) return [];
    const params: unknown[] = [id];
    const conds = ["assistant_id = $1", ...containment("metadata", q.metadata, params)];
    params.push(q.limit, q.offset);
    const rows = await this.db.rows(
      `SELECT *, created_at AS updated_at FROM ${this.t.assistant_versions} WHERE ${conds.join(" AND ")}
       ORDER BY version DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return rows.map(toAssistant);
  }

  async setLatest(id: string, version: number): Promise<Assistant | null> {
    if (!isUuid(id) || !Number.isSafeInteger(version) || Math.abs(version) > 2 ** 31 - 1) return null;
    return this.db.tx(async (q) => {
      const cur = await q.query(
        `SELECT created_at FROM ${this.t.assistants} WHERE assistant_id = $1 FOR UPDATE`,
        [id],
      );
      const v = await q.query(
        `SELECT * FROM ${this.t.assistant_versions} WHERE assistant_id = $1 AND version = $2`,
        [id, version],
      );
      if (!cur.rows.length || !v.rows.length) return null;
      const a = toAssistant({ ...v.rows[0], created_at: cur.rows[0].created_at, updated_at: now() });
      await this.write(q, a);
      return a;
    });
  }
}
