// End-to-end: a store auth handler that returns a filter (as the official docs and tests write one) scopes all
// five store routes as on the official server: another user's item is missing on get (404), cannot be
// overwritten (404) or deleted (404), an item that would not match is refused (403), and search and
// list-namespaces show only matching items and namespaces. Matching reads the item's value, namespace and key.
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { httpError, unique } from "../helpers/http.ts";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/store-auth-project/langgraph.json") });

const as = (token: string) =>
  new Client({
    apiUrl: hangar.server.url,
    defaultHeaders: { authorization: `Bearer ${token}` },
    callerOptions: { maxRetries: 0 },
  });

describe("store auth filters (value keys)", () => {
  it("get: another user's item answers 404; one's own is returned", async () => {
    const alice = as("token-alice");
    const ns = ["notes", unique("get")];
    await alice.store.putItem(ns, "a", { owner: "alice", text: "mine" });
    expect((await alice.store.getItem(ns, "a"))?.value).toEqual({ owner: "alice", text: "mine" });
    const err = await httpError(as("token-bob").store.getItem(ns, "a"));
    expect(err.status).toBe(404);
    // A key nobody has is null for everyone, as without auth.
    expect(await as("token-bob").store.getItem(ns, "nothing")).toBeNull();
  });

  it("put: overwriting another user's item is 404, an item that would not match is 403; nothing changes", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const ns = ["notes", unique("put")];
    await alice.store.putItem(ns, "a", { owner: "alice", text: "original" });
    expect((await httpError(bob.store.putItem(ns, "a", { owner: "bob", text: "taken" }))).status).toBe(404);
    const forged = await httpError(bob.store.putItem(ns, "b", { owner: "alice", text: "forged" }));
    expect(forged.status).toBe(403);
    expect((await httpError(bob.store.putItem(ns, "c", { text: "no owner" }))).status).toBe(403);
    expect((await alice.store.getItem(ns, "a"))?.value).toEqual({ owner: "alice", text: "original" });
    expect(await alice.store.getItem(ns, "b")).toBeNull();
    // Bob's own item is written.
    await bob.store.putItem(ns, "d", { owner: "bob", text: "bob's" });
    expect((await bob.store.getItem(ns, "d"))?.value.text).toBe("bob's");
  });

  it("delete: another user's item is 404 and stays; one's own is deleted", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const ns = ["notes", unique("del")];
    await alice.store.putItem(ns, "a", { owner: "alice" });
    expect((await httpError(bob.store.deleteItem(ns, "a"))).status).toBe(404);
    expect(await alice.store.getItem(ns, "a")).not.toBeNull();
    await alice.store.deleteItem(ns, "a");
    expect(await alice.store.getItem(ns, "a")).toBeNull();
  });

  it("search returns only matching items, paged over what matches", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const top = unique("search");
    for (let i = 0; i < 5; i++) await alice.store.putItem(["notes", top], `a${i}`, { owner: "alice", i });
    for (let i = 0; i < 3; i++) await bob.store.putItem(["notes", top], `b${i}`, { owner: "bob", i });
    const mine = await bob.store.searchItems(["notes", top], { limit: 10 });
    expect(mine.items.map((i) => i.key).sort()).toEqual(["b0", "b1", "b2"]);
    const everything = await bob.store.searchItems([], { limit: 100 });
    expect(everything.items.every((i) => i.value.owner === "bob")).toBe(true);
    const page = await alice.store.searchItems(["notes", top], { limit: 2, offset: 3 });
    expect(page.items).toHaveLength(2);
    expect(page.items.every((i) => i.value.owner === "alice")).toBe(true);
  });
});

describe("store auth filters (namespace labels)", () => {
  it("scope items by a label of their namespace on every route, and list only matching namespaces", async () => {
    const alice = as("token-alice");
    const bob = as("token-bob");
    const tag = unique("ns");
    await alice.store.putItem(["private", "alice", tag], "k", { text: "alice's" });
    await bob.store.putItem(["private", "bob", tag], "k", { text: "bob's" });
    // Writing under another user's label is refused, reading it is a 404.
    expect(
      (await httpError(bob.store.putItem(["private", "alice", tag], "x", { text: "forged" }))).status,
    ).toBe(403);
    expect((await httpError(bob.store.getItem(["private", "alice", tag], "k"))).status).toBe(404);
    expect((await httpError(bob.store.deleteItem(["private", "alice", tag], "k"))).status).toBe(404);
    const found = await bob.store.searchItems(["private"], { limit: 100 });
    expect(found.items.map((i) => i.value.text)).toContain("bob's");
    expect(found.items.every((i) => i.namespace.includes("bob"))).toBe(true);
    const listed = await bob.store.listNamespaces({ prefix: ["private"], limit: 100 });
    expect(listed.namespaces).toContainEqual(["private", "bob", tag]);
    expect(listed.namespaces.every((ns) => ns.includes("bob"))).toBe(true);
    expect((await alice.store.getItem(["private", "alice", tag], "k"))?.value.text).toBe("alice's");
  });
});
