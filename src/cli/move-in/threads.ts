// `hangar migrate`: threads (same ids, their metadata) and their checkpoint history, read from the source's
// history route and written through Hangar's import route (POST /threads/{id}/history/import), which skips the
// checkpoints a thread already has. Only the checkpoints the target lacks are sent.
import type { Thread, ThreadState } from "@langchain/langgraph-sdk";
import { copyEach, tally, type Tally } from "./report.js";
import { listing, request, unlessMissing, type Side } from "./sides.js";

/** Checkpoints per history page read, and per import request sent. */
const PAGE = 100;
/** An import request stays under this many bytes of JSON (the server takes 50 MiB). */
const MAX_BATCH_BYTES = 8 * 1024 * 1024;
/** Metadata the target writes itself: who owns the thread there (the importing user, under custom auth). */
const OWN_KEYS = ["service_auth_user_id"];

interface ImportAnswer {
  imported: string[];
  skipped: string[];
  warnings: string[];
}

/** Every checkpoint of the thread's root namespace, newest first. */
async function historyOf(side: Side, threadId: string): Promise<ThreadState[]> {
  const out: ThreadState[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await side.client.threads.getHistory(threadId, {
      limit: PAGE,
      // As a checkpoint id: the official JS server takes only that form (the SDK's type says a config).
      ...(before ? { before: before as unknown as { configurable: { checkpoint_id: string } } } : {}),
    });
    out.push(...page);
    if (page.length < PAGE) break;
    before = page[page.length - 1].checkpoint.checkpoint_id ?? undefined;
    if (!before) break;
  }
  return out.filter((s) => (s.checkpoint.checkpoint_ns ?? "") === "");
}

const idOf = (s: ThreadState) => s.checkpoint.checkpoint_id as string;

/** The source's thread metadata the target is given. */
function metadataOf(t: Thread): Record<string, unknown> {
  const m = { ...(t.metadata ?? {}) } as Record<string, unknown>;
  for (const k of OWN_KEYS) delete m[k];
  return m;
}

/**
 * Keys of `want` that `have` lacks. A key the target's thread has keeps its value there: it may be what the
 * target's own auth handlers wrote (an owner), which a copy must not take over.
 */
function lacking(want: Record<string, unknown>, have: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(want).filter(([k]) => !(k in have)));
}

/** Batches of checkpoints, oldest first, each within PAGE checkpoints and MAX_BATCH_BYTES. */
function batches(states: ThreadState[]): ThreadState[][] {
  const out: ThreadState[][] = [];
  let cur: ThreadState[] = [];
  let bytes = 0;
  for (const s of [...states].sort((a, b) => idOf(a).localeCompare(idOf(b)))) {
    const size = JSON.stringify(s).length;
    if (cur.length && (cur.length >= PAGE || bytes + size > MAX_BATCH_BYTES)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(s);
    bytes += size;
  }
  if (cur.length) out.push(cur);
  return out;
}

export async function copyThreads(
  from: Side,
  to: Side,
  opts: { dryRun: boolean; targetIsHangar: boolean },
): Promise<Tally> {
  const list = await listing(from, "the threads", (limit, offset) =>
    from.client.threads.search({ limit, offset, sortBy: "created_at", sortOrder: "asc" }),
  );
  const t = tally("threads", opts.dryRun, "checkpoints");
  return copyEach(
    t,
    list,
    (thread) => `thread ${thread.thread_id}`,
    (thread) => copyThread(from, to, thread, t, opts),
  );
}

async function copyThread(
  from: Side,
  to: Side,
  thread: Thread,
  t: Tally,
  opts: { dryRun: boolean; targetIsHangar: boolean },
): Promise<void> {
  const id = thread.thread_id;
  const history = await historyOf(from, id);
  const metadata = metadataOf(thread);
  const existing = await unlessMissing(to.client.threads.get(id));
  if (existing) {
    t.present++;
    const patch = lacking(metadata, (existing.metadata ?? {}) as Record<string, unknown>);
    if (Object.keys(patch).length && !opts.dryRun) await to.client.threads.update(id, { metadata: patch });
  } else if (opts.dryRun) {
    t.copied++;
  } else {
    const graphId = typeof metadata.graph_id === "string" ? metadata.graph_id : undefined;
    // The SDK replaces metadata.graph_id with graphId: both say the same.
    await to.client.threads.create({ threadId: id, metadata, graphId, ifExists: "do_nothing" });
    if (!opts.targetIsHangar) {
      // Made without its history, as said at the start (copyHistory names the checkpoints not copied).
      t.copied++;
      await copyHistory(to, thread, history, new Set(), t, opts);
      return;
    }
    const parts = { ...t.parts! };
    try {
      await copyHistory(to, thread, history, new Set(), t, opts);
    } catch (e) {
      // A thread this run made is not left without the history Hangar refused (a later run would count it as
      // already there, and never copy it): removed, so that running the command again copies it whole.
      await to.client.threads.delete(id).catch(() => {});
      t.parts = parts;
      throw e;
    }
    t.copied++;
    return;
  }
  const theirs = existing ? new Set((await historyOf(to, id)).map(idOf)) : new Set<string>();
  await copyHistory(to, thread, history, theirs, t, opts);
}

/** The checkpoints of `history` the target lacks (`theirs`: the ones it has), imported through Hangar's route. */
async function copyHistory(
  to: Side,
  thread: Thread,
  history: ThreadState[],
  theirs: Set<string>,
  t: Tally,
  opts: { dryRun: boolean; targetIsHangar: boolean },
): Promise<void> {
  const id = thread.thread_id;
  const missing = history.filter((s) => !theirs.has(idOf(s)));
  t.parts!.present += history.length - missing.length;
  if (thread.status === "busy") {
    t.notes.push(
      `thread ${id} was busy on the source: copied as it was; run hangar migrate again once it is idle`,
    );
  }
  const latest = history[0];
  if (latest?.tasks.some((k) => k.checkpoint && k.interrupts?.length)) {
    t.notes.push(
      `thread ${id} is interrupted inside a subgraph: subgraph checkpoints are not copied, so it does not resume there on the target`,
    );
  }
  if (!missing.length) return;
  if (opts.dryRun) {
    t.parts!.copied += missing.length;
    return;
  }
  if (!opts.targetIsHangar) {
    throw new Error(
      `its ${missing.length} checkpoints were not copied: the target is not Hangar (checkpoints are imported through Hangar's own route)`,
    );
  }
  for (const batch of batches(missing)) {
    const answer = await request<ImportAnswer>(to, "POST", `/threads/${id}/history/import`, {
      checkpoints: batch,
    });
    t.parts!.copied += answer.imported.length;
    t.parts!.present += answer.skipped.length;
    for (const w of answer.warnings) t.notes.push(`thread ${id}: checkpoint ${w}`);
  }
}
