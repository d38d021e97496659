// The differential harness itself (test/helpers/differential/), on transcripts made up here: masking by field name
// only, consistent id placeholders, sorted keys, streams aligned by event, the lists' judgement, and that
// docs/behaviour.md lists the accepted differences exactly as differences.ts has them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { diff, judge, matchPath, stale } from "../helpers/differential/diff.ts";
import { ACCEPTED, PENDING, type Accepted, type Pending } from "../helpers/differential/differences.ts";
import { acceptedSection, sectionOf } from "../helpers/differential/docs.ts";
import { MASKED, normalisePair } from "../helpers/differential/normalise.ts";
import { compare } from "../helpers/differential/run.ts";
import { ROOT } from "../helpers/server.ts";

const A = "11111111-1111-4111-8111-111111111111";
const B = "22222222-2222-4222-8222-222222222222";
const C = "33333333-3333-4333-8333-333333333333";
const D = "44444444-4444-4444-8444-444444444444";

describe("normalising", () => {
  it("masks values by field name only, and sorts keys", () => {
    const { official } = normalisePair(
      {
        step: {
          thread_id: A,
          created_at: "2026-01-01T00:00:00Z",
          note: A,
          at: "2026-01-01T00:00:00Z",
          z: 1,
          a: 2,
        },
      },
      {},
    );
    expect(official).toEqual({
      step: {
        a: 2,
        at: "2026-01-01T00:00:00Z",
        created_at: "<time>",
        note: A,
        thread_id: "<id:step.thread_id>",
        z: 1,
      },
    });
    expect(Object.keys((official as { step: object }).step)).toEqual([
      "a",
      "at",
      "created_at",
      "note",
      "thread_id",
      "z",
    ]);
  });

  it("gives the same id the same placeholder, so references are compared", () => {
    const transcript = (thread: string, other: string) => ({
      create: { thread_id: thread },
      run: { thread_id: thread, metadata: { thread_id: other } },
    });
    // Both sides refer to the thread they created: no difference, whatever the ids.
    expect(compare("s", transcript(A, A), transcript(B, B))).toEqual([]);
    // One side refers to another thread: the reference differs.
    const [d] = compare("s", transcript(A, A), transcript(B, C));
    expect(d).toMatchObject({
      path: "run/metadata/thread_id",
      official: "<id:create.thread_id>",
      hangar: "<id:run.metadata.thread_id>",
    });
  });

  it("names an id by a place both sides have, so a field one side lacks renames nothing", () => {
    const official = { a: { id: A }, b: { thread_id: A } };
    const hangar = { a: { extra_id: "x", id: B, checkpoint_id: D }, b: { thread_id: B } };
    expect(compare("s", official, hangar).map((d) => d.path)).toEqual(["a/checkpoint_id", "a/extra_id"]);
  });

  it("masks the ids inside namespaces, event names and id maps, the same id alike", () => {
    const { official } = normalisePair(
      {
        s: [
          {
            event: `updates|research:${A}`,
            data: { checkpoint_ns: `research:${A}`, checkpoint_map: { [`research:${A}`]: C } },
          },
        ],
      },
      {},
    );
    const [event] = (official as { s: { event: string; data: Record<string, Record<string, string>> }[] }).s;
    const task = /^updates\|research:(<id:[^>]*>)$/.exec(event.event)![1];
    expect(event.data.checkpoint_ns).toBe(`research:${task}`);
    const [[key, value]] = Object.entries(event.data.checkpoint_map);
    expect(key).toBe(`research:${task}`);
    expect(value).toMatch(/^<id:/);
    expect(value).not.toBe(task);
    expect(JSON.stringify(official)).not.toMatch(/1111|3333/);
  });

  it("keeps an `id` that is not a string (a JSON Schema property) as it is", () => {
    const { official } = normalisePair({ s: { properties: { id: { type: "string" } } } }, {});
    expect(official).toEqual({ s: { properties: { id: { type: "string" } } } });
  });

  it("compares JSON Schema unions whatever their members' order, and still reports a member that differs", () => {
    const schema = (members: unknown[]) => ({
      schemas: { definitions: { ContentBlock: { anyOf: members, description: "a block" } } },
    });
    const text = { type: "object", properties: { type: { const: "text" }, text: { type: "string" } } };
    const image = { properties: { type: { const: "image" }, url: { type: "string" } }, type: "object" };
    const nested = { oneOf: [{ type: "string" }, { type: "number" }] };
    const nestedSwapped = { oneOf: [{ type: "number" }, { type: "string" }] };
    // The same members in another order, nested unions too: no difference.
    expect(compare("s", schema([text, image, nested]), schema([nestedSwapped, image, text]))).toEqual([]);
    // A member that differs inside is reported, at its place in the ordered union.
    const imageWithoutUrl = { type: "object", properties: { type: { const: "image" } } };
    const found = compare("s", schema([text, image]), schema([imageWithoutUrl, text]));
    expect(found).toEqual([
      expect.objectContaining({
        path: "schemas/definitions/ContentBlock/anyOf/1/properties/url",
        official: { type: "string" },
        hangar: undefined,
      }),
    ]);
    // A member one side lacks is reported.
    expect(compare("s", schema([text, image]), schema([text])).length).toBeGreaterThan(0);
    // Other lists keep their order.
    expect(compare("s", { s: { enum: ["a", "b"] } }, { s: { enum: ["b", "a"] } }).length).toBe(2);
  });

  it("masks the TypeScript checker's symbol ids in schema property names, and compares the symbols' names", () => {
    const removeMessage = (key: string) => ({
      s: {
        definitions: {
          RemoveMessage: { properties: { [key]: {}, id: { type: "string" } }, required: [key] },
        },
      },
    });
    expect(compare("s", removeMessage("__@toStringTag@238"), removeMessage("__@toStringTag@868"))).toEqual(
      [],
    );
    const other = compare("s", removeMessage("__@toStringTag@238"), removeMessage("__@iterator@238"));
    expect(other.map((d) => d.path).sort()).toEqual([
      "s/definitions/RemoveMessage/properties/__@iterator@<id>",
      "s/definitions/RemoveMessage/properties/__@toStringTag@<id>",
      "s/definitions/RemoveMessage/required/0",
    ]);
  });

  it("lists every masked field with a known mask", () => {
    for (const mask of Object.values(MASKED))
      expect(["id", "id-map", "id-keys", "ids-in", "time", "value"]).toContain(mask);
  });
});

