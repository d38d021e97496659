// Unit tests of src/storage/store-filter.ts: the filter of a store search (equality per field, dotted fields,
// and the $eq $ne $gt $gte $lt $lte $in $nin operators), as both storage backends apply it.
import { describe, expect, it } from "vitest";
import { matchesFilter } from "../../src/storage/store-filter.js";

const doc = {
  kind: "note",
  n: 5,
  s: "10",
  flag: true,
  none: null,
  tags: ["a", "b"],
  meta: { owner: "ann", level: 2, deep: { x: 1 } },
  items: [{ id: 1 }, { id: 2 }],
};

const match = (filter: Record<string, unknown> | undefined) => matchesFilter(doc, filter);

describe("matchesFilter without operators", () => {
  it("matches everything when there is no filter or an empty one", () => {
    expect(match(undefined)).toBe(true);
    expect(match({})).toBe(true);
  });

  it("compares a field to a scalar with strict equality (no type coercion)", () => {
    expect(match({ kind: "note" })).toBe(true);
    expect(match({ kind: "task" })).toBe(false);
    expect(match({ n: 5 })).toBe(true);
    expect(match({ n: "5" })).toBe(false);
    expect(match({ s: 10 })).toBe(false);
    expect(match({ flag: true })).toBe(true);
    expect(match({ flag: 1 })).toBe(false);
    expect(match({ none: null })).toBe(true);
  });

  it("requires every field to match", () => {
    expect(match({ kind: "note", n: 5 })).toBe(true);
    expect(match({ kind: "note", n: 6 })).toBe(false);
  });

  it("does not match a missing field, not even against null", () => {
    expect(match({ missing: null })).toBe(false);
    expect(match({ missing: "x" })).toBe(false);
  });

  it("compares objects and arrays by value", () => {
    expect(match({ tags: ["a", "b"] })).toBe(true);
    expect(match({ tags: ["b", "a"] })).toBe(false);
    expect(match({ tags: ["a"] })).toBe(false);
    expect(match({ meta: { owner: "ann", level: 2, deep: { x: 1 } } })).toBe(true);
    expect(match({ meta: { owner: "ann" } })).toBe(false);
    expect(match({ items: [{ id: 1 }, { id: 2 }] })).toBe(true);
    expect(match({ tags: { 0: "a", 1: "b" } })).toBe(false);
  });

  it("compares objects whatever the order of their keys (as JSON objects, like PostgreSQL's jsonb)", () => {
    expect(match({ meta: { deep: { x: 1 }, level: 2, owner: "ann" } })).toBe(true);
    expect(match({ items: [{ id: 1 }, { id: 2 }], "meta.deep": { x: 1 } })).toBe(true);
    expect(matchesFilter({ a: { p: 1, q: 2 } }, { a: { $eq: { q: 2, p: 1 } } })).toBe(true);
    expect(matchesFilter({ a: { p: 1, q: 2 } }, { a: { $in: [{ q: 2, p: 1 }] } })).toBe(true);
    expect(matchesFilter({ a: { p: 1, q: 2 } }, { a: { $ne: { q: 2, p: 1 } } })).toBe(false);
  });
});

describe("matchesFilter on dotted fields", () => {
  it("reaches into nested objects", () => {
    expect(match({ "meta.owner": "ann" })).toBe(true);
    expect(match({ "meta.deep.x": 1 })).toBe(true);
    expect(match({ "meta.deep.x": 2 })).toBe(false);
    expect(match({ "meta.deep": { x: 1 } })).toBe(true);
  });

  it("reaches into arrays by index", () => {
    expect(match({ "tags.0": "a" })).toBe(true);
    expect(match({ "items.1.id": 2 })).toBe(true);
    expect(match({ "items.2.id": 3 })).toBe(false);
  });

  it("finds nothing past a missing or scalar part", () => {
    expect(match({ "nope.x": { $ne: 1 } })).toBe(true);
    expect(match({ "nope.x": 1 })).toBe(false);
    expect(match({ "none.x": 1 })).toBe(false);
    expect(match({ "n.x": 1 })).toBe(false);
  });

  it("sees only the value's own JSON fields, not properties of strings, arrays or Object.prototype", () => {
    expect(match({ "kind.length": 4 })).toBe(false);
    expect(match({ "tags.length": 2 })).toBe(false);
    expect(match({ "meta.constructor": { $in: [Object] } })).toBe(false);
    expect(match({ toString: { $eq: Object.prototype.toString } })).toBe(false);
    expect(match({ "meta.__proto__": {} })).toBe(false);
  });

  it("treats a key that contains a dot as a path (such a key cannot be filtered on)", () => {
    expect(matchesFilter({ "a.b": 1 }, { "a.b": 1 })).toBe(false);
    expect(matchesFilter({ a: { b: 1 } }, { "a.b": 1 })).toBe(true);
  });
});

