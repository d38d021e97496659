// Row <-> record conversion shared by the SQLite stores.
import type { Assistant, Json, Run, Thread } from "../types.js";

export const now = (): string => new Date().toISOString();

export const parseJson = <T = Json>(s: string | null | undefined, fallback: T): T =>
  s == null ? fallback : (JSON.parse(s) as T);

export function toAssistant(r: any): Assistant {
  return {
    assistant_id: r.assistant_id,
    graph_id: r.graph_id,
    config: parseJson(r.config, {}),
    context: parseJson(r.context, {}),
    metadata: parseJson(r.metadata, {}),
    name: r.name,
    description: r.description ?? null,
    version: r.version,
    created_at: r.created_at,
    updated_at: r.updated_at ?? r.created_at,
  };
}

export function toThread(r: any): Thread {
  const t: Thread = {
    thread_id: r.thread_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    state_updated_at: r.state_updated_at,
    metadata: parseJson(r.metadata, {}),
    status: r.status,
    config: parseJson(r.config, {}),
    values: null,
    interrupts: parseJson(r.interrupts, {}),
  };
  // `values` (the thread's state, its largest field, growing with every run) is parsed when first read: most reads
  // of a thread (authorization, a run's admission and join, its status) never look at it. It stays an enumerable
  // own property in its place, read and written like any other.
  const raw = r.values as string | null;
  let values: Json | null | undefined;
  Object.defineProperty(t, "values", {
    enumerable: true,
    configurable: true,
    get: () => (values === undefined ? (values = parseJson(raw, null)) : values),
    set: (v: Json | null) => (values = v),
  });
  if (r.error != null) t.error = parseJson(r.error, null);
  return t;
}

export function toRun(r: any): Run {
  return {
    run_id: r.run_id,
    thread_id: r.thread_id,
    assistant_id: r.assistant_id,
    created_at: r.created_at,
    updated_at: r.updated_at,
    status: r.status,
    metadata: parseJson(r.metadata, {}),
    kwargs: parseJson(r.kwargs, {}),
    multitask_strategy: r.multitask_strategy,
  };
}

/** ORDER BY clause from a whitelist; unknown columns never reach SQL. */
export function orderBy(
  allowed: readonly string[],
  sortBy: string | undefined,
  sortOrder: string | undefined,
  fallback: string,
): string {
  const col = sortBy && allowed.includes(sortBy) ? sortBy : fallback;
  const dir = sortOrder === "asc" ? "ASC" : "DESC";
  return `ORDER BY ${col} ${dir}, rowid ${dir}`;
}

/** A prepared-statement cache per connection: the hot paths prepare each SQL text once. */
export function statementCache(db: import("better-sqlite3").Database) {
  const cache = new Map<string, import("better-sqlite3").Statement>();
  return (sql: string) => {
    let s = cache.get(sql);
    if (!s) {
      s = db.prepare(sql);
      if (cache.size < 500) cache.set(sql, s);
    }
    return s;
  };
}
