// Runs one differential scenario against both servers at once and compares the normalised transcripts
// (test/helpers/differential/): what test/e2e/differential*.test.ts call for each scenario.
import { Client } from "@langchain/langgraph-sdk";
import { diff, type Difference } from "./diff.ts";
import { normalisePair } from "./normalise.ts";
import type { Scenario } from "./scenarios.ts";
import { Session } from "./session.ts";

/** An SDK client that sends no API key of the environment and does not retry (a failure shows at once). */
export function sdkClient(url: string, headers?: Record<string, string>): Client {
  return new Client({ apiUrl: url, apiKey: null, defaultHeaders: headers, callerOptions: { maxRetries: 0 } });
}

export interface Outcome {
  /** The transcripts as recorded. */
  raw: { official: Record<string, unknown>; hangar: Record<string, unknown> };
  differences: Difference[];
}

/** Runs `scenario` on both servers side by side; fails if it cannot run to its end on either. */
export async function runScenario(
  scenario: Scenario,
  officialUrl: string,
  hangarUrl: string,
): Promise<Outcome> {
  const official = new Session(officialUrl, (h) => sdkClient(officialUrl, h));
  const hangar = new Session(hangarUrl, (h) => sdkClient(hangarUrl, h));
  const [o, h] = await Promise.allSettled([scenario.run(official), scenario.run(hangar)]);
  const failed = [
    ...(o.status === "rejected" ? [`on the official dev server: ${String(o.reason)}`] : []),
    ...(h.status === "rejected" ? [`on Hangar: ${String(h.reason)}`] : []),
  ];
  if (failed.length) {
    const steps = (s: Session) => Object.keys(s.transcript).join(", ");
    throw new Error(
      `scenario ${scenario.name} stopped ${failed.join("; ")}\n` +
        `steps done: official [${steps(official)}], hangar [${steps(hangar)}]`,
    );
  }
  return {
    raw: { official: official.transcript, hangar: hangar.transcript },
    differences: compare(scenario.name, official.transcript, hangar.transcript),
  };
}

/** The differences between two recorded transcripts of one scenario, after normalising them together. */
export function compare(scenario: string, official: unknown, hangar: unknown): Difference[] {
  const pair = normalisePair(official, hangar);
  return diff(scenario, pair.official, pair.hangar);
}
