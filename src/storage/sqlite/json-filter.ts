// Builds SQL conditions for JSON containment filters (metadata, values) on SQLite, and the JSON functions
// (containment, top-level merge) its statements call.
import type Database from "better-sqlite3";
import { isObject } from "../../lib/objects.js";

/** JSON containment in the PostgreSQL `@>` sense: every key of `filter` is in `doc`, recursively. */
export function jsonContains(doc: unknown, filter: unknown): boolean {
  if (isObject(filter)) {
    if (!isObject(doc)) return false;
    return Object.entries(filter).every(([k, v]) => k in doc && jsonContains(doc[k], v));
  }
  if (Array.isArray(filter)) {
    if (!Array.isArray(doc)) return false;
    return filter.every((f) => doc.some((d) => jsonContains(d, f)));
  }
  return doc === filter;
}

/**
 * A top-level merge of JSON object `patch` into `target`, as the official server merges metadata: each key of
 * the patch replaces the target's value (null and objects included; nothing nested is merged, nothing deleted).
 */
export function mergeTopLevel(target: unknown, patch: unknown): Record<string, unknown> {
  return { ...(isObject(target) ? target : {}), ...(isObject(patch) ? patch : {}) };
}

/**
 * Registers on a connection `json_contains(doc_text, filter_text)` and `json_merge_top(target_text, patch_text)`
 * (mergeTopLevel, as JSON text).
 */
export function registerJsonFunctions(db: Database.Database): void {
  db.function("json_contains", { deterministic: true }, (doc: unknown, filter: unknown) => {
    if (typeof doc !== "string" || typeof filter !== "string") return 0;
    return jsonContains(JSON.parse(doc), JSON.parse(filter)) ? 1 : 0;
  });
  db.function("json_merge_top", { deterministic: true }, (target: unknown, patch: unknown) =>
    JSON.stringify(
      mergeTopLevel(
        typeof target === "string" ? JSON.parse(target) : {},
        typeof patch === "string" ? JSON.parse(patch) : {},
      ),
    ),
  );
}

// Keys a SQLite JSON path label cannot name faithfully (a NUL is "bad JSON path"; a backslash matches nothing;
// control characters and lone surrogates likewise): such keys are compared by json_contains instead.
// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const UNPATHABLE_KEY = /[\\\u0000-\u001f\ud800-\udfff]/;

/**
 * Conditions for `column` containing `filter`: scalar keys compare the JSON text of the key (cheap, no
 * parse in JS); object or array values, and keys no JSON path can name, go through json_contains.
 */
export function containmentSql(column: string, filter: Record<string, unknown>, params: unknown[]): string[] {
  const conds: string[] = [];
  const nested: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(filter)) {
    if ((value !== null && typeof value === "object") || UNPATHABLE_KEY.test(key)) {
      nested[key] = value;
      continue;
    }
    conds.push(`(${column} -> ?) = ?`);
    params.push(`$."${key.replace(/"/g, '\\"')}"`, JSON.stringify(value));
  }
  if (Object.keys(nested).length) {
    conds.push(`json_contains(${column}, ?)`);
    params.push(JSON.stringify(nested));
  }
  return conds;
}
