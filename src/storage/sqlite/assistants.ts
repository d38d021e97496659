// SQLite assistant store: assistants with an append-only version table.
import type Database from "better-sqlite3";
import type {
  Assistant,
  AssistantInput,
  AssistantPatch,
  AssistantSearch,
  AssistantStore,
  Json,
} from "../types.js";
import { containmentSql } from "./json-filter.js";
import { now, orderBy, statementCache, toAssistant } from "./rows.js";

const SORTABLE = ["assistant_id", "graph_id", "name", "created_at", "updated_at"] as const;

export class SqliteAssistants implements AssistantStore {
  private stmt: ReturnType<typeof statementCache>;

  constructor(
    private db: Database.Database,
    private begin: () => void,
  ) {
    this.stmt = statementCache(db);
  }

  private insertVersion(a: Assistant): void {
    this.stmt(
      `INSERT INTO assistant_versions (assistant_id, version, graph_id, config, context, metadata, name, description, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      a.assistant_id,
      a.version,
      a.graph_id,
      JSON.stringify(a.config),
      JSON.stringify(a.context),
      JSON.stringify(a.metadata),
      a.name,
      a.description,
      a.updated_at,
    );
  }

  private write(a: Assistant): void {
    this.stmt(
      `INSERT INTO assistants (assistant_id, graph_id, config, context, metadata, name, description, version, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (assistant_id) DO UPDATE SET graph_id = excluded.graph_id, config = excluded.config,
           context = excluded.context, metadata = excluded.metadata, name = excluded.name,
           description = excluded.description, version = excluded.version, updated_at = excluded.updated_at`,
    ).run(
      a.assistant_id,
      a.graph_id,
      JSON.stringify(a.config),
      JSON.stringify(a.context),
      JSON.stringify(a.metadata),
      a.name,
      a.description,
      a.version,
      a.created_at,
      a.updated_at,
    );
  }

  async create(input: AssistantInput): Promise<Assistant | null> {
    this.begin();
    return this.db.transaction(() => {
      if (this.stmt("SELECT 1 FROM assistants WHERE assistant_id = ?").get(input.assistant_id)) return null;
      const ts = now();
      const a: Assistant = { ...input, version: 1, created_at: ts, updated_at: ts };
      this.write(a);
      this.insertVersion(a);
      return a;
    })();
  }

  async get(id: string): Promise<Assistant | null> {
    const r = this.stmt("SELECT * FROM assistants WHERE assistant_id = ?").get(id);
    return r ? toAssistant(r) : null;
  }

  async patch(id: string, patch: AssistantPatch): Promise<Assistant | null> {
    this.begin();
    return this.db.transaction(() => {
      const r = this.stmt("SELECT * FROM assistants WHERE assistant_id = ?").get(id);
      if (!r) return null;
      const cur = toAssistant(r);
      const max = this.stmt("SELECT MAX(version) AS v FROM assistant_versions WHERE assistant_id = ?").get(
        id,
      ) as { v: number | null };
      const next: Assistant = {
        ...cur,
        graph_id: patch.graph_id ?? cur.graph_id,
        config: patch.config ?? cur.config,
        context: patch.context ?? cur.context,
        metadata: patch.metadata ? { ...cur.metadata, ...patch.metadata } : cur.metadata,
        name: patch.name ?? cur.name,
        description: patch.description !== undefined ? patch.description : cur.description,
        version: (max.v ?? cur.version) + 1,
        updated_at: now(),
      };
      this.write(next);
      this.insertVersion(next);
      return next;
    })();
  }

  async delete(id: string): Promise<boolean> {
    this.begin();
    return this.stmt("DELETE FROM assistants WHERE assistant_id = ?").run(id).changes > 0;
  }

  private where(q: Omit<AssistantSearch, "limit" | "offset">, params: unknown[]): string {
    const conds: string[] = [];
    if (q.graph_id) {
      conds.push("graph_id = ?");
      params.push(q.graph_id);
    }
    if (q.name) {
      conds.push("name LIKE ? ESCAPE '\\'");
      params.push(`%${q.name.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
    }
    if (q.metadata && Object.keys(q.metadata).length)
      conds.push(...containmentSql("metadata", q.metadata, params));
    if (q.authMetadata && Object.keys(q.authMetadata).length) {
      conds.push(...containmentSql("metadata", q.authMetadata, params));
    }
    return conds.length ? `WHERE ${conds.join(" AND ")}` : "";
  }

  async search(q: AssistantSearch): Promise<Assistant[]> {
    const params: unknown[] = [];
    const sql = `SELECT * FROM assistants ${this.where(q, params)} ${orderBy(SORTABLE, q.sort_by, q.sort_order, "created_at")} LIMIT ? OFFSET ?`;
    return this.stmt(sql)
      .all(...params, q.limit, q.offset)
      .map(toAssistant);
  }

  async count(q: Omit<AssistantSearch, "limit" | "offset">): Promise<number> {
    const params: unknown[] = [];
    const r = this.stmt(`SELECT COUNT(*) AS n FROM assistants ${this.where(q, params)}`).get(...params) as {
      n: number;
    };
    return r.n;
  }

  async versions(id: string, q: { metadata?: Json; limit: number; offset: number }): Promise<Assistant[]> {
    const params: unknown[] = [id];
    const conds = ["assistant_id = ?"];
    if (q.metadata && Object.keys(q.metadata).length)
      conds.push(...containmentSql("metadata", q.metadata, params));
    return this.stmt(
      `SELECT *, created_at AS updated_at FROM assistant_versions WHERE ${conds.join(" AND ")} ORDER BY version DESC LIMIT ? OFFSET ?`,
    )
      .all(...params, q.limit, q.offset)
      .map(toAssistant);
  }

  async setLatest(id: string, version: number): Promise<Assistant | null> {
    this.begin();
    return this.db.transaction(() => {
      const cur = this.stmt("SELECT * FROM assistants WHERE assistant_id = ?").get(id);
      const v = this.stmt("SELECT * FROM assistant_versions WHERE assistant_id = ? AND version = ?").get(
        id,
        version,
      );
      if (!cur || !v) return null;
      const a = toAssistant({ ...v, created_at: (cur as any).created_at, updated_at: now() });
      this.write(a);
      return a;
    })();
  }
}
