// Unit tests of src/lib/json-limits.ts: what input every request must meet (nesting depth, no NUL, no lone
// surrogate), where the first problem is reported, and how a path is shown in a message.
import { describe, expect, it } from "vitest";
import {
  MAX_AFTER_SECONDS,
  MAX_JSON_DEPTH,
  describePath,
  findInputProblem,
  stringProblem,
} from "../../src/lib/json-limits.js";

/** `levels` arrays nested in each other: `nested(1)` is `[]`, `nested(2)` is `[[]]`. */
function nested(levels: number): unknown {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
}

const NUL = { kind: "nul", message: "must not contain NUL (\\u0000) characters" };
const SURROGATE = {
  kind: "surrogate",
  message: "must not contain lone UTF-16 surrogates (not valid Unicode)",
};

describe("constants", () => {
  it("bounds depth at 100 levels and delays at the longest Node timer", () => {
    expect(MAX_JSON_DEPTH).toBe(100);
    expect(MAX_AFTER_SECONDS).toBe(2_147_483);
    // The longest delay, in ms, is still a timer Node sets without clamping it to 1 ms.
    expect(MAX_AFTER_SECONDS * 1000).toBeLessThanOrEqual(2 ** 31 - 1);
    expect((MAX_AFTER_SECONDS + 1) * 1000).toBeGreaterThan(2 ** 31 - 1);
  });
});

describe("stringProblem", () => {
  it("accepts ordinary text, the empty string, and well-formed surrogate pairs", () => {
    expect(stringProblem("")).toBeUndefined();
    expect(stringProblem("hello, wörld ✓")).toBeUndefined();
    expect(stringProblem("emoji 😀 and 𝄞")).toBeUndefined();
    expect(stringProblem("\ud83d\ude00")).toBeUndefined();
    // Other control characters are valid JSON text and storable.
    expect(stringProblem("tab\tnewline\n\u0001\u001f\u007f")).toBeUndefined();
    // U+FFFF and U+FFFE are noncharacters, but valid Unicode scalar values.
    expect(stringProblem("\uffff\ufffe")).toBeUndefined();
  });

  it("reports a NUL anywhere in the string", () => {
    expect(stringProblem("\u0000")).toEqual(NUL);
    expect(stringProblem("a\u0000b")).toEqual(NUL);
    expect(stringProblem("end\u0000")).toEqual(NUL);
  });

  it("reports a high surrogate not followed by a low one", () => {
    expect(stringProblem("\ud800")).toEqual(SURROGATE);
    expect(stringProblem("x\udbffy")).toEqual(SURROGATE);
    // Two high surrogates: the first is alone.
    expect(stringProblem("\ud83d\ud83d\ude00")).toEqual(SURROGATE);
  });

  it("reports a low surrogate not preceded by a high one", () => {
    expect(stringProblem("\udc00")).toEqual(SURROGATE);
    expect(stringProblem("a\udfffb")).toEqual(SURROGATE);
    // A pair followed by a second low surrogate.
    expect(stringProblem("\ud83d\ude00\ude00")).toEqual(SURROGATE);
    // Reversed pair: low then high.
    expect(stringProblem("\ude00\ud83d")).toEqual(SURROGATE);
  });

  it("reports the first bad character when both kinds occur", () => {
    expect(stringProblem("\u0000\ud800")).toEqual(NUL);
    expect(stringProblem("\ud800\u0000")).toEqual(SURROGATE);
  });
});

