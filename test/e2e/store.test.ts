// End-to-end: the store API (items, search, namespaces, TTL) and a graph reading and writing the same store.
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { postJson, unique } from "../helpers/http.ts";
import { ROOT, useHangar } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/store-project/langgraph.json") });

describe("store items", () => {
  it("put, get, update and delete an item", async () => {
    const { client } = hangar;
    const ns = ["users", unique("u")];
    await client.store.putItem(ns, "profile", { name: "Ada", langs: ["ts"] });
    const got = await client.store.getItem(ns, "profile");
    expect(got?.value).toEqual({ name: "Ada", langs: ["ts"] });
    expect(got?.namespace).toEqual(ns);
    expect(got?.key).toBe("profile");
    expect(typeof got?.createdAt).toBe("string");
    await client.store.putItem(ns, "profile", { name: "Ada L." });
    const again = await client.store.getItem(ns, "profile");
    expect(again?.value).toEqual({ name: "Ada L." });
    expect(again?.createdAt).toBe(got?.createdAt);
    await client.store.deleteItem(ns, "profile");
    expect(await client.store.getItem(ns, "profile")).toBeNull();
  });

  it("searches every namespace with an empty prefix", async () => {
    const { client } = hangar;
    const tag = unique("everywhere");
    await client.store.putItem([unique("a")], "k1", { tag });
    await client.store.putItem([unique("b"), "deep"], "k2", { tag });
    const found = await client.store.searchItems([], { filter: { tag }, limit: 100 });
    expect(found.items.map((x) => x.key).sort()).toEqual(["k1", "k2"]);
  });

  it("searches by namespace prefix with filters and paging", async () => {
    const { client } = hangar;
    const root = unique("docs");
    for (let i = 0; i < 5; i++) {
      await client.store.putItem([root, i % 2 ? "odd" : "even"], `d${i}`, {
        i,
        kind: i % 2 ? "odd" : "even",
      });
    }
    await client.store.putItem([`${root}x`, "even"], "other", { i: 99, kind: "even" });
    const all = await client.store.searchItems([root], { limit: 100 });
    expect(all.items.map((x) => x.key).sort()).toEqual(["d0", "d1", "d2", "d3", "d4"]);
    const odd = await client.store.searchItems([root], { filter: { kind: "odd" }, limit: 100 });
    expect(odd.items.map((x) => x.value.i).sort()).toEqual([1, 3]);
    const big = await client.store.searchItems([root], { filter: { i: { $gte: 3 } }, limit: 100 });
    expect(big.items.map((x) => x.value.i).sort()).toEqual([3, 4]);
    const page1 = await client.store.searchItems([root], { limit: 2, offset: 0 });
    const page2 = await client.store.searchItems([root], { limit: 2, offset: 2 });
    expect(page1.items).toHaveLength(2);
    expect(page2.items).toHaveLength(2);
    expect(page1.items.map((x) => x.key)).not.toContain(page2.items[0].key);
  });

  it("lists namespaces with prefix, suffix and max depth", async () => {
    const { client } = hangar;
    const root = unique("tree");
    await client.store.putItem([root, "a", "x"], "k", { v: 1 });
    await client.store.putItem([root, "b", "x"], "k", { v: 1 });
    await client.store.putItem([root, "b", "y"], "k", { v: 1 });
    const all = await client.store.listNamespaces({ prefix: [root] });
    expect(all.namespaces).toEqual([
      [root, "a", "x"],
      [root, "b", "x"],
      [root, "b", "y"],
    ]);
    const x = await client.store.listNamespaces({ prefix: [root], suffix: ["x"] });
    expect(x.namespaces).toEqual([
      [root, "a", "x"],
      [root, "b", "x"],
    ]);
    const shallow = await client.store.listNamespaces({ prefix: [root], maxDepth: 2 });
    expect(shallow.namespaces).toEqual([
      [root, "a"],
      [root, "b"],
    ]);
  });

  it("rejects bad input with 422 naming the field, and stores nothing", async () => {
    const { client, server } = hangar;
    const ns = [unique("bad")];
    const noValue = await postJson(server.url, "/store/items", { namespace: ns, key: "k" }, "PUT");
    expect(noValue.status).toBe(422);
    expect(JSON.stringify(noValue.body.detail)).toMatch(/value/);
    const dotted = await postJson(
      server.url,
      "/store/items",
      { namespace: ["a.b"], key: "k", value: {} },
      "PUT",
    );
    expect(dotted.status).toBe(422);
    expect(JSON.stringify(dotted.body.detail)).toMatch(/namespace/);
    expect((await client.store.searchItems(ns)).items).toEqual([]);
  });

  it("a search with a query and no store.index lists the items as without one (LangGraph's stores ignore it)", async () => {
    const { client } = hangar;
    const ns = ["query-without-index", crypto.randomUUID()];
    await client.store.putItem(ns, "older", { text: "about owls" });
    await client.store.putItem(ns, "newer", { text: "about bees" });
    const found = await client.store.searchItems(ns, { query: "owls" });
    expect(found.items.map((i) => i.key)).toEqual(["newer", "older"]);
    expect(found.items.every((i) => !("score" in i) || i.score === undefined)).toBe(true);
  });
});

