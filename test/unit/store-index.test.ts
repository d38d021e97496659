// Unit tests of src/storage/store-index.ts: which texts of a store value are embedded (index fields and paths),
// cosine similarity, and loading `store.index` from a project (real files in a temporary directory; the shape
// of the section is checked with langgraph.json, see test/unit/settings.test.ts).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cosine, loadStoreIndex, textsOf } from "../../src/storage/store-index.js";

describe("textsOf", () => {
  const value = {
    title: "Hello",
    n: 3,
    ok: false,
    none: null,
    meta: { author: "ann", tags: ["x", "y"] },
    chapters: [{ content: "one" }, { content: "two" }, { other: 1 }],
  };

  it('embeds the whole value as compact JSON for "$"', () => {
    expect(textsOf({ a: 1, b: "x" }, ["$"])).toEqual(['{"a":1,"b":"x"}']);
  });

  it("gives a scalar field as its text, and an object or array as pretty JSON", () => {
    expect(textsOf(value, ["title"])).toEqual(["Hello"]);
    expect(textsOf(value, ["n", "ok"])).toEqual(["3", "false"]);
    expect(textsOf(value, ["meta.author"])).toEqual(["ann"]);
    expect(textsOf(value, ["meta.tags"])).toEqual([JSON.stringify(["x", "y"], null, 2)]);
  });

  it("gives nothing for a missing or null field, or past one (a client's put `index` cannot make it throw)", () => {
    expect(textsOf(value, ["missing"])).toEqual([]);
    expect(textsOf(value, ["none"])).toEqual([]);
    expect(textsOf(value, ["meta.missing.deeper"])).toEqual([]);
    expect(textsOf(value, ["none.x"])).toEqual([]);
    expect(textsOf(value, ["title.length"])).toEqual([]);
    expect(textsOf(value, ["chapters[*].content.x"])).toEqual([]);
    expect(textsOf(value, ["title[0]", "meta[*]", "constructor", "meta.toString"])).toEqual([]);
  });

  it("reads every member with *", () => {
    expect(textsOf(value, ["meta.*"])).toEqual(["ann", JSON.stringify(["x", "y"], null, 2)]);
    expect(textsOf(value, ["chapters.*.content"])).toEqual(["one", "two"]);
  });

  it("reaches into arrays: [*] every element, [i] and [-i] by index", () => {
    expect(textsOf(value, ["chapters[*].content"])).toEqual(["one", "two"]);
    expect(textsOf(value, ["chapters[0].content"])).toEqual(["one"]);
    expect(textsOf(value, ["chapters[-2].content"])).toEqual(["two"]);
    expect(textsOf(value, ["chapters[9].content"])).toEqual([]);
    expect(textsOf(value, ["chapters[-4].content"])).toEqual([]);
    expect(textsOf(value, ["chapters[x].content"])).toEqual([]);
    expect(textsOf(value, ["chapters.1.content"])).toEqual(["two"]);
    expect(textsOf(value, ["chapters[*]"])).toEqual(value.chapters.map((c) => JSON.stringify(c, null, 2)));
    expect(textsOf(value, ["meta.tags[*]"])).toEqual(["x", "y"]);
  });

  it("selects several fields with {a,b}", () => {
    expect(textsOf(value, ["{title,meta.author}"])).toEqual(["Hello", "ann"]);
    expect(textsOf(value, ["{title, n, missing, none}"])).toEqual(["Hello", "3"]);
    expect(textsOf(value, ["chapters[0]{content,other}"])).toEqual(["one"]);
    expect(textsOf(value, ["chapters[*]{content,other}"])).toEqual(["one", "two", "1"]);
  });

  it("concatenates the texts of every field, in the order of the fields", () => {
    expect(textsOf(value, ["meta.author", "$", "title"])).toEqual(["ann", JSON.stringify(value), "Hello"]);
    expect(textsOf(value, [])).toEqual([]);
  });
});

