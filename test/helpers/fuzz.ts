// Bounded, seeded fuzzing of an HTTP API described by OpenAPI documents (test/security/fuzz.test.ts): the
// operations to walk, hostile values, raw requests (lying Content-Length, latin1 headers), and the checks.
import { request } from "node:http";

/** A deterministic PRNG (mulberry32): the same seed walks the same requests. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` distinct items of `list`, picked by `rand` (all of it when shorter). */
export function pick<T>(rand: () => number, list: readonly T[], count: number): T[] {
  const pool = [...list];
  const out: T[] = [];
  while (out.length < count && pool.length) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  return out;
}

export interface Operation {
  method: string;
  /** The path template, e.g. /threads/{thread_id}. */
  path: string;
  /** Names of its query parameters. */
  query: string[];
  /** Top-level fields of its JSON body (of the items, for a body that is an array); undefined: no body. */
  bodyFields?: string[];
  bodyIsArray?: boolean;
  /** Fields of object-valued body fields (or of their list items): `ttl.ttl`, `secrets[].value`. */
  subFields?: SubField[];
}

export interface SubField {
  field: string;
  sub: string;
  /** The field is a list of such objects. */
  list: boolean;
}

type Doc = {
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, any> };
};

function resolve(doc: Doc, schema: any, seen = 0): any {
  if (!schema || seen > 10) return schema;
  if (schema.$ref) return resolve(doc, doc.components?.schemas?.[schema.$ref.split("/").pop()], seen + 1);
  return schema;
}

/** Property names of an object schema, through $ref, allOf and anyOf/oneOf branches. */
function fieldsOf(doc: Doc, schema: any, seen = 0): string[] {
  const s = resolve(doc, schema);
  if (!s || seen > 5) return [];
  const out = new Set<string>(Object.keys(s.properties ?? {}));
  for (const sub of [...(s.allOf ?? []), ...(s.anyOf ?? []), ...(s.oneOf ?? [])]) {
    for (const f of fieldsOf(doc, sub, seen + 1)) out.add(f);
  }
  return [...out];
}

/** The object schemas a property may hold (through anyOf/oneOf), with whether it holds a list of them. */
function objectShapes(doc: Doc, schema: any): { fields: string[]; list: boolean }[] {
  const s = resolve(doc, schema);
  if (!s) return [];
  const out: { fields: string[]; list: boolean }[] = [];
  for (const branch of [s, ...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])].map((b) =>
    resolve(doc, b),
  )) {
    if (!branch) continue;
    if (branch.properties) out.push({ fields: Object.keys(branch.properties), list: false });
    if (branch.type === "array" && branch.items) {
      const fields = fieldsOf(doc, branch.items);
      if (fields.length) out.push({ fields, list: true });
    }
  }
  return out;
}

/** Sub-fields of an object schema's properties. */
function subFieldsOf(doc: Doc, schema: any): SubField[] {
  const s = resolve(doc, schema);
  const out: SubField[] = [];
  const props: Record<string, any> = {};
  for (const b of [s, ...(s?.allOf ?? []), ...(s?.anyOf ?? []), ...(s?.oneOf ?? [])].map((x) =>
    resolve(doc, x),
  )) {
    Object.assign(props, b?.properties ?? {});
  }
  for (const [field, prop] of Object.entries(props)) {
    for (const shape of objectShapes(doc, prop)) {
      for (const sub of shape.fields) out.push({ field, sub, list: shape.list });
    }
  }
  return out;
}

