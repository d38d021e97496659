// `hangar migrate`: assistants, every version in order (create, then one update per later version), and the
// version the source serves made the target's latest. An assistant the target has gets only its missing versions.
import type { Assistant, AssistantVersion } from "@langchain/langgraph-sdk";
import { copyEach, tally, type Tally } from "./report.js";
import { allPages, listing, unlessMissing, type Side } from "./sides.js";

/** What a version holds that the target is given (the rest, ids and dates, is the target's own). */
function contentOf(v: Assistant | AssistantVersion) {
  return {
    graphId: v.graph_id,
    config: v.config ?? {},
    context: (v as { context?: unknown }).context ?? {},
    metadata: v.metadata ?? {},
    name: v.name,
    description: (v as { description?: string | null }).description ?? undefined,
  };
}

async function versionsOf(side: Side, a: Assistant): Promise<(Assistant | AssistantVersion)[]> {
  const all: (Assistant | AssistantVersion)[] = await allPages((limit, offset) =>
    side.client.assistants.getVersions(a.assistant_id, { limit, offset }),
  );
  const versions = all.length ? all : [a];
  return versions.sort((x, y) => x.version - y.version);
}

export async function copyAssistants(from: Side, to: Side, dryRun: boolean): Promise<Tally> {
  const list = await listing(from, "the assistants", (limit, offset) =>
    from.client.assistants.search({ limit, offset, sortBy: "created_at", sortOrder: "asc" }),
  );
  const t = tally("assistants", dryRun, "versions");
  return copyEach(
    t,
    list,
    (a) => `assistant ${a.assistant_id} (${a.name}, graph ${a.graph_id})`,
    (a) => copyOne(from, to, a, t, dryRun),
  );
}

async function copyOne(from: Side, to: Side, a: Assistant, t: Tally, dryRun: boolean): Promise<void> {
  const versions = await versionsOf(from, a);
  const existing = await unlessMissing(to.client.assistants.get(a.assistant_id));
  let have = 0;
  if (existing) {
    const theirs = await allPages((limit, offset) =>
      to.client.assistants.getVersions(a.assistant_id, { limit, offset }),
    );
    have = Math.max(existing.version, ...theirs.map((v) => v.version));
    t.present++;
  }
  const missing = versions.filter((v) => v.version > have);
  t.parts!.present += versions.length - missing.length;
  if (dryRun) {
    t.parts!.copied += missing.length;
    if (!existing) t.copied++;
    return;
  }
  // Counted as each write succeeds: a refused one (the target's graphs, its auth) is a failure, not a copy.
  for (const v of missing) {
    if (v === missing[0] && !existing) {
      await to.client.assistants.create({ ...contentOf(v), assistantId: a.assistant_id, ifExists: "raise" });
      t.copied++;
    } else {
      await to.client.assistants.update(a.assistant_id, contentOf(v));
    }
    t.parts!.copied++;
  }
  // The version the source serves, unless the target already serves it.
  const current = (await to.client.assistants.get(a.assistant_id)).version;
  if (current !== a.version && versions.some((v) => v.version === a.version)) {
    await to.client.assistants.setLatest(a.assistant_id, a.version);
  }
}
