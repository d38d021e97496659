// JSON serialization of graph values for the wire and for storage: LangChain messages become plain dicts.

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Replaces objects that have `toDict()` (LangChain messages) with `{...data, type}`, also inside what an object's
 * `toJSON()` gives (a Command's update), copying only the containers on the path to a replaced value. Done before
 * JSON.stringify because stringify would otherwise call each message's (costly) `toJSON()` first.
 */
function prepare(v: unknown, depth = 0): unknown {
  if (v === null || typeof v !== "object") return typeof v === "bigint" ? v.toString() : v;
  if (depth > 200) return v;
  const o = v as Record<string, any>;
  if (typeof o.toDict === "function") {
    const { type, data } = o.toDict();
    return prepare({ ...data, type }, depth + 1);
  }
  if (Array.isArray(v)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < v.length; i++) {
      const p = prepare(v[i], depth + 1);
      if (p !== v[i]) (out ??= v.slice())[i] = p;
    }
    return out ?? v;
  }
  if (!isPlainObject(v)) {
    // As JSON.stringify would, its toJSON() first (LangGraph's Command and Send give their fields), then the
    // messages in what it gave (they would otherwise be LangChain's constructor form, not dicts).
    if (typeof o.toJSON !== "function") return v;
    const json = o.toJSON();
    return json === v || json === null || typeof json !== "object" ? v : prepare(json, depth + 1);
  }
  let out: Record<string, unknown> | undefined;
  for (const k in o) {
    const p = prepare(o[k], depth + 1);
    if (p !== o[k]) (out ??= { ...o })[k] = p;
  }
  return out ?? v;
}

/** JSON text of a value, with messages as `{type, content, ...}` dicts like the official server sends. */
export function toJson(value: unknown): string {
  return JSON.stringify(prepare(value)) ?? "null";
}

/**
 * A value already serialized by toJson: an event's data from a graph thread, published as it is; a cached thread
 * state or history, which the reply serializer sends as it is.
 */
export class RawJson {
  constructor(readonly json: string) {}
}

/** A JSON-safe copy of a value (messages as dicts). */
export function toPlain<T = unknown>(value: unknown): T {
  return JSON.parse(toJson(value)) as T;
}

export function serializeError(error: unknown): { error: string; message: string } {
  if (error instanceof Error) return { error: error.name, message: error.message };
  return { error: "Error", message: typeof error === "string" ? error : JSON.stringify(error) };
}
