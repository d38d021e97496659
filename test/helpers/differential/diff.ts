// Compares two normalised transcripts (test/helpers/differential/) and sorts each difference into accepted (a
// kept difference with its reason), pending (a known Hangar defect being fixed) or unexpected; reports the
// entries of both lists that no longer match any difference.
import { ACCEPTED, PENDING, type Accepted, type Match, type Pending } from "./differences.ts";
import { eventName, segments } from "./normalise.ts";

/** One place where the two transcripts differ: `undefined` is absent on that side. */
export interface Difference {
  scenario: string;
  /** Segments joined with "/": the step's label, then keys and list indexes. */
  path: string;
  official: unknown;
  hangar: unknown;
}

/**
 * Every difference between two normalised transcripts, leaf by leaf (a subtree one side lacks is one). Lists are
 * compared item by item, but streams (lists of `{event, data}`, see `segments`) event by event after aligning the
 * two sequences of event names (their longest common subsequence): an event only one side sent is one
 * difference, and the events around it are still compared with their counterparts.
 */
export function diff(scenario: string, official: unknown, hangar: unknown): Difference[] {
  const out: Difference[] = [];
  const walk = (a: unknown, b: unknown, path: string[]) => {
    if (isObject(a) && isObject(b)) {
      for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort())
        walk(a[k], b[k], [...path, k]);
    } else if (Array.isArray(a) && Array.isArray(b)) {
      const [sa, sb] = [segments(a), segments(b)];
      // Event by event when both are streams (an empty list may be either); item by item otherwise.
      const events = (list: unknown[], seg: string[]) => list.length === 0 || seg[0] !== "0";
      if (events(a, sa) && events(b, sb)) {
        for (const [i, j] of align(a.map(eventName), b.map(eventName)))
          walk(i === undefined ? undefined : a[i], j === undefined ? undefined : b[j], [
            ...path,
            i === undefined ? sb[j!] : sa[i],
          ]);
      } else {
        for (let i = 0; i < Math.max(a.length, b.length); i++) walk(a[i], b[i], [...path, String(i)]);
      }
    } else if (JSON.stringify(a) !== JSON.stringify(b)) {
      out.push({ scenario, path: path.join("/"), official: a, hangar: b });
    }
  };
  walk(official, hangar, []);
  return out;
}

/**
 * Pairs the items of two sequences along their longest common subsequence: `[i, j]` for a pair, `[i, undefined]`
 * or `[undefined, j]` for an item of one side only, in order.
 */
function align(a: string[], b: string[]): [number | undefined, number | undefined][] {
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: [number | undefined, number | undefined][] = [];
  let [i, j] = [0, 0];
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) out.push([i++, j++]);
    else if (j === b.length || (i < a.length && lcs[i + 1][j] >= lcs[i][j + 1])) out.push([i++, undefined]);
    else out.push([undefined, j++]);
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Whether `path` matches `pattern`: segments by "/"; a segment `**` matches any number of segments; in a segment,
 * `*` matches any characters and `{a,b}` either alternative.
 */
export function matchPath(pattern: string, path: string): boolean {
  const p = pattern.split("/");
  const s = path.split("/");
  const go = (i: number, j: number): boolean => {
    if (i === p.length) return j === s.length;
    if (p[i] === "**") return go(i + 1, j) || (j < s.length && go(i, j + 1));
    return j < s.length && segment(p[i]).test(s[j]) && go(i + 1, j + 1);
  };
  return go(0, 0);
}

const segments_ = new Map<string, RegExp>();
function segment(glob: string): RegExp {
  let re = segments_.get(glob);
  if (!re) {
    const body = glob
      .replace(/[.+?^$()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\{([^}]*)\}/g, (_, alts: string) => `(?:${alts.split(",").join("|")})`);
    segments_.set(glob, (re = new RegExp(`^${body}$`)));
  }
  return re;
}

/** Whether a listed entry covers a difference. */
export function covers(entry: Match, d: Difference): boolean {
  if (entry.scenario !== "*" && entry.scenario !== d.scenario) return false;
  if (!matchPath(entry.path, d.path)) return false;
  if (entry.only === "hangar" && (d.official !== undefined || d.hangar === undefined)) return false;
  if (entry.only === "official" && (d.hangar !== undefined || d.official === undefined)) return false;
  if (entry.value === undefined) return true;
  return JSON.stringify(entry.only === "official" ? d.official : d.hangar) === JSON.stringify(entry.value);
}

export interface Verdict {
  accepted: { difference: Difference; entry: Accepted }[];
  pending: { difference: Difference; entry: Pending }[];
  unexpected: Difference[];
}

export interface Lists {
  accepted: readonly Accepted[];
  pending: readonly Pending[];
}

/** Sorts differences by the lists (the committed ones unless given): accepted first, then pending. */
export function judge(
  differences: Difference[],
  lists: Lists = { accepted: ACCEPTED, pending: PENDING },
): Verdict {
  const verdict: Verdict = { accepted: [], pending: [], unexpected: [] };
  for (const difference of differences) {
    const a = lists.accepted.find((e) => covers(e, difference));
    const p = a ? undefined : lists.pending.find((e) => covers(e, difference));
    if (a) verdict.accepted.push({ difference, entry: a });
    else if (p) verdict.pending.push({ difference, entry: p });
    else verdict.unexpected.push(difference);
  }
  return verdict;
}

/**
 * The entries, of those listed for `scenarios` (and, with `wildcards`, those for any scenario), that covered none
 * of the differences judged: stale, to be removed (or Hangar drifted back to the official behaviour).
 */
export function stale(
  verdicts: Verdict[],
  scenarios: string[],
  opts: { wildcards: boolean; lists?: Lists } = { wildcards: false },
): (Accepted | Pending)[] {
  const lists = opts.lists ?? { accepted: ACCEPTED, pending: PENDING };
  const used = new Set<Match>(verdicts.flatMap((v) => [...v.accepted, ...v.pending].map((x) => x.entry)));
  return [...lists.accepted, ...lists.pending].filter(
    (e) =>
      (e.scenario === "*" ? opts.wildcards : scenarios.includes(e.scenario)) &&
      !used.has(e) &&
      !e.intermittent,
  );
}

const show = (v: unknown) => {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
};

/** What a failing check prints: each unexpected difference, or each stale entry. */
export function explain(unexpected: Difference[], staleEntries: (Accepted | Pending)[] = []): string {
  const lines = unexpected.map(
    (d) =>
      `unexpected difference in ${d.scenario} at ${d.path}\n  official: ${show(d.official)}\n  hangar:   ${show(d.hangar)}`,
  );
  for (const e of staleEntries) {
    const kind = "reason" in e ? e.reason : `pending (${e.issue})`;
    const where =
      "reason" in e
        ? "test/helpers/differential/differences.ts and docs/behaviour.md"
        : "test/helpers/differential/differences.ts";
    lines.push(
      `listed difference no longer seen: ${e.scenario} ${e.path} (${kind}): remove it from ${where}`,
    );
  }
  return lines.join("\n");
}