describe("store TTL", () => {
  it("an item past its TTL is gone from get and search; one within its TTL is there", async () => {
    const { client } = hangar;
    const ns = [unique("ttl")];
    // A TTL of 0.001 minutes (60 ms): wait for it to pass by reading until it is gone (bounded).
    await client.store.putItem(ns, "short", { v: 1 }, { ttl: 0.001 });
    await waitFor("the short-lived item to expire", async () =>
      (await client.store.getItem(ns, "short", { refreshTtl: false })) === null ? true : undefined,
    );
    expect((await client.store.searchItems(ns)).items).toEqual([]);
    await client.store.putItem(ns, "long", { v: 2 }, { ttl: 60 });
    expect((await client.store.getItem(ns, "long"))?.value).toEqual({ v: 2 });
  });
});

describe("graphs share the store", () => {
  it("a node reads what the API wrote, and the API reads what the node wrote", async () => {
    const { client } = hangar;
    const user = unique("user");
    await client.store.putItem(["memories", user], "profile", { likes: "planes" });
    const values = await client.runs.wait(null, "recall", { input: { user } });
    expect((values as { profile: unknown }).profile).toEqual({ likes: "planes" });
    const seen = await client.store.getItem(["memories", user], "seen_by_graph");
    expect(seen?.value).toEqual({ seen: true, profile_found: true });
  });
});

describe("semantic search (store.index)", () => {
  const semantic = useHangar({ config: join(ROOT, "test/fixtures/semantic-project/langgraph.json") });

  it("ranks items by similarity of their indexed field to the query, with a score", async () => {
    const { client } = semantic;
    const ns = [unique("notes")];
    await client.store.putItem(ns, "a", { text: "jet engines and wings of planes", n: 1 });
    await client.store.putItem(ns, "b", { text: "recipes for bread and cake", n: 2 });
    await client.store.putItem(ns, "c", { text: "planes planes planes", n: 3 });
    await client.store.putItem(ns, "d", { text: "planes too, but not indexed", n: 4 }, { index: false });
    const res = await client.store.searchItems(ns, { query: "planes", limit: 10 });
    const keys = res.items.map((i) => i.key);
    expect(keys.slice(0, 2)).toEqual(["c", "a"]);
    expect(keys[keys.length - 1]).toBe("d");
    expect(typeof res.items[0].score).toBe("number");
    expect(res.items[0].score!).toBeGreaterThan(res.items[1].score!);
    const filtered = await client.store.searchItems(ns, { query: "planes", filter: { n: { $gte: 2 } } });
    expect(filtered.items.map((i) => i.key)[0]).toBe("c");
  });
});
