// Normalises the two transcripts of a differential scenario (test/helpers/differential/): values are masked by
// their field name only (MASKED, the one list of masked fields), ids consistently (the same id gets the same
// placeholder everywhere in a transcript, so which value refers to which is still compared), object keys sorted,
// the members of JSON Schema unions (`anyOf`, `oneOf`) sorted (UNORDERED), and the TypeScript checker's symbol ids
// in schema property names masked (SYMBOL).

/**
 * How the value of a masked field is replaced:
 * - `id`: a string (or each string of a list) is an id, replaced whole by a placeholder; any other value (a JSON
 *   Schema's `id` property, say) is compared as usual;
 * - `id-map`: an object whose keys name namespaces and whose values are ids (`checkpoint_map`, `parents`);
 * - `id-keys`: an object keyed by ids (a thread's `interrupts`, by task id): the keys' UUIDs are replaced, the
 *   values compared as usual;
 * - `ids-in`: only the UUIDs in a string are replaced, the rest compared (`updates|research:<id:…>`);
 * - `time`: a timestamp, replaced by `<time>` (null stays null);
 * - `value`: a value that differs between any two servers by nature (a version, a URL with its port), replaced by
 *   `<value>` (null stays null, so its presence is still compared).
 */
export type Mask = "id" | "id-map" | "id-keys" | "ids-in" | "time" | "value";

/** Every masked field name, and how. Any field not named here is compared as it is. */
export const MASKED: Readonly<Record<string, Mask>> = {
  // Ids the servers, LangGraph or LangChain mint.
  assistant_id: "id",
  thread_id: "id",
  run_id: "id",
  cron_id: "id",
  checkpoint_id: "id",
  parent_checkpoint_id: "id",
  parent_id: "id",
  parent_ids: "id",
  id: "id",
  task_id: "id",
  langgraph_request_id: "id",
  checkpoint_map: "id-map",
  parents: "id-map",
  interrupts: "id-keys",
  interrupt_id: "id",
  subscription_id: "id",
  // A nonce the scenarios put in metadata to find their own threads and assistants on a shared server.
  scenario_run: "id",
  // Strings naming ids within a structure: namespaces (`research:<task id>`), SSE event names, store namespaces.
  checkpoint_ns: "ids-in",
  langgraph_checkpoint_ns: "ids-in",
  event: "ids-in",
  namespace: "ids-in",
  namespaces: "ids-in",
  // Timestamps (store items as the SDK gives them: createdAt, updatedAt).
  created_at: "time",
  updated_at: "time",
  state_updated_at: "time",
  createdAt: "time",
  updatedAt: "time",
  ts: "time",
  timestamp: "time",
  expires_at: "time",
  next_run_date: "time",
  // Values that differ between any two servers by nature.
  langgraph_version: "value",
  langgraph_api_version: "value",
  langgraph_api_url: "value",
  // The directory of the gate graph's gates (test/fixtures/differential/src/gate.ts): each session's own.
  gate_dir: "value",
};

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const UUID_ONLY = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A property keyed by a symbol as the TypeScript checker names it in a schema, `__@toStringTag@238`: the number is
 * the checker's id of the symbol, which depends on what the compiler loaded before (as the order of unions does).
 * The id is masked, `__@toStringTag@<id>`, in keys and in strings that are such a name (a `required` list), the
 * symbol's name still compared.
 */
const SYMBOL = /^(__@[^@]+@)\d+$/;
const symbolName = (s: string) => s.replace(SYMBOL, "$1<id>");

/**
 * JSON Schema keywords whose list is a set: `anyOf` and `oneOf` validate the same whatever their members' order, as
 * an object's keys mean the same whatever theirs. Their members are sorted by their canonical JSON (keys sorted,
 * UUIDs left out), like keys are, and then compared member by member as usual: a member one side lacks or has
 * otherwise is still a difference. (The TypeScript checker behind both servers' schemas orders a union by its
 * type ids, which depend on what it loaded before.) `allOf` is a set too but no schema here has one; `enum`,
 * `required` and `type` lists are compared in order.
 */
const UNORDERED = new Set(["anyOf", "oneOf"]);

/**
 * A value with object keys sorted, UUIDs blanked and unions' members (at any depth) ordered: its JSON is the key by
 * which a union's members are ordered, so two unions that differ only in their members' order get the same key.
 */
function canonical(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(canonical);
  if (typeof x === "string") return symbolName(x).replace(UUID, "");
  if (!x || typeof x !== "object") return x;
  return Object.fromEntries(
    sorted(x).map(([k, y]) => {
      const c = canonical(y);
      return [symbolName(k).replace(UUID, ""), UNORDERED.has(k) && Array.isArray(c) ? byJson(c) : c];
    }),
  );
}

/** A list sorted by its members' JSON. */
function byJson<T>(list: T[], key: (x: T) => unknown = (x) => x): T[] {
  const keyed = list.map((x) => [JSON.stringify(key(x)) ?? "", x] as const);
  keyed.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return keyed.map(([, x]) => x);
}

/** A JSON Schema union's members in canonical order (see UNORDERED). */
const unordered = (list: unknown[]): unknown[] => byJson(list, canonical);

/** Where each id occurs in a transcript, in traversal order (a path may hold several: `#1`, `#2`). */
type Occurrences = Map<string, string[]>;

