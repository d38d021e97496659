// Limits every request's input must meet before any route sees it (both HTTP apps): JSON nesting depth, no NUL
// characters and no lone UTF-16 surrogates in any string or key (neither backend can store them faithfully).
import type { FastifyInstance, FastifyRequest } from "fastify";

/** The deepest nesting of objects and arrays a JSON body may have (the body itself is level 1). */
export const MAX_JSON_DEPTH = 100;

/** The longest delay a run may ask for (`after_seconds`): the longest timer Node can set, 2^31-1 ms (~24.8 days). */
export const MAX_AFTER_SECONDS = Math.floor((2 ** 31 - 1) / 1000);

/** What is wrong with an input, and where (object keys and array indexes from the input's root). */
export interface InputProblem {
  path: (string | number)[];
  kind: "depth" | "nul" | "surrogate";
  message: string;
}

// A NUL, a high surrogate not followed by a low one, or a low surrogate not preceded by a high one.
// eslint-disable-next-line no-control-regex -- NUL is what this looks for
const BAD_CHAR = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be accepted, or undefined when it can. */
export function stringProblem(s: string): Omit<InputProblem, "path"> | undefined {
  const m = BAD_CHAR.exec(s);
  if (!m) return undefined;
  return m[0] === "\u0000"
    ? { kind: "nul", message: "must not contain NUL (\\u0000) characters" }
    : { kind: "surrogate", message: "must not contain lone UTF-16 surrogates (not valid Unicode)" };
}

/**
 * The first problem of a parsed JSON value: nesting deeper than `maxDepth`, or a key or string with a NUL or a
 * lone surrogate. Walks without recursion, so any depth JSON.parse accepts is safe to check.
 */
export function findInputProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): InputProblem | undefined {
  // Each entry links to its parent: the path is built only for the problem found.
  interface Item {
    value: unknown;
    key: string | number | undefined;
    parent: Item | undefined;
    depth: number;
  }
  const pathOf = (item: Item | undefined): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let i = item; i && i.key !== undefined; i = i.parent) path.unshift(i.key);
    return path;
  };
  // Numbers, booleans and null cannot break a limit: they are not put on the stack.
  const walked = (x: unknown) => typeof x === "string" || (x !== null && typeof x === "object");
  const stack: Item[] = [{ value, key: undefined, parent: undefined, depth: 0 }];
  while (stack.length) {
    const item = stack.pop()!;
    const v = item.value;
    if (typeof v === "string") {
      const p = stringProblem(v);
      if (p) return { path: pathOf(item), ...p };
      continue;
    }
    if (v === null || typeof v !== "object") continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) {
      return {
        path: pathOf(item),
        kind: "depth",
        message: `nested deeper than the limit of ${maxDepth} levels`,
      };
    }
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) {
        if (walked(v[i])) stack.push({ value: v[i], key: i, parent: item, depth });
      }
      continue;
    }
    const keys = Object.keys(v);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const p = stringProblem(key);
      if (p) return { path: [...pathOf(item), key], message: `keys ${p.message}`, kind: p.kind };
      const x = (v as Record<string, unknown>)[key];
      if (walked(x)) stack.push({ value: x, key, parent: item, depth });
    }
  }
  return undefined;
}

/** A path for a message: `metadata.a.0`, shortened in the middle when very deep. */
export function describePath(root: string, path: (string | number)[]): string {
  const parts = path.map((p) => (typeof p === "string" ? JSON.stringify(p).slice(1, -1) : String(p)));
  const shown = parts.length > 8 ? [...parts.slice(0, 4), "...", ...parts.slice(-2)] : parts;
  // Only an empty root is left out: an empty key is a part of the path like any other.
  return (root ? [root, ...shown] : shown).join(".");
}

/** Where a request's input is: its body, its query string, or its path parameters. */
export type InputRoot = "body" | "query" | "path";

/** How an HTTP app answers bad input: its own error for malformed JSON, and for a problem of `findInputProblem`. */
export interface JsonInputErrors {
  /** `JSON.parse` failed on the body (`error` is its message). */
  malformed: (error: Error) => Error;
  /** A value breaks a limit; `value` is the offending one (the string at `problem.path`). */
  problem: (root: InputRoot, problem: InputProblem, value: unknown) => Error;
  /**
   * What an empty body stands for (undefined: no body): an empty JSON body, and a POST, PUT or PATCH sent with
   * no body and no Content-Type at all (`curl -X POST`, with or without `Content-Length: 0`).
   */
  emptyBody?: unknown;
}

/** The value at `path` in `root` (the string a problem names), or undefined. */
function valueAt(root: unknown, path: (string | number)[]): unknown {
  let v = root;
  for (const p of path)
    v = v !== null && typeof v === "object" ? (v as Record<string, unknown>)[p] : undefined;
  return v;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH"]);

/** The request has no body and says nothing of one (what Fastify then parses no body for; a JSON `null` has one). */
function hasNoBody(req: FastifyRequest): boolean {
  const h = req.headers;
  return (
    h["content-type"] === undefined &&
    h["transfer-encoding"] === undefined &&
    (h["content-length"] === undefined || h["content-length"] === "0")
  );
}

/**
 * Installs on a Fastify app the JSON body parser and the query/path check both HTTP apps share: malformed JSON,
 * nesting deeper than MAX_JSON_DEPTH, and NUL or lone-surrogate strings or keys anywhere are refused before any
 * route sees them, each app answering with its own error shapes.
 */
export function installJsonLimits(app: FastifyInstance, errors: JsonInputErrors): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = (body as string).trim();
    if (!text) return done(null, structuredClone(errors.emptyBody));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      return done(errors.malformed(e as Error), undefined);
    }
    const problem = findInputProblem(parsed);
    if (problem) return done(errors.problem("body", problem, valueAt(parsed, problem.path)), undefined);
    done(null, parsed);
  });
  const { emptyBody } = errors;
  if (emptyBody !== undefined) {
    // A request with no Content-Type and no body never reaches a parser: its body is null until set here.
    app.addHook("preValidation", async (req) => {
      if (req.body == null && BODY_METHODS.has(req.method) && hasNoBody(req))
        req.body = structuredClone(emptyBody);
    });
  }
  app.addHook("preValidation", async (req) => {
    for (const [root, values] of [
      ["query", req.query],
      ["path", req.params],
    ] as const) {
      const problem = findInputProblem(values);
      if (problem) throw errors.problem(root, problem, valueAt(values, problem.path));
    }
  });
}
