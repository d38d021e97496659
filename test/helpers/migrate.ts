// What the tests of `hangar migrate` share: the CLI run as a process (its JSON summary parsed), and the comparison
// of what two servers hold: assistants and their versions, threads with their whole history, store items.
import { spawn } from "node:child_process";
import type { Client, ThreadState } from "@langchain/langgraph-sdk";
import { expect } from "vitest";
import { BIN, ROOT } from "./server.ts";

export interface MigrateRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The --json summary (parsed stdout). */
  json: Record<string, any>;
}

/** Runs `hangar migrate --from <from> --to <to> --json ...args` to its end. */
export function migrate(
  from: string,
  to: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<MigrateRun> {
  return new Promise((res) => {
    const base = { ...process.env };
    for (const k of Object.keys(base)) if (k.startsWith("HANGAR_MIGRATE_")) delete base[k];
    const proc = spawn(process.execPath, [BIN, "migrate", "--from", from, "--to", to, "--json", ...args], {
      cwd: ROOT,
      env: { ...base, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    proc.stdout!.on("data", (d) => (stdout += d));
    proc.stderr!.on("data", (d) => (stderr += d));
    proc.once("exit", (code) => {
      let json: Record<string, any> = {};
      try {
        json = JSON.parse(stdout) as Record<string, any>;
      } catch {
        // not JSON: the test's expectations say what was printed
      }
      res({ code, stdout, stderr, json });
    });
  });
}

/** The counts of a run that copied nothing. */
export const NOTHING_COPIED = {
  assistants: 0,
  versions: 0,
  threads: 0,
  checkpoints: 0,
  crons: 0,
  store_items: 0,
};

/** Counts of a run's summary, to compare runs at a glance. */
export function copiedCounts(run: MigrateRun): Record<string, number> {
  const j = run.json;
  return {
    assistants: j.assistants?.copied,
    versions: j.assistants?.versions?.copied,
    threads: j.threads?.copied,
    checkpoints: j.threads?.checkpoints?.copied,
    crons: j.crons?.copied,
    store_items: j.store_items?.copied,
  };
}

/** Every checkpoint of a thread, newest first. */
export async function historyOf(client: Client, threadId: string): Promise<ThreadState[]> {
  return client.threads.getHistory(threadId, { limit: 1000 });
}

/** Metadata keys Hangar adds to a state when it reads it (docs/behaviour.md): not part of what is copied. */
const READ_KEYS = ["checkpoint_id", "writes"];

/** A state as the comparison sees it: values, next, ids, parent, time, tasks, metadata. */
function comparable(s: ThreadState) {
  const metadata = { ...(s.metadata ?? {}) } as Record<string, unknown>;
  for (const k of READ_KEYS) delete metadata[k];
  return {
    checkpoint_id: s.checkpoint.checkpoint_id,
    parent_checkpoint_id: s.parent_checkpoint?.checkpoint_id ?? null,
    created_at: s.created_at,
    values: s.values,
    next: s.next,
    tasks: s.tasks.map((t) => ({
      id: t.id,
      name: t.name,
      interrupts: t.interrupts,
      result: t.result ?? null,
    })),
    metadata,
  };
}

/** The thread's history on `dst` is the one on `src`, step by step. */
export async function expectSameHistory(src: Client, dst: Client, threadId: string): Promise<void> {
  const [a, b] = await Promise.all([historyOf(src, threadId), historyOf(dst, threadId)]);
  expect(b.length, `history length of thread ${threadId}`).toBe(a.length);
  expect(b.map(comparable)).toEqual(a.map(comparable));
}

/**
 * `dst` holds what `src` holds: the same assistants (copied ones with every version, field by field), the same
 * threads with their metadata, status and history, the same store items. `except` names threads changed on the
 * target since (compared by existence only).
 */
export async function expectSameData(src: Client, dst: Client, except: string[] = []): Promise<void> {
  for (const a of await src.assistants.search({ limit: 1000 })) {
    const b = await dst.assistants.get(a.assistant_id);
    expect({ graph_id: b.graph_id, name: b.name, version: b.version }).toEqual({
      graph_id: a.graph_id,
      name: a.name,
      version: a.version,
    });
    if (a.metadata?.created_by === "system") continue;
    const pick = (v: Record<string, any>) => ({
      version: v.version,
      graph_id: v.graph_id,
      config: v.config,
      context: v.context ?? {},
      metadata: v.metadata,
      name: v.name,
      description: v.description ?? null,
    });
    const versions = async (c: Client) =>
      (await c.assistants.getVersions(a.assistant_id, { limit: 100 }))
        .map(pick)
        .sort((x, y) => x.version - y.version);
    expect(await versions(dst)).toEqual(await versions(src));
  }
  const threads = await src.threads.search({ limit: 1000 });
  expect((await dst.threads.search({ limit: 1000 })).map((t) => t.thread_id).sort()).toEqual(
    threads.map((t) => t.thread_id).sort(),
  );
  for (const t of threads) {
    if (except.includes(t.thread_id)) continue;
    const u = await dst.threads.get(t.thread_id);
    expect(u.metadata).toMatchObject(t.metadata ?? {});
    // The values of the latest checkpoint (the official dev server leaves a thread's own `values` as its last run
    // left them, an update after it notwithstanding).
    const { values } = await src.threads.getState(t.thread_id);
    expect({ status: u.status, values: u.values }).toEqual({ status: t.status, values });
    await expectSameHistory(src, dst, t.thread_id);
  }
  const items = async (c: Client) =>
    (await c.store.searchItems([], { limit: 1000 })).items
      .map((i) => ({ namespace: i.namespace, key: i.key, value: i.value }))
      .sort((x, y) =>
        JSON.stringify([x.namespace, x.key]).localeCompare(JSON.stringify([y.namespace, y.key])),
      );
  expect(await items(dst)).toEqual(await items(src));
}