describe("matchesFilter operators", () => {
  it("$eq and $ne compare by value", () => {
    expect(match({ kind: { $eq: "note" } })).toBe(true);
    expect(match({ kind: { $eq: "task" } })).toBe(false);
    expect(match({ kind: { $ne: "task" } })).toBe(true);
    expect(match({ kind: { $ne: "note" } })).toBe(false);
    expect(match({ tags: { $eq: ["a", "b"] } })).toBe(true);
    expect(match({ tags: { $ne: ["a", "b"] } })).toBe(false);
    // A missing field is not equal to anything.
    expect(match({ missing: { $ne: "x" } })).toBe(true);
    expect(match({ missing: { $eq: null } })).toBe(false);
  });

  it("$gt $gte $lt $lte compare as numbers", () => {
    expect(match({ n: { $gt: 4 } })).toBe(true);
    expect(match({ n: { $gt: 5 } })).toBe(false);
    expect(match({ n: { $gte: 5 } })).toBe(true);
    expect(match({ n: { $gte: 6 } })).toBe(false);
    expect(match({ n: { $lt: 6 } })).toBe(true);
    expect(match({ n: { $lt: 5 } })).toBe(false);
    expect(match({ n: { $lte: 5 } })).toBe(true);
    expect(match({ n: { $lte: 4 } })).toBe(false);
    // Numeric strings on either side count as their number: "10" > 9, and 5 < "10" (not "5" > "10" as text).
    expect(match({ s: { $gt: 9 } })).toBe(true);
    expect(match({ n: { $lt: "10" } })).toBe(true);
  });

  it("a comparison with something that is not a number is false", () => {
    expect(match({ kind: { $gt: 0 } })).toBe(false);
    expect(match({ kind: { $lt: 0 } })).toBe(false);
    expect(match({ missing: { $gte: 0 } })).toBe(false);
    expect(match({ missing: { $lte: 0 } })).toBe(false);
    expect(match({ n: { $gt: "abc" } })).toBe(false);
  });

  it("several operators on one field must all hold (a range)", () => {
    expect(match({ n: { $gt: 1, $lt: 10 } })).toBe(true);
    expect(match({ n: { $gt: 1, $lt: 5 } })).toBe(false);
    expect(match({ n: { $gte: 5, $lte: 5, $ne: 4 } })).toBe(true);
  });

  it("$in and $nin test membership by value", () => {
    expect(match({ kind: { $in: ["task", "note"] } })).toBe(true);
    expect(match({ kind: { $in: ["task"] } })).toBe(false);
    expect(match({ kind: { $in: [] } })).toBe(false);
    expect(match({ kind: { $nin: ["task"] } })).toBe(true);
    expect(match({ kind: { $nin: ["note"] } })).toBe(false);
    expect(match({ kind: { $nin: [] } })).toBe(true);
    expect(match({ "meta.deep": { $in: [{ x: 2 }, { x: 1 }] } })).toBe(true);
    expect(match({ missing: { $in: [null] } })).toBe(false);
    expect(match({ missing: { $nin: [null] } })).toBe(true);
  });

  it("$in with something other than a list matches nothing; $nin with one matches everything", () => {
    expect(match({ kind: { $in: "note" } })).toBe(false);
    expect(match({ kind: { $nin: "note" } })).toBe(true);
  });

  it("an object with an operator key is an operator object: its other keys never match", () => {
    expect(match({ kind: { $eq: "note", extra: 1 } })).toBe(false);
    expect(match({ kind: { $regex: "no" } })).toBe(false);
  });

  it("an object with no operator key is a value to compare with", () => {
    expect(matchesFilter({ q: { $regex: "x" } }, { q: { $regex: "x" } })).toBe(true);
    expect(matchesFilter({ q: { notAnOp: 1 } }, { q: { notAnOp: 1 } })).toBe(true);
  });
});
