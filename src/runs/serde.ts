// JSON serialization of graph values for the wire and for storage: LangChain messages become plain dicts.
function replacer(this: any, key: string, value: unknown): unknown {
  const raw = this[key];
  if (raw != null && typeof raw === "object" && typeof raw.toDict === "function") {
    const { type, data } = raw.toDict();
    return { ...data, type };
  }
  if (typeof value === "bigint") return value.toString();
  return value;
}

/** JSON text of a value, with messages as `{type, content, ...}` dicts like the official server sends. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, replacer) ?? "null";
}

/** A plain JSON-safe copy of a value (messages as dicts). */
export function toPlain<T = unknown>(value: unknown): T {
  return JSON.parse(toJson(value)) as T;
}

export function serializeError(error: unknown): { error: string; message: string } {
  if (error instanceof Error) return { error: error.name, message: error.message };
  return { error: "Error", message: typeof error === "string" ? error : JSON.stringify(error) };
}
