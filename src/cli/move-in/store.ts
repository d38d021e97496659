// `hangar migrate`: the long-term store's items, each in its namespace under its key. An item the target holds
// with the same value is already there; one with another value is written over. Reading never restarts a TTL.
import { copyEach, tally, type Tally } from "./report.js";
import { canonical } from "./crons.js";
import { listing, request, type Side } from "./sides.js";

interface Item {
  namespace: string[];
  key: string;
  value: Record<string, unknown>;
}

/** A page of a side's items: a search from the empty namespace prefix. */
const itemPage = (side: Side) => async (limit: number, offset: number) => {
  const page = await request<{ items: Item[] }>(side, "POST", "/store/items/search", {
    namespace_prefix: [],
    limit,
    offset,
    refresh_ttl: false,
  });
  return page.items;
};

const where = (i: Item) => JSON.stringify([i.namespace, i.key]);

export async function copyStore(from: Side, to: Side, dryRun: boolean): Promise<Tally> {
  const items = await listing(from, "the store's items", itemPage(from));
  const theirs = new Map(
    (items.length ? await listing(to, "the store's items", itemPage(to)) : []).map((i) => [
      where(i),
      canonical(i.value),
    ]),
  );
  const t = tally("store items", dryRun);
  return copyEach(
    t,
    items,
    (i) => `store item ${i.key} in namespace [${i.namespace.join(", ")}]`,
    async (item) => {
      if (theirs.get(where(item)) === canonical(item.value)) {
        t.present++;
        return;
      }
      if (!dryRun) {
        await request(to, "PUT", "/store/items", {
          namespace: item.namespace,
          key: item.key,
          value: item.value,
        });
      }
      t.copied++;
    },
  );
}
