// Filters of store search: a value per field, compared for equality, or an operator object
// ($eq, $ne, $gt, $gte, $lt, $lte, $in, $nin).

import { isDeepStrictEqual } from "node:util";

const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

/** Equal as JSON values: objects whatever the order of their keys (as PostgreSQL's jsonb compares them). */
const same = (a: unknown, b: unknown): boolean =>
  a === b || (typeof a === "object" && a !== null && isDeepStrictEqual(a, b));

/** A field of a JSON value: an object's own key or an array's index; scalars have none (no `"s".length`). */
function fieldOf(v: unknown, key: string): unknown {
  if (typeof v !== "object" || v === null) return undefined;
  if (Array.isArray(v)) return /^(0|[1-9]\d*)$/.test(key) ? v[Number(key)] : undefined;
  return Object.hasOwn(v, key) ? (v as Record<string, unknown>)[key] : undefined;
}

function isOperatorObject(v: unknown): v is Record<string, unknown> {
  return (
    typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).some((k) => OPERATORS.has(k))
  );
}

function test(actual: unknown, expected: unknown): boolean {
  if (!isOperatorObject(expected)) return same(actual, expected);
  return Object.entries(expected).every(([op, v]) => {
    switch (op) {
      case "$eq":
        return same(actual, v);
      case "$ne":
        return !same(actual, v);
      case "$gt":
        return Number(actual) > Number(v);
      case "$gte":
        return Number(actual) >= Number(v);
      case "$lt":
        return Number(actual) < Number(v);
      case "$lte":
        return Number(actual) <= Number(v);
      case "$in":
        return Array.isArray(v) && v.some((x) => same(actual, x));
      case "$nin":
        return !Array.isArray(v) || !v.some((x) => same(actual, x));
      default:
        return false;
    }
  });
}

/** True when every field of the filter matches the value (a dotted field reaches into objects). */
export function matchesFilter(
  value: Record<string, unknown>,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (!filter) return true;
  return Object.entries(filter).every(([field, expected]) => {
    let actual: unknown = value;
    for (const part of field.split(".")) actual = fieldOf(actual, part);
    return test(actual, expected);
  });
}
