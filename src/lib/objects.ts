// The one check for "a JSON object" (not null, not an array), used wherever input is inspected by hand.

/** Whether `v` is an object with keys: not null, not an array. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
