// Differential test (issue 25): the client scenarios of test/helpers/differential/scenarios.ts, written once with the
// official SDK, run against Hangar (on this vitest project's backend) and the official dev server
// (`langgraphjs dev`, test/helpers/official-peer-setup.ts) serving the same fixture project,
// test/fixtures/differential. The transcripts are normalised (ids, timestamps masked by field name; keys sorted) and
// compared; every difference must be listed in test/helpers/differential/differences.ts, as accepted (with its
// reason, and in docs/behaviour.md) or pending (a known Hangar defect), and a listed difference no longer seen fails
// too. Last, the harness is shown to fail on a difference injected into a real transcript.
import { beforeAll, describe, expect, it } from "vitest";
import { explain, judge, stale, type Verdict } from "../helpers/differential/diff.ts";
import { ACCEPTED, PENDING } from "../helpers/differential/differences.ts";
import { compare, runScenario } from "../helpers/differential/run.ts";
import { SCENARIOS } from "../helpers/differential/scenarios.ts";
import { officialPeer } from "../helpers/official-peer.ts";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: "test/fixtures/differential/langgraph.json" });
let official = "";

beforeAll(async () => {
  official = await officialPeer("main");
});

/**
 * Hangar's warnings and errors so far, and its lines about runs started again (a lease lost on a loaded machine makes
 * a run resume from its checkpoint, which changes what it sends): a difference's message shows them.
 */
function serverNotes(): string {
  const lines = hangar.server
    .output()
    .split("\n")
    .filter((l) => /WARN|ERROR|attempt"?:\s*([2-9]|\d\d)/.test(l));
  return lines.length
    ? `\nHangar's log, warnings and runs started again:\n${lines.slice(-40).join("\n")}`
    : "";
}

const verdicts: Verdict[] = [];
const ran: string[] = [];
const recorded = new Map<string, { official: Record<string, unknown>; hangar: Record<string, unknown> }>();

describe("Hangar beside the official dev server", () => {
  for (const scenario of SCENARIOS) {
    it(scenario.name, async () => {
      if (scenario.name === "schemas") await officialPeer("main", { schemas: true });
      const outcome = await runScenario(scenario, official, hangar.server.url);
      recorded.set(scenario.name, outcome.raw);
      const verdict = judge(outcome.differences);
      verdicts.push(verdict);
      ran.push(scenario.name);
      expect(verdict.unexpected, explain(verdict.unexpected) + serverNotes()).toEqual([]);
    });
  }

  it("still sees every difference listed", () => {
    expect(ran).toEqual(SCENARIOS.map((s) => s.name));
    const left = stale(verdicts, ran, { wildcards: true });
    expect(left, explain([], left)).toEqual([]);
  });

  it("fails on a difference injected into a real transcript", () => {
    const streams = recorded.get("streams");
    expect(streams, "the streams scenario ran").toBeDefined();
    const { official: transcript } = streams!;
    const events = transcript["default mode"] as { event: string; data: Record<string, unknown> }[];
    expect(events[0].event).toBe("metadata");

    // The official transcript against itself: nothing differs.
    expect(compare("streams", transcript, structuredClone(transcript))).toEqual([]);

    // A first `metadata` event with `thread_id` back (the shape an earlier Hangar sent): unexpected, with or without
    // the pending list.
    const injected = structuredClone(transcript);
    const first = (injected["default mode"] as { data: Record<string, unknown> }[])[0];
    first.data = { ...first.data, thread_id: "00000000-0000-4000-8000-000000000001" };
    const differences = compare("streams", transcript, injected);
    expect(differences.map((d) => d.path)).toEqual(["default mode/metadata#0/data/thread_id"]);
    for (const pending of [PENDING, []]) {
      const verdict = judge(differences, { accepted: ACCEPTED, pending });
      expect(verdict.unexpected.map((d) => d.path)).toEqual(["default mode/metadata#0/data/thread_id"]);
    }

    // The last event missing: one difference, unexpected.
    const dropped = structuredClone(transcript);
    (dropped["default mode"] as unknown[]).pop();
    const gone = compare("streams", transcript, dropped);
    expect(gone).toHaveLength(1);
    expect(gone[0]).toMatchObject({
      hangar: undefined,
      official: { event: events[events.length - 1].event },
    });
    expect(judge(gone).unexpected).toEqual(gone);
  });
});
