// The long-term store on SQLite: LangGraph's BaseStore for graphs (config.store / getStore()), plus the
// TTL and paging the HTTP API needs. Expired items are invisible at once and swept periodically.
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
import type Database from "better-sqlite3";
import { matchesFilter } from "../store-filter.js";
import { cosine, textsOf, type StoreIndex } from "../store-index.js";
import type { ItemStore, NamespaceQuery, PutOptions, ReadOptions } from "../types.js";
import { now, statementCache } from "./rows.js";

const SEP = "\u001f";
const encode = (ns: string[]) => ns.join(SEP);
const decode = (s: string) => (s === "" ? [] : s.split(SEP));

function toItem(r: any): Item {
  return {
    namespace: decode(r.namespace),
    key: r.key,
    value: JSON.parse(r.value),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
  };
}

export class SqliteStore extends BaseStore implements ItemStore {
  private stmt: ReturnType<typeof statementCache>;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private db: Database.Database,
    private begin: () => void,
    private index?: StoreIndex,
    sweepIntervalMs = 60_000,
  ) {
    super();
    this.stmt = statementCache(db);
    if (sweepIntervalMs > 0) {
      this.sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
      this.sweeper.unref();
    }
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
      if ("key" in op && "value" in op)
        out.push(await this.putItem((op as PutOperation).namespace, op.key, op.value, {}));
      else if ("key" in op) out.push(await this.getItem((op as GetOperation).namespace, op.key, {}));
      else if ("namespacePrefix" in op) out.push(await this.searchItems(op as SearchOperation, {}));
      else out.push(this.listNamespacesOp(op as ListNamespacesOperation));
    }
    return out as OperationResults<Op>;
  }

  private expiry(ttl: number | null | undefined): number | null {
    return ttl ? Date.now() + ttl * 60_000 : null;
  }

  async putItem(
    namespace: string[],
    key: string,
    value: Record<string, unknown> | null,
    opts: PutOptions,
  ): Promise<void> {
    this.validate(namespace);
    this.begin();
    if (value === null) {
      this.stmt("DELETE FROM store_items WHERE namespace = ? AND key = ?").run(encode(namespace), key);
      return;
    }
    // Embed first (it may call out), then write in one synchronous step.
    let embedding: string | null = null;
    if (this.index && opts.index !== false) {
      const texts = textsOf(value, opts.index ?? this.index.fields);
      if (texts.length) embedding = JSON.stringify(await this.index.embed(texts));
    }
    this.begin();
    const ts = now();
    this.stmt(
      `INSERT INTO store_items (namespace, key, value, created_at, updated_at, ttl_minutes, expires_at, embedding)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at,
         ttl_minutes = excluded.ttl_minutes, expires_at = excluded.expires_at, embedding = excluded.embedding`,
    ).run(
      encode(namespace),
      key,
      JSON.stringify(value),
      ts,
      ts,
      opts.ttl ?? null,
      this.expiry(opts.ttl),
      embedding,
    );
  }

  private refresh(rows: any[], opts: ReadOptions): void {
    if (opts.refreshTtl === false) return;
    const withTtl = rows.filter((r) => r.ttl_minutes);
    if (!withTtl.length) return;
    this.begin();
    const upd = this.stmt("UPDATE store_items SET expires_at = ? WHERE namespace = ? AND key = ?");
    for (const r of withTtl) upd.run(this.expiry(r.ttl_minutes), r.namespace, r.key);
  }

  async refreshTtl(items: { namespace: string[]; key: string }[]): Promise<void> {
    if (!items.length) return;
    this.begin();
    const upd = this.stmt(
      "UPDATE store_items SET expires_at = ? + ttl_minutes * 60000 WHERE namespace = ? AND key = ? AND ttl_minutes",
    );
    const now = Date.now();
    for (const i of items) upd.run(now, encode(i.namespace), i.key);
  }

  async getItem(namespace: string[], key: string, opts: ReadOptions): Promise<Item | null> {
    const r = this.stmt(
      "SELECT * FROM store_items WHERE namespace = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)",
    ).get(encode(namespace), key, Date.now());
    if (!r) return null;
    this.refresh([r], opts);
    return toItem(r);
  }

  async searchItems(op: SearchOperation, opts: ReadOptions): Promise<SearchItem[]> {
    // Without store.index a query is ignored (the items listed as without one), as LangGraph's own stores and the
    // official dev server do.
    const query = this.index ? op.query : undefined;
    const prefix = encode(op.namespacePrefix);
    // An empty prefix matches every namespace.
    const rows = this.stmt(
      `SELECT * FROM store_items WHERE (? = '' OR namespace = ? OR substr(namespace, 1, ?) = ?)
         AND (expires_at IS NULL OR expires_at > ?) ORDER BY updated_at DESC, namespace, key`,
    ).all(prefix, prefix, prefix.length + 1, prefix + SEP, Date.now()) as any[];
    let matching = op.filter ? rows.filter((r) => matchesFilter(JSON.parse(r.value), op.filter)) : rows;
    if (query) {
      // Ranked by the best cosine similarity of any embedded text of the item; unembedded items last.
      const [q] = await this.index!.embed([query]);
      for (const r of matching) {
        const vectors = r.embedding ? (JSON.parse(r.embedding) as number[][]) : [];
        r.score = vectors.length ? Math.max(...vectors.map((v) => cosine(q, v))) : null;
      }
      matching = [...matching].sort((a, b) => (b.score ?? -Infinity) - (a.score ?? -Infinity));
    }
    const page = matching.slice(op.offset ?? 0, (op.offset ?? 0) + (op.limit ?? 10));
    this.refresh(page, opts);
    return page.map((r) => (query ? { ...toItem(r), score: r.score ?? undefined } : toItem(r)));
  }

  private listNamespacesOp(op: ListNamespacesOperation): string[][] {
    const rows = this.stmt(
      "SELECT DISTINCT namespace FROM store_items WHERE expires_at IS NULL OR expires_at > ? ORDER BY namespace",
    ).all(Date.now()) as { namespace: string }[];
    const seen = new Set<string>();
    const out: string[][] = [];
    for (const { namespace } of rows) {
      let ns = decode(namespace);
      const ok = (op.matchConditions ?? []).every((c) => {
        const part = c.matchType === "prefix" ? ns.slice(0, c.path.length) : ns.slice(-c.path.length);
        return part.length === c.path.length && c.path.every((p, i) => p === "*" || p === part[i]);
      });
      if (!ok) continue;
      if (op.maxDepth !== undefined) ns = ns.slice(0, op.maxDepth);
      const k = encode(ns);
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
    this.begin();
    return this.stmt("DELETE FROM store_items WHERE expires_at IS NOT NULL AND expires_at <= ?").run(
      Date.now(),
    ).changes;
  }

  stop(): void {
    clearInterval(this.sweeper);
  }
}