describe("findInputProblem", () => {
  it("accepts scalars, empty containers and ordinary documents", () => {
    for (const v of [null, undefined, 0, -1.5, true, false, "text", [], {}]) {
      expect(findInputProblem(v)).toBeUndefined();
    }
    expect(
      findInputProblem({
        input: { messages: [{ role: "user", content: "hi 😀" }] },
        metadata: { a: [1, 2, { b: null }] },
      }),
    ).toBeUndefined();
  });

  it("counts the body itself as level 1 and accepts exactly maxDepth levels", () => {
    expect(findInputProblem(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(findInputProblem(nested(3), 3)).toBeUndefined();
    expect(findInputProblem({ a: { b: {} } }, 3)).toBeUndefined();
  });

  it("reports the first container past the limit, with its path", () => {
    expect(findInputProblem(nested(4), 3)).toEqual({
      path: [0, 0, 0],
      kind: "depth",
      message: "nested deeper than the limit of 3 levels",
    });
    expect(findInputProblem({ a: { b: { c: {} } } }, 3)).toEqual({
      path: ["a", "b", "c"],
      kind: "depth",
      message: "nested deeper than the limit of 3 levels",
    });
    const p = findInputProblem(nested(MAX_JSON_DEPTH + 1));
    expect(p?.kind).toBe("depth");
    expect(p?.message).toBe("nested deeper than the limit of 100 levels");
    expect(p?.path).toEqual(Array(MAX_JSON_DEPTH).fill(0));
  });

  it("reports the root itself when the limit is 0", () => {
    expect(findInputProblem({}, 0)).toEqual({
      path: [],
      kind: "depth",
      message: "nested deeper than the limit of 0 levels",
    });
    // Scalars have no depth.
    expect(findInputProblem("x", 0)).toBeUndefined();
  });

  it("does not count strings and scalars as a level", () => {
    expect(findInputProblem({ a: "deep", b: 1, c: null }, 1)).toBeUndefined();
    expect(findInputProblem([["x"]], 1)?.path).toEqual([0]);
  });

  it("walks without recursion: a value far deeper than the call stack allows is checked", () => {
    const deep = nested(50_000);
    const p = findInputProblem(deep);
    expect(p?.kind).toBe("depth");
    expect(p?.path.length).toBe(MAX_JSON_DEPTH);
    // With a limit at its depth, it is accepted (and walked to the bottom, with a string there checked).
    expect(findInputProblem(deep, 50_000)).toBeUndefined();
    let withString: unknown = ["\u0000"];
    for (let i = 1; i < 50_000; i++) withString = [withString];
    expect(findInputProblem(withString, 50_000)?.kind).toBe("nul");
  });

  it("reports a bad string value with the path of keys and indexes to it", () => {
    expect(findInputProblem("a\u0000")).toEqual({ path: [], ...NUL });
    expect(findInputProblem({ input: { messages: [{ content: "ok" }, { content: "x\ud800" }] } })).toEqual({
      path: ["input", "messages", 1, "content"],
      ...SURROGATE,
    });
    expect(findInputProblem([["ok", "\u0000"]])).toEqual({ path: [0, 1], ...NUL });
  });

  it("reports a bad key, with the key as the last element of the path and 'keys' in the message", () => {
    expect(findInputProblem({ metadata: { "bad\u0000key": 1 } })).toEqual({
      path: ["metadata", "bad\u0000key"],
      kind: "nul",
      message: "keys must not contain NUL (\\u0000) characters",
    });
    expect(findInputProblem({ "\udc00": "v" })).toEqual({
      path: ["\udc00"],
      kind: "surrogate",
      message: "keys must not contain lone UTF-16 surrogates (not valid Unicode)",
    });
  });

  it("reports the first problem in document order", () => {
    expect(findInputProblem({ a: "fine", b: "\u0000", c: "\ud800" })?.path).toEqual(["b"]);
    expect(findInputProblem(["\ud800", "\u0000"])).toEqual({ path: [0], ...SURROGATE });
    // Depth first: a problem deep in the first member comes before one in the second.
    expect(findInputProblem({ a: { b: { c: "\u0000" } }, d: "\u0000" })?.path).toEqual(["a", "b", "c"]);
    expect(findInputProblem({ a: { b: {} }, z: "\u0000" }, 2)?.kind).toBe("depth");
    expect(findInputProblem({ z: "\u0000", a: { b: {} } }, 2)?.kind).toBe("nul");
  });

  it("checks a container's keys before looking into its values", () => {
    expect(findInputProblem({ a: "\u0000", "\ud800": 1 })).toEqual({
      path: ["\ud800"],
      kind: "surrogate",
      message: "keys must not contain lone UTF-16 surrogates (not valid Unicode)",
    });
  });

  it("checks what JSON.parse gives, including __proto__ keys", () => {
    const parsed = JSON.parse('{"__proto__": {"x": "\\u0000"}}') as unknown;
    expect(findInputProblem(parsed)).toEqual({ path: ["__proto__", "x"], ...NUL });
    // Escaped lone surrogates in JSON text become lone surrogates in the parsed value.
    expect(findInputProblem(JSON.parse('{"k": ["\\ud800"]}'))).toEqual({ path: ["k", 0], ...SURROGATE });
  });
});

describe("describePath", () => {
  it("joins the root and the path with dots", () => {
    expect(describePath("metadata", ["a", 0, "b"])).toBe("metadata.a.0.b");
    expect(describePath("input", [])).toBe("input");
  });

  it("leaves out an empty root", () => {
    expect(describePath("", ["a", 1])).toBe("a.1");
    expect(describePath("", [])).toBe("");
  });

  it("escapes keys as JSON string contents, so bad characters show as escapes", () => {
    expect(describePath("metadata", ["bad\u0000key"])).toBe("metadata.bad\\u0000key");
    expect(describePath("m", ['q"uote', "back\\slash", "new\nline"])).toBe(
      'm.q\\"uote.back\\\\slash.new\\nline',
    );
    expect(describePath("m", ["\ud800"])).toBe("m.\\ud800");
  });

  it("keeps up to 8 parts, and shortens a longer path to its first 4 and last 2 parts", () => {
    expect(describePath("r", [1, 2, 3, 4, 5, 6, 7, 8])).toBe("r.1.2.3.4.5.6.7.8");
    expect(describePath("r", [1, 2, 3, 4, 5, 6, 7, 8, 9])).toBe("r.1.2.3.4.....8.9");
    expect(
      describePath(
        "input",
        Array.from({ length: 100 }, (_, i) => i),
      ),
    ).toBe("input.0.1.2.3.....98.99");
  });

  it("keeps an empty-string key as an empty part: only an empty root is left out", () => {
    expect(describePath("m", ["", "a"])).toBe("m..a");
    expect(describePath("body", ["metadata", ""])).toBe("body.metadata.");
    expect(describePath("", ["", "a"])).toBe(".a");
  });
});
