// The filter a `store` auth handler returns, applied as the official server applies it: an item matches when
// its value's keys, its `namespace` and its `key` satisfy the filter; items and namespaces that do not match
// are invisible (search, list), missing (get: 404, as is overwriting or deleting another user's item), or refused
// (putting an item that would not match: 403).
import type { Item } from "@langchain/langgraph-checkpoint";
import { ForbiddenError, invalidInput } from "../lib/errors.js";
import { metadataMatches } from "../auth/auth.js";
import type { Json } from "../storage/types.js";
import { notFound } from "./errors.js";

/** How many items or namespaces a filtered search or listing reads at most before it gives up (as officially). */
export const MAX_FILTERED_SCAN = 10_000;
const PAGE = 1_000;

/** What a filter is matched against: the value's keys, then the namespace and key (which win). */
function itemFacts(namespace: string[], key: string | undefined, value: unknown): Json {
  return {
    ...(value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : {}),
    namespace,
    ...(key === undefined ? {} : { key }),
  };
}

export const itemMatches = (
  filter: Json | undefined,
  namespace: string[],
  key: string | undefined,
  value: unknown,
): boolean => filter === undefined || metadataMatches(itemFacts(namespace, key, value), filter);

/** An existing item the filter hides: 404, as if it did not exist. */
export function checkExisting(filter: Json | undefined, item: Item | null): void {
  if (item && !itemMatches(filter, item.namespace, item.key, item.value)) throw notFound("Item not found");
}

/** A write the filter does not allow (the item it would leave would not match): 403. */
export function checkWritable(
  filter: Json | undefined,
  namespace: string[],
  key: string,
  value: unknown,
): void {
  if (!itemMatches(filter, namespace, key, value)) throw new ForbiddenError("Not authorized");
}

/**
 * The page [offset, offset + limit) of the entries that match, read from `page(offset, limit)` of all entries
 * a thousand at a time; 422 when more than MAX_FILTERED_SCAN entries had to be read (narrow the query).
 */
export async function scanMatching<T>(
  page: (offset: number, limit: number) => Promise<T[]>,
  matches: (entry: T) => boolean,
  offset: number,
  limit: number,
): Promise<T[]> {
  const found: T[] = [];
  let scanned = 0;
  while (found.length < offset + limit) {
    if (scanned >= MAX_FILTERED_SCAN) {
      throw invalidInput(
        `the store query read ${MAX_FILTERED_SCAN} entries without filling the page the auth filter allows; ` +
          "narrow the namespace or the filter",
      );
    }
    const size = Math.min(PAGE, MAX_FILTERED_SCAN - scanned);
    const entries = await page(scanned, size);
    scanned += entries.length;
    found.push(...entries.filter(matches));
    if (entries.length < size) break;
  }
  return found.slice(offset, offset + limit);
}