/** Every operation of the documents (merged by method and path), but the excluded paths. */
export function operationsOf(docs: Doc[], excluded: RegExp[] = []): Operation[] {
  const ops = new Map<string, Operation>();
  for (const doc of docs) {
    for (const [rawPath, item] of Object.entries(doc.paths)) {
      // Fastify's documents write parameters as {name} too; a trailing slash is the same route.
      const path = rawPath.length > 1 ? rawPath.replace(/\/$/, "") : rawPath;
      if (excluded.some((r) => r.test(path))) continue;
      for (const [method, op] of Object.entries(item)) {
        if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
        const key = `${method.toUpperCase()} ${path}`;
        const params = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) =>
          resolve(doc, p),
        );
        const query = params.filter((p: any) => p?.in === "query").map((p: any) => p.name as string);
        const schema = resolve(doc, op.requestBody?.content?.["application/json"]?.schema);
        const isArray = schema?.type === "array";
        const fields = schema ? fieldsOf(doc, isArray ? schema.items : schema) : undefined;
        const subFields = schema ? subFieldsOf(doc, isArray ? schema.items : schema) : [];
        const prev = ops.get(key);
        const seen = new Set((prev?.subFields ?? []).map((f) => `${f.field}.${f.sub}`));
        ops.set(key, {
          method: method.toUpperCase(),
          path,
          query: [...new Set([...(prev?.query ?? []), ...query])],
          bodyFields:
            fields || prev?.bodyFields
              ? [...new Set([...(prev?.bodyFields ?? []), ...(fields ?? [])])]
              : undefined,
          bodyIsArray: prev?.bodyIsArray || isArray,
          subFields: [
            ...(prev?.subFields ?? []),
            ...subFields.filter((f) => !seen.has(`${f.field}.${f.sub}`)),
          ],
        });
      }
    }
  }
  return [...ops.values()];
}

/** A value nested `n` levels deep: {"a":{"a":...}} or [[...]]. */
export const deepJson = (n: number, kind: "object" | "array" = "object"): string =>
  kind === "object" ? '{"a":'.repeat(n) + "1" + "}".repeat(n) : "[".repeat(n) + "]".repeat(n);

/** A marker JSON.stringify output is spliced with: the raw JSON text of a value too deep to build. */
export class RawValue {
  constructor(public json: string) {}
}

/** Serialises a body, writing RawValue members as their raw text. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (v instanceof RawValue) {
      raws.push(v.json);
      return `\u0001RAW${raws.length - 1}\u0001`;
    }
    return v;
  });
  // JSON.stringify escapes \u0001 as \\u0001.
  return text.replace(/"\\u0001RAW(\d+)\\u0001"/g, (_m, i) => raws[Number(i)]);
}

/** Hostile values for body fields: wrong types, extremes, NULs, lone surrogates, deep nesting. */
export const HOSTILE_VALUES: unknown[] = [
  5,
  -1,
  1e308,
  -1e308,
  0.5,
  2 ** 63,
  true,
  null,
  "",
  "\u0000",
  "a\u0000b",
  "x\ud800",
  "\udfffy",
  "x".repeat(100_000),
  "../../../../etc/passwd",
  "' OR 1=1 --",
  "2026-13-45T99:99:99Z",
  "* * * * * * * *",
  [],
  [null],
  ["\u0000"],
  [5, "x", {}],
  {},
  { "\u0000": 1 },
  { "a\ud800": 1 },
  { a: "\u0000" },
  { $where: "1", "a.b": { $gt: 0 } },
  new RawValue(deepJson(10_000)),
  new RawValue(deepJson(10_000, "array")),
  new RawValue(deepJson(101)),
];

/** The hostile values every body field gets (beside some picked from HOSTILE_VALUES). */
export const CORE_VALUES: unknown[] = [
  "a\u0000b",
  "x\ud800",
  "x".repeat(100_000),
  new RawValue(deepJson(10_000)),
  1e308,
];

/** Hostile raw bodies: malformed JSON, wrong top-level types, NUL escapes, invalid UTF-8. */
export const MALFORMED_BODIES: (string | Buffer)[] = [
  "{",
  '{"a":}',
  "[1,]",
  "nul",
  "{}garbage",
  '{"a":1,"a":',
  "1e99999",
  '"\\ud800"',
  '{"x":"\\u0000"}',
  '{"\\u0000":1}',
  "[]",
  '"string"',
  "5",
  "null",
  "true",
  "[".repeat(100_000),
  deepJson(10_000),
  deepJson(100_000, "array"),
  Buffer.from([0xff, 0xfe, 0x7b, 0x7d]),
  Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
  Buffer.from([0x00, 0x00, 0x00]),
];

/** Hostile path segments and query values, already percent-encoded (some deliberately invalid). */
export const HOSTILE_SEGMENTS: string[] = [
  "%00",
  "a%00b",
  "%ED%A0%80",
  "%ED%BF%BF",
  "%ZZ",
  "%E0",
  "%C0%80",
  "x".repeat(3000),
  "..%2F..%2Fetc%2Fpasswd",
  "-1",
  "1e308",
  "00000000-0000-0000-0000-000000000000",
  "ffffffff-ffff-ffff-ffff-ffffffffffff",
  "%F0%9F%98%80",
  "%27%20OR%201%3D1",
  "",
];