describe("comparing", () => {
  it("aligns streams by event: one extra event is one difference", () => {
    const ev = (event: string, n: number) => ({ event, data: { n } });
    const official = { s: [ev("metadata", 0), ev("values", 1), ev("values", 2)] };
    const hangar = { s: [ev("metadata", 0), ev("checkpoints", 9), ev("values", 1), ev("values", 2)] };
    expect(diff("s", official, hangar)).toEqual([
      { scenario: "s", path: "s/checkpoints#0", official: undefined, hangar: ev("checkpoints", 9) },
    ]);
  });

  it("compares an empty list with a list of records item by item, and a stream with an empty one event by event", () => {
    const ev = (event: string, n: number) => ({ event, data: { n } });
    expect(diff("s", { runs: [] }, { runs: [{ status: "interrupted" }] })).toEqual([
      { scenario: "s", path: "runs/0", official: undefined, hangar: { status: "interrupted" } },
    ]);
    expect(diff("s", { runs: [{ status: "success" }] }, { runs: [] })).toEqual([
      { scenario: "s", path: "runs/0", official: { status: "success" }, hangar: undefined },
    ]);
    expect(diff("s", { s: [ev("values", 1)] }, { s: [] })).toEqual([
      { scenario: "s", path: "s/values#0", official: ev("values", 1), hangar: undefined },
    ]);
  });

  it("matches path patterns segment by segment", () => {
    expect(matchPath("**/error/body", "a b/error/body")).toBe(true);
    expect(matchPath("**/error/body", "a/0/error/body")).toBe(true);
    expect(matchPath("x/*/y", "x/1/2/y")).toBe(false);
    expect(matchPath("versions*/*/updated_at", "versions by metadata/0/updated_at")).toBe(true);
    expect(matchPath("**/{a,b}", "x/b")).toBe(true);
    expect(matchPath("**/{a,b}", "x/c")).toBe(false);
  });

  it("sorts differences into accepted, pending and unexpected, and finds stale entries", () => {
    const accepted: Accepted[] = [
      { scenario: "*", path: "**/extra", only: "hangar", reason: "production-server", why: "x" },
      { scenario: "s", path: "never", reason: "dev-server-defect", why: "x" },
      { scenario: "s", path: "sometimes", intermittent: true, reason: "dev-server-defect", why: "x" },
    ];
    const pending: Pending[] = [{ scenario: "s", path: "a/value", issue: "a", why: "x" }];
    const differences = [
      { scenario: "s", path: "a/extra", official: undefined, hangar: 1 },
      { scenario: "s", path: "b/extra", official: 1, hangar: undefined },
      { scenario: "s", path: "a/value", official: 1, hangar: 2 },
    ];
    const verdict = judge(differences, { accepted, pending });
    expect(verdict.accepted.map((x) => x.difference.path)).toEqual(["a/extra"]);
    expect(verdict.pending.map((x) => x.difference.path)).toEqual(["a/value"]);
    // Only Hangar may have the field: the official server having it alone is not covered.
    expect(verdict.unexpected.map((x) => x.path)).toEqual(["b/extra"]);
    // An entry not seen is stale, unless the dev server shows it in some runs only.
    expect(stale([verdict], ["s"], { wildcards: true, lists: { accepted, pending } })).toEqual([accepted[1]]);
  });

  it("fails on an injected difference whatever the pending list holds", () => {
    const run = (extra: object) => ({
      "default mode": [{ event: "metadata", data: { run_id: A, attempt: 1, ...extra } }],
    });
    const differences = compare("streams", run({}), run({ thread_id: B }));
    expect(differences.map((d) => d.path)).toEqual(["default mode/metadata#0/data/thread_id"]);
    expect(judge(differences).unexpected).toEqual(differences);
    expect(judge(differences, { accepted: ACCEPTED, pending: [] }).unexpected).toEqual(differences);
  });
});

describe("the lists", () => {
  it("give every pending entry an issue, and every accepted entry one of the four reasons", () => {
    for (const e of PENDING) expect(e.issue).toMatch(/^([a-e]|r\d+)$/);
    for (const e of ACCEPTED)
      expect(["production-server", "dev-server-defect", "security", "api-document", "client-sdk"]).toContain(
        e.reason,
      );
  });

  it("are in docs/behaviour.md, each accepted difference as differences.ts has it", () => {
    const doc = readFileSync(join(ROOT, "docs/behaviour.md"), "utf8");
    const expected = acceptedSection();
    expect(
      sectionOf(doc),
      `docs/behaviour.md should end its section "Differences from the official dev server" as:\n${expected}`,
    ).toBe(expected);
  });
});
