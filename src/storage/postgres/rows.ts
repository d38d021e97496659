// Row <-> record conversion shared by the PostgreSQL stores: records look exactly as the SQLite ones do
// (timestamps as toISOString() strings, JSON objects, nulls where SQLite has them).
import type { Assistant, Cron, Json, Run, Thread } from "../types.js";
import { jsonb, type Row } from "./db.js";

export const now = (): string => new Date().toISOString();

/** A TIMESTAMPTZ (a Date from pg) as an ISO string; null stays null. */
export function iso(v: unknown): string | null {
  if (v == null) return null;
  return (v instanceof Date ? v : new Date(v as string)).toISOString();
}

const obj = <T = Json>(v: unknown, fallback: T): T => (v == null ? fallback : (v as T));

export function toAssistant(r: Row): Assistant {
  return {
    assistant_id: r.assistant_id,
    graph_id: r.graph_id,
    config: obj(r.config, {}),
    context: obj(r.context, {}),
    metadata: obj(r.metadata, {}),
    name: r.name,
    description: r.description ?? null,
    version: r.version,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at ?? r.created_at)!,
  };
}

export function toThread(r: Row): Thread {
  const t: Thread = {
    thread_id: r.thread_id,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    state_updated_at: iso(r.state_updated_at)!,
    metadata: obj(r.metadata, {}),
    status: r.status,
    config: obj(r.config, {}),
    values: obj<Json | null>(r.values, null),
    interrupts: obj(r.interrupts, {}),
  };
  if (r.error != null) t.error = r.error;
  return t;
}

export function toRun(r: Row): Run {
  return {
    run_id: r.run_id,
    thread_id: r.thread_id ?? null,
    assistant_id: r.assistant_id,
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
    status: r.status,
    metadata: obj(r.metadata, {}),
    kwargs: obj(r.kwargs, {}),
    multitask_strategy: r.multitask_strategy,
  };
}

export function toCron(r: Row): Cron {
  return {
    cron_id: r.cron_id,
    assistant_id: r.assistant_id,
    thread_id: r.thread_id ?? null,
    user_id: r.user_id ?? null,
    schedule: r.schedule,
    timezone: r.timezone ?? null,
    end_time: iso(r.end_time),
    enabled: Boolean(r.enabled),
    on_run_completed: r.on_run_completed,
    payload: obj(r.payload, {}),
    metadata: obj(r.metadata, {}),
    next_run_date: iso(r.next_run_date),
    created_at: iso(r.created_at)!,
    updated_at: iso(r.updated_at)!,
  };
}

/** How a sortable column sorts as in SQLite: text byte-wise (COLLATE "C"), NULLs lowest. */
export interface SortColumn {
  text?: boolean;
  nullable?: boolean;
}

/**
 * ORDER BY clause from a whitelist (unknown columns never reach SQL), ties broken by insertion order
 * (`seq`, as SQLite's rowid).
 */
export function orderBy(
  allowed: Record<string, SortColumn>,
  sortBy: string | undefined,
  sortOrder: string | undefined,
  fallback: string,
): string {
  const col = sortBy && Object.hasOwn(allowed, sortBy) ? sortBy : fallback;
  const spec = allowed[col] ?? {};
  const dir = sortOrder === "asc" ? "ASC" : "DESC";
  const expr = spec.text ? `${col} COLLATE "C"` : col;
  const nulls = spec.nullable ? (dir === "ASC" ? " NULLS FIRST" : " NULLS LAST") : "";
  return `ORDER BY ${expr} ${dir}${nulls}, seq ${dir}`;
}

/** `column @> $n::jsonb` (served by the GIN index) when the filter has keys; nothing otherwise. */
export function containment(column: string, filter: Json | undefined, params: unknown[]): string[] {
  if (!filter || !Object.keys(filter).length) return [];
  params.push(jsonb(filter));
  return [`${column} @> $${params.length}::jsonb`];
}