/** Hostile header values (latin1: what HTTP can carry; NUL cannot be sent in a header at all). */
export const HOSTILE_HEADERS: string[] = [
  "-1",
  "abc",
  "\xed\xa0\x80",
  "\xff\xfe",
  "99999999999999999999999999",
  "1-2-3",
  "00000000-0000-0000-0000-000000000000",
  "x".repeat(4000),
  "../..",
  "",
];

export interface RawResponse {
  status: number;
  contentType: string;
  body: string;
}

export interface RawRequest {
  method: string;
  /** Path and query, already encoded. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Declare this Content-Length but send only the first bytes of `body` (an oversized body, cheaply). */
  declaredLength?: number;
  /** Send `body` chunked, with no Content-Length (a server learns its size only by reading it). */
  chunked?: boolean;
}

/**
 * One request through node:http (which lets a test send latin1 header bytes and invalid percent-encoding).
 * Event streams are not read: their status and content type are all a fuzz check needs. An oversized body may
 * be cut off by the server's answer: a write error after the answer arrived is not a failure.
 */
export function rawRequest(base: string, r: RawRequest): Promise<RawResponse> {
  const url = new URL(base);
  const oversized = r.declaredLength !== undefined || r.chunked === true;
  return new Promise((resolvePromise, reject) => {
    let settled = false;
    let failure: Error | undefined;
    const done = (res: RawResponse) => {
      settled = true;
      resolvePromise(res);
    };
    const body = typeof r.body === "string" ? Buffer.from(r.body, "utf8") : r.body;
    const headers: Record<string, string | number> = { connection: "close", ...(r.headers ?? {}) };
    if (body && !("content-type" in headers)) headers["content-type"] = "application/json";
    if (r.declaredLength !== undefined) headers["content-length"] = r.declaredLength;
    else if (body && !r.chunked) headers["content-length"] = body.length;
    const req = request(
      { host: url.hostname, port: url.port, method: r.method, path: r.path, headers },
      (res) => {
        const contentType = String(res.headers["content-type"] ?? "");
        if (contentType.startsWith("text/event-stream")) {
          done({ status: res.statusCode ?? 0, contentType, body: "" });
          req.destroy();
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          done({ status: res.statusCode ?? 0, contentType, body: Buffer.concat(chunks).toString("utf8") });
          if (oversized) req.destroy();
        });
        res.on("error", (e) => (failure ??= e));
      },
    );
    req.on("error", (e) => (failure ??= e));
    req.on("close", () => {
      if (!settled) reject(failure ?? new Error("connection closed without an answer"));
    });
    if (!body) return void req.end();
    if (r.declaredLength !== undefined) return void req.write(body.subarray(0, 64 * 1024));
    if (!oversized) return void req.end(body);
    // Chunked: write in pieces, stop once the server has answered or the connection is gone.
    let offset = 0;
    const CHUNK = 1024 * 1024;
    const next = () => {
      while (!settled && !req.destroyed && offset < body.length) {
        const ok = req.write(body.subarray(offset, offset + CHUNK));
        offset += CHUNK;
        if (!ok) return void req.once("drain", next);
      }
      if (!settled && !req.destroyed) req.end();
    };
    next();
  });
}

/** What is wrong with an answer to hostile input: a 5xx, or an error whose body is not JSON `{detail}`. */
export function answerProblem(res: RawResponse, opts: { jsonRpc?: boolean } = {}): string | undefined {
  if (res.status >= 500) return `${res.status} ${res.body.slice(0, 300)}`;
  if (res.status < 400) return undefined;
  if (!res.contentType.includes("application/json"))
    return `${res.status} with ${res.contentType || "no"} body`;
  try {
    const parsed = JSON.parse(res.body);
    // A JSON-RPC endpoint (MCP, A2A) answers errors as JSON-RPC errors; the API's routes as {detail}.
    const rpcError = opts.jsonRpc && typeof parsed?.error?.code === "number";
    if (parsed === null || typeof parsed !== "object" || !("detail" in parsed || rpcError))
      return `${res.status} ${res.body}`;
  } catch {
    return `${res.status} non-JSON body ${res.body.slice(0, 200)}`;
  }
  return undefined;
}