/** Calls `seen(id, path)` for every id of a transcript, in order, and returns it with each id replaced. */
function visit(transcript: unknown, seen: (id: string, path: string) => string): unknown {
  const idsIn = (s: string, path: string[]) => {
    let n = 0;
    return s.replace(UUID, (m) => seen(m.toLowerCase(), `${path.join("/")}#${++n}`));
  };
  const whole = (s: string, path: string[]) =>
    s === "" ? s : seen(UUID_ONLY.test(s) ? s.toLowerCase() : s, path.join("/"));
  /** The value of a masked field. */
  const masked = (v: unknown, mask: Mask, path: string[]): unknown => {
    switch (mask) {
      case "time":
        return "<time>";
      case "value":
        return "<value>";
      case "ids-in":
        if (typeof v === "string") return idsIn(v, path);
        if (Array.isArray(v)) return v.map((x, i) => masked(x, mask, [...path, String(i)]));
        return walk(v, path);
      case "id":
        if (typeof v === "string") return whole(v, path);
        if (Array.isArray(v))
          return v.map((x, i) =>
            typeof x === "string" ? whole(x, [...path, String(i)]) : walk(x, [...path, String(i)]),
          );
        return walk(v, path);
      case "id-map":
      case "id-keys":
        if (!v || typeof v !== "object" || Array.isArray(v)) return walk(v, path);
        return Object.fromEntries(
          sorted(v).map(([k, x]) => {
            const at = [...path, k.replace(UUID, "*")];
            const key = idsIn(k, [...at, "(key)"]);
            if (mask === "id-keys") return [key, walk(x, at)];
            return [key, typeof x === "string" ? whole(x, at) : walk(x, at)];
          }),
        );
    }
  };
  const walk = (v: unknown, path: string[]): unknown => {
    if (Array.isArray(v)) {
      const seg = segments(v);
      return v.map((x, i) => walk(x, [...path, seg[i]]));
    }
    if (v && typeof v === "object") {
      // The top level (a transcript's steps) keeps its order: the order the scenario ran them in.
      const entries = path.length === 0 ? Object.entries(v) : sorted(v);
      return Object.fromEntries(
        entries
          .filter(([, x]) => x !== undefined)
          .map(([k, x]) => {
            const mask = Object.hasOwn(MASKED, k) ? MASKED[k] : undefined;
            if (mask && x !== null) return [k, masked(x, mask, [...path, k])];
            const key = symbolName(k);
            return [key, walk(UNORDERED.has(k) && Array.isArray(x) ? unordered(x) : x, [...path, key])];
          }),
      );
    }
    return typeof v === "string" ? symbolName(v) : v;
  };
  return walk(transcript, []);
}

function occurrences(transcript: unknown): Occurrences {
  const found: Occurrences = new Map();
  visit(transcript, (id, path) => {
    const list = found.get(id) ?? [];
    if (!found.has(id)) found.set(id, list);
    list.push(path);
    return id;
  });
  return found;
}

/**
 * Masks the two transcripts of one scenario. An id's placeholder names a place where it occurs,
 * `<id:create.thread_id>` (dots for the slashes that separate a difference's path segments): the first of its
 * places that also holds an id in the other transcript, else its first place. So the two sides name their ids
 * alike where they agree, and a field one side has and the other lacks renames nothing after it.
 */
export function normalisePair(official: unknown, hangar: unknown): { official: unknown; hangar: unknown } {
  const occ = [occurrences(official), occurrences(hangar)];
  const places = occ.map((o) => new Set([...o.values()].flat()));
  const mask = (transcript: unknown, side: 0 | 1) => {
    const names = new Map<string, string>();
    for (const [id, paths] of occ[side]) {
      const shared = paths.find((p) => places[1 - side].has(p)) ?? paths[0];
      names.set(id, `<id:${shared.replaceAll("/", ".").replaceAll("<id>", "*")}>`);
    }
    return visit(transcript, (id) => names.get(id)!);
  };
  return { official: mask(official, 0), hangar: mask(hangar, 1) };
}

/**
 * The path segment of each item of a list: its index, but in a stream (a list of `{event, data}`) the event's name
 * (UUIDs as `<id>`) and its rank among the events of that name, `values|research:<id>#0`, so an event one server
 * sends and the other does not leaves the paths of the others as they are.
 */
export function segments(list: unknown[]): string[] {
  const isEvent = (x: unknown) =>
    !!x && typeof x === "object" && typeof (x as { event?: unknown }).event === "string";
  if (list.length === 0 || !list.every(isEvent)) return list.map((_, i) => String(i));
  const rank = new Map<string, number>();
  return list.map((x) => {
    const name = eventName(x);
    const n = rank.get(name) ?? 0;
    rank.set(name, n + 1);
    return `${name}#${n}`;
  });
}

/** A stream event's name, its ids (raw, or masked already) as `<id>`. */
export const eventName = (x: unknown): string =>
  (x as { event: string }).event
    .replace(UUID, "<id>")
    .replace(/<id:[^>]*>/g, "<id>")
    .replaceAll("/", ".");

/**
 * An object's entries sorted by key, a key's UUIDs left out of the comparison (they differ between the two
 * servers), so both sides meet their ids in the same order.
 */
function sorted(o: object): [string, unknown][] {
  const plain = (k: string) => k.replace(UUID, "");
  return Object.entries(o).sort(([a], [b]) => {
    const [pa, pb] = [plain(a), plain(b)];
    return pa < pb ? -1 : pa > pb ? 1 : 0;
  });
}
