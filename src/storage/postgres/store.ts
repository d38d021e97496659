// The long-term store on PostgreSQL: LangGraph's BaseStore for graphs (config.store / getStore()), plus
// the TTL and paging the HTTP API needs, as the SQLite store has them. Expired items are invisible at once
// and swept periodically. The namespace is a TEXT[] column.
import {
  BaseStore,
  InvalidNamespaceError,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import { matchesFilter } from "../store-filter.js";
import { cosine, textsOf, type StoreIndex } from "../store-index.js";
import type { ItemStore, NamespaceQuery, PutOptions, ReadOptions } from "../types.js";
import { jsonb, type Db, type Row } from "./db.js";
import { now } from "./rows.js";

// The SQLite store joins labels with U+001F; labels containing it are refused here too.
const SEP = "\u001f";

function toItem(r: Row): Item {
  return {
    namespace: r.namespace,
    key: r.key,
    value: r.value,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export class PostgresStore extends BaseStore implements ItemStore {
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private db: Db,
    private index?: StoreIndex,
    sweepIntervalMs = 60_000,
  ) {
    super();
    if (sweepIntervalMs > 0) {
      // Every process sweeps; deleting what another already deleted is harmless.
      this.sweeper = setInterval(() => this.sweep().catch(() => undefined), sweepIntervalMs);
      this.sweeper.unref();
    }
  }

  private get table() {
    return this.db.t.store_items;
  }

  private validate(ns: string[]): void {
    if (!ns.length) throw new InvalidNamespaceError("namespace cannot be empty");
    for (const label of ns) {
      if (typeof label !== "string" || !label)
        throw new InvalidNamespaceError("namespace labels must be non-empty strings");
      if (label.includes(".") || label.includes(SEP)) {
        throw new InvalidNamespaceError(`namespace label "${label}" cannot contain "."`);
      }
    }
    if (ns[0] === "langgraph") throw new InvalidNamespaceError('the root label "langgraph" is reserved');
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const out: unknown[] = [];
    for (const op of operations) {
      if ("key" in op && "value" in op) {
        const put = op as PutOperation;
        out.push(await this.putItem(put.namespace, put.key, put.value, { index: put.index }));
      } else if ("key" in op) out.push(await this.getItem((op as GetOperation).namespace, op.key, {}));
      else if ("namespacePrefix" in op) out.push(await this.searchItems(op as SearchOperation, {}));
      else out.push(await this.listNamespacesOp(op as ListNamespacesOperation));
    }
    return out as OperationResults<Op>;
  }

  private expiry(ttl: number | null | undefined): string | null {
    return ttl ? new Date(Date.now() + ttl * 60_000).toISOString() : null;
  }

  async putItem(
    namespace: string[],
    key: string,
    value: Record<string, unknown> | null,
    opts: PutOptions,
  ): Promise<void> {
    this.validate(namespace);
    if (value === null) {
      await this.db.query(`DELETE FROM ${this.table} WHERE namespace = $1::text[] AND key = $2`, [
        namespace,
        key,
      ]);
      return;
    }
    let embedding: string | null = null;
    if (this.index && opts.index !== false) {
      const texts = textsOf(value, opts.index ?? this.index.fields);
      if (texts.length) embedding = JSON.stringify(await this.index.embed(texts));
    }
    await this.db.query(
      `INSERT INTO ${this.table} (namespace, key, value, created_at, updated_at, ttl_minutes, expires_at, embedding)
       VALUES ($1::text[], $2, $3::jsonb, $4, $4, $5, $6, $7::jsonb)
       ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
         ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at, embedding = excluded.embedding`,
      [namespace, key, jsonb(value), now(), opts.ttl ?? null, this.expiry(opts.ttl), embedding],
    );
  }

  /** Restarts the TTL of the items read (those that have one). */
  private async refresh(rows: Row[], opts: ReadOptions): Promise<void> {
    if (opts.refreshTtl === false) return;
    const withTtl = rows.filter((r) => r.ttl_minutes);
    await this.refreshTtl(withTtl.map((r) => ({ namespace: r.namespace, key: r.key })));
  }

  async refreshTtl(items: { namespace: string[]; key: string }[]): Promise<void> {
    if (!items.length) return;
    await this.db.query(
      `UPDATE ${this.table} s SET expires_at = $1::timestamptz + s.ttl_minutes * interval '1 minute'
       FROM jsonb_to_recordset($2::jsonb) AS r(namespace text[], key text)
       WHERE s.namespace = r.namespace AND s.key = r.key AND s.ttl_minutes IS NOT NULL AND s.ttl_minutes <> 0`,
      [now(), jsonb(items)],
    );
  }

  async getItem(namespace: string[], key: string, opts: ReadOptions): Promise<Item | null> {
    const [r] = await this.db.rows(
      `SELECT * FROM ${this.table}
       WHERE namespace = $1::text[] AND key = $2 AND (expires_at IS NULL OR expires_at > $3)`,
      [namespace, key, now()],
    );
    if (!r) return null;
    await this.refresh([r], opts);
    return toItem(r);
  }

  async searchItems(op: SearchOperation, opts: ReadOptions): Promise<SearchItem[]> {
    // Without store.index a query is ignored (the items listed as without one), as LangGraph's own stores and the
    // official dev server do.
    const query = this.index ? op.query : undefined;
    const prefix = op.namespacePrefix ?? [];
    const offset = op.offset ?? 0;
    const limit = op.limit ?? 10;
    const params: unknown[] = [prefix, now()];
    // Without a filter or query, the page is cut in SQL; otherwise every item under the prefix is matched
    // here, exactly as the SQLite store does.
    const paged = !op.filter && !query;
    if (paged) params.push(limit, offset);
    const rows = await this.db.rows(
      `SELECT * FROM ${this.table}
       WHERE namespace[1:cardinality($1::text[])] = $1::text[] AND (expires_at IS NULL OR expires_at > $2)
       ORDER BY updated_at DESC, namespace COLLATE "C", key COLLATE "C"${paged ? " LIMIT $3 OFFSET $4" : ""}`,
      params,
    );
    let matching = op.filter ? rows.filter((r) => matchesFilter(r.value, op.filter)) : rows;
    if (query) {
      // Ranked by the best cosine similarity of any embedded text of the item; unembedded items last.
      const [q] = await this.index!.embed([query]);
      for (const r of matching) {
        const vectors = Array.isArray(r.embedding) ? (r.embedding as number[][]) : [];
        r.score = vectors.length ? Math.max(...vectors.map((v) => cosine(q, v))) : null;
      }
      matching = [...matching].sort((a, b) => (b.score ?? -Infinity) - (a.score ?? -Infinity));
    }
    const page = paged ? matching : matching.slice(offset, offset + limit);
    await this.refresh(page, opts);
    return page.map((r) => (query ? { ...toItem(r), score: r.score ?? undefined } : toItem(r)));
  }

  private async listNamespacesOp(op: ListNamespacesOperation): Promise<string[][]> {
    const rows = await this.db.rows<{ namespace: string[] }>(
      `SELECT DISTINCT namespace COLLATE "C" AS namespace FROM ${this.table}
       WHERE expires_at IS NULL OR expires_at > $1 ORDER BY 1`,
      [now()],
    );
    const seen = new Set<string>();
    const out: string[][] = [];
    for (const { namespace } of rows) {
      let ns = namespace;
      const ok = (op.matchConditions ?? []).every((c) => {
        const part = c.matchType === "prefix" ? ns.slice(0, c.path.length) : ns.slice(-c.path.length);
        return part.length === c.path.length && c.path.every((p, i) => p === "*" || p === part[i]);
      });
      if (!ok) continue;
      if (op.maxDepth !== undefined) ns = ns.slice(0, op.maxDepth);
      const k = JSON.stringify(ns);
      if (seen.has(k)) continue;
      seen.add(k);
      out.push(ns);
    }
    return out.slice(op.offset, op.offset + op.limit);
  }

  async listNamespacesPage(q: NamespaceQuery): Promise<string[][]> {
    const matchConditions = [
      ...(q.prefix?.length ? [{ matchType: "prefix" as const, path: q.prefix }] : []),
      ...(q.suffix?.length ? [{ matchType: "suffix" as const, path: q.suffix }] : []),
    ];
    return this.listNamespacesOp({ matchConditions, maxDepth: q.maxDepth, limit: q.limit, offset: q.offset });
  }

  /** Deletes expired items; returns how many. */
  async sweep(): Promise<number> {
    const res = await this.db.query(
      `DELETE FROM ${this.table} WHERE expires_at IS NOT NULL AND expires_at <= $1`,
      [now()],
    );
    return res.rowCount ?? 0;
  }

  stop(): void {
    clearInterval(this.sweeper);
  }
}
