// The section of docs/behaviour.md listing the accepted differences from the official dev server, rendered from
// test/helpers/differential/differences.ts (test/unit/differential.test.ts checks the document has it as rendered).
import { ACCEPTED, type Accepted } from "./differences.ts";

export const SECTION_TITLE = "## Differences from the official dev server";

const where = (e: Accepted) => {
  const side = e.only ? `, only ${e.only === "hangar" ? "Hangar" : "the dev server"} has it` : "";
  const whose = e.only ? "" : "Hangar: ";
  const value = e.value !== undefined ? ` (${whose}\`${JSON.stringify(e.value)}\`)` : "";
  const some = e.intermittent ? ", in some runs of the dev server" : "";
  return `\`${e.scenario}\` at \`${e.path}\`${side}${value}${some}`;
};

/** The section, from its title to its last line (with a final newline). */
export function acceptedSection(accepted: readonly Accepted[] = ACCEPTED): string {
  return [
    SECTION_TITLE,
    "",
    "The differential tests (`test/e2e/differential.test.ts`, `test/e2e/differential-auth.test.ts`) run the same client",
    "scenarios, written once with the official SDK, against Hangar (on both backends) and against the official dev",
    "server (`langgraphjs dev` of `@langchain/langgraph-cli`) serving the same project, and compare what both answer",
    "(ids and timestamps masked by field name). These differences are kept on purpose. Each names its scenario (`*`:",
    "any), where it shows, and why: `production-server` (the official production server does it so),",
    "`dev-server-defect` (the dev server is wrong there), `security`, `api-document` (the official API document",
    "allows both; Hangar's answer follows from its design), or `client-sdk` (both servers send the same, which the",
    "official SDK hands over differently from run to run). This list is generated from",
    "`test/helpers/differential/differences.ts`; a test checks that the two agree.",
    "",
    ...accepted.map((e) => `- ${where(e)} — ${e.reason}: ${e.why}.`),
    "",
  ].join("\n");
}

/** The section as `markdown` has it: from its title to the next `## ` title or the end. */
export function sectionOf(markdown: string): string | undefined {
  const start = markdown.indexOf(`\n${SECTION_TITLE}\n`);
  if (start < 0) return undefined;
  const next = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start + 1, next < 0 ? undefined : next + 1);
}
