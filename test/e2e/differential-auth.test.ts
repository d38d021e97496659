// Differential test under custom auth (issue 25): the scenarios of test/helpers/differential/scenarios-auth.ts run
// against Hangar and the official dev server, both serving test/fixtures/differential-auth (an `auth.path` with
// thread and store handlers), compared as in differential.test.ts.
import { beforeAll, describe, expect, it } from "vitest";
import { explain, judge, stale, type Verdict } from "../helpers/differential/diff.ts";
import { runScenario } from "../helpers/differential/run.ts";
import { AUTH_SCENARIOS } from "../helpers/differential/scenarios-auth.ts";
import { officialPeer } from "../helpers/official-peer.ts";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: "test/fixtures/differential-auth/langgraph.json" });
let official = "";

beforeAll(async () => {
  official = await officialPeer("auth");
});

const verdicts: Verdict[] = [];
const ran: string[] = [];

describe("Hangar beside the official dev server, under custom auth", () => {
  for (const scenario of AUTH_SCENARIOS) {
    it(scenario.name, async () => {
      const verdict = judge((await runScenario(scenario, official, hangar.server.url)).differences);
      verdicts.push(verdict);
      ran.push(scenario.name);
      expect(verdict.unexpected, explain(verdict.unexpected)).toEqual([]);
    });
  }

  it("still sees every difference listed for these scenarios", () => {
    expect(ran).toEqual(AUTH_SCENARIOS.map((s) => s.name));
    const left = stale(verdicts, ran, { wildcards: false });
    expect(left, explain([], left)).toEqual([]);
  });
});