describe("cosine", () => {
  it("is 1 for vectors in the same direction, whatever their length", () => {
    expect(cosine([1, 0], [1, 0])).toBe(1);
    expect(cosine([1, 2, 3], [2, 4, 6])).toBeCloseTo(1, 12);
  });

  it("is 0 for orthogonal vectors and -1 for opposite ones", () => {
    expect(cosine([1, 0], [0, 1])).toBe(0);
    expect(cosine([1, 1], [-1, -1])).toBeCloseTo(-1, 12);
  });

  it("computes the exact value for an ordinary pair", () => {
    // (1*4 + 2*5 + 3*6) / (|(1,2,3)| * |(4,5,6)|) = 32 / sqrt(14 * 77)
    expect(cosine([1, 2, 3], [4, 5, 6])).toBeCloseTo(32 / Math.sqrt(14 * 77), 12);
  });

  it("is 0 when either vector is zero, or empty (never NaN)", () => {
    expect(cosine([0, 0], [1, 1])).toBe(0);
    expect(cosine([1, 1], [0, 0])).toBe(0);
    expect(cosine([], [])).toBe(0);
  });

  it("uses only the dimensions both vectors have", () => {
    expect(cosine([1, 0, 5], [1, 0])).toBe(1);
    expect(cosine([3, 4], [3, 4, 100])).toBeCloseTo(1, 12);
  });
});

describe("loadStoreIndex", () => {
  const dir = mkdtempSync(join(tmpdir(), "hangar-store-index-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    join(dir, "embed.mjs"),
    [
      "export const lengths = (texts) => texts.map((t) => [t.length, 1]);",
      "export default async (texts) => texts.map(() => [0, 0, 1]);",
      "export const embeddings = { embedDocuments: async (texts) => texts.map((t) => [t.length]) };",
      "export const notAFunction = 42;",
    ].join("\n"),
  );

  it("is undefined when store has no index", async () => {
    expect(await loadStoreIndex(dir, undefined)).toBeUndefined();
    expect(await loadStoreIndex(dir, {})).toBeUndefined();
    expect(await loadStoreIndex(dir, null)).toBeUndefined();
    expect(await loadStoreIndex(dir, { ttl: {} })).toBeUndefined();
    expect(await loadStoreIndex(dir, { index: null })).toBeUndefined();
  });

  it("loads a named export function; the fields default to the whole value", async () => {
    const index = await loadStoreIndex(dir, { index: { embed: "./embed.mjs:lengths", dims: 2 } });
    expect(index?.dims).toBe(2);
    expect(index?.fields).toEqual(["$"]);
    expect(await index?.embed(["abc", ""])).toEqual([
      [3, 1],
      [0, 1],
    ]);
  });

  it("loads the default export when the spec names none, and keeps the fields given", async () => {
    const index = await loadStoreIndex(dir, {
      index: { embed: "./embed.mjs", dims: 3, fields: ["title", "meta.author"] },
    });
    expect(index?.fields).toEqual(["title", "meta.author"]);
    expect(await index?.embed(["a"])).toEqual([[0, 0, 1]]);
  });

  it("accepts a LangChain Embeddings object (embedDocuments)", async () => {
    const index = await loadStoreIndex(dir, { index: { embed: "./embed.mjs:embeddings", dims: 1 } });
    expect(await index?.embed(["ab", "abcd"])).toEqual([[2], [4]]);
  });

  it("names the file it looked for when it does not exist", async () => {
    await expect(loadStoreIndex(dir, { index: { embed: "./nope.mjs:f", dims: 2 } })).rejects.toThrow(
      `store.index.embed: file ${join(dir, "nope.mjs")} not found`,
    );
  });

  it("refuses an export that is neither a function nor an Embeddings object", async () => {
    await expect(
      loadStoreIndex(dir, { index: { embed: "./embed.mjs:notAFunction", dims: 2 } }),
    ).rejects.toThrow('store.index.embed "./embed.mjs:notAFunction": not a function or an Embeddings object');
    await expect(loadStoreIndex(dir, { index: { embed: "./embed.mjs:absent", dims: 2 } })).rejects.toThrow(
      'store.index.embed "./embed.mjs:absent": not a function or an Embeddings object',
    );
  });

  it("refuses an empty export name after the colon", async () => {
    await expect(loadStoreIndex(dir, { index: { embed: "./embed.mjs:", dims: 2 } })).rejects.toThrow(
      'graph "store.index.embed": spec "./embed.mjs:" has an empty export name after ":"',
    );
  });
});
