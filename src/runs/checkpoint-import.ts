// Imports a thread's checkpoint history given as the Agent Server's ThreadState records (what any server's
// history route answers) into the storage's checkpointer, so that state, history, `next` and interrupts read back
// the same and an interrupted thread resumes (`hangar migrate`, docs/migrate.md).
import { coerceMessageLikeToMessage, type BaseMessageLike } from "@langchain/core/messages";
import {
  emptyCheckpoint,
  type BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type PendingWrite,
} from "@langchain/langgraph-checkpoint";
import type { AnyGraph } from "../graphs/registry.js";
import { busy, conflict, invalidInput } from "../lib/errors.js";
import { KeyedLock } from "../lib/keyed-lock.js";
import { isObject } from "../lib/objects.js";
import type { Json, Storage } from "../storage/types.js";
import type { ThreadStateService } from "./thread-state.js";

/** One checkpoint to import: a ThreadState as the history routes answer it (fields this import reads). */
export interface ImportedState {
  checkpoint: { checkpoint_id: string; checkpoint_ns?: string };
  parent_checkpoint?: { checkpoint_id: string } | null;
  values: Json;
  next: string[];
  tasks?: { id: string; name: string; interrupts?: unknown[] | null; result?: unknown }[];
  metadata?: Json | null;
  created_at?: string | null;
}

export interface ImportResult {
  /** Checkpoint ids written now. */
  imported: string[];
  /** Checkpoint ids the thread already had (not written again). */
  skipped: string[];
  /** What was imported but may not read back exactly as given. */
  warnings: string[];
}

/** The types of LangChain messages as the API serializes them (`{type, content, ...}` dicts). */
const MESSAGE_TYPES = new Set([
  "human",
  "ai",
  "system",
  "tool",
  "function",
  "generic",
  "developer",
  "remove",
]);

/**
 * Values with the messages in them (as the API writes them: dicts with a message `type`, `content` and the
 * message's own fields) made messages again, as the graph's reducers would have stored them.
 */
export function reviveMessages(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== "object" || depth > 100) return value;
  if (Array.isArray(value)) return value.map((v) => reviveMessages(v, depth + 1));
  const o = value as Json;
  if (
    typeof o.type === "string" &&
    MESSAGE_TYPES.has(o.type) &&
    "content" in o &&
    ("additional_kwargs" in o || "response_metadata" in o)
  ) {
    try {
      return coerceMessageLikeToMessage(o as BaseMessageLike);
    } catch {
      return value;
    }
  }
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, reviveMessages(v, depth + 1)]));
}

type Channel = {
  fromCheckpoint(c?: unknown): Channel;
  update(values: unknown[]): boolean;
  isAvailable(): boolean;
  checkpoint(): unknown;
  finish?(): boolean;
  names?: Set<string>;
};

/** What a node's trigger channel holds when it has fired (a branch's null, a join's names), in checkpoint form. */
function firedValue(spec: Channel | undefined): unknown {
  if (!spec) return null;
  try {
    const ch = spec.fromCheckpoint(undefined);
    ch.update(ch.names instanceof Set ? [...ch.names] : [null]);
    if (!ch.isAvailable()) ch.finish?.();
    return ch.checkpoint();
  } catch {
    return null;
  }
}

const configOf = (threadId: string, checkpointId?: string) => ({
  configurable: {
    thread_id: threadId,
    checkpoint_ns: "",
    ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
  },
});

export class CheckpointImporter {
  /** One import per thread at a time in this process. */
  private lock = new KeyedLock();

  constructor(
    private storage: Storage,
    private threadState: ThreadStateService,
    private isBusy: (threadId: string) => Promise<boolean>,
  ) {}

  private get saver(): BaseCheckpointSaver {
    return this.storage.checkpointer;
  }

  /**
   * Writes the states the thread does not have yet (same thread, namespace and checkpoint id: skipped), oldest
   * first, then records the thread's latest values, interrupts and status. The thread must exist, be bound to a
   * graph of this server (metadata.graph_id) and have no run pending or running.
   */
  async import(threadId: string, states: ImportedState[]): Promise<ImportResult> {
    return this.lock.run(threadId, async () => {
      const thread = await this.threadState.thread(threadId);
      const active = await this.storage.runs.idsByStatus(threadId, ["pending", "running"]);
      if (active.length || (await this.isBusy(threadId))) {
        throw busy(`Thread "${threadId}" is busy with a run; import its history when it is idle`);
      }
      const graph = await this.threadState.graphOf(thread);
      if (!graph) {
        const graphId = thread.metadata.graph_id;
        throw conflict(
          typeof graphId === "string"
            ? `Thread "${threadId}": graph "${graphId}" (metadata.graph_id) is not served here`
            : `Thread "${threadId}" has no graph: create it with metadata.graph_id before importing its history`,
        );
      }
      states.forEach((s, i) => this.check(graph, thread.metadata.graph_id, s, i));
      const order = [...states].sort((a, b) =>
        a.checkpoint.checkpoint_id.localeCompare(b.checkpoint.checkpoint_id),
      );
      const result: ImportResult = { imported: [], skipped: [], warnings: [] };
      const seen = new Set<string>();
      for (const s of order) {
        const id = s.checkpoint.checkpoint_id;
        if (seen.has(id) || (await this.saver.getTuple(configOf(threadId, id)))) {
          result.skipped.push(id);
        } else {
          await this.importOne(graph, threadId, s, result.warnings);
          result.imported.push(id);
        }
        seen.add(id);
      }
      if (result.imported.length)
        await this.threadState.refresh(threadId, graph, await this.endedIn(threadId, order));
      return result;
    });
  }

  /**
   * "error" when the thread's latest checkpoint is one of `states` and a task of it failed (none interrupted), as
   * the thread's status was where it comes from; undefined otherwise (the status follows from `next`).
   */
  private async endedIn(threadId: string, states: ImportedState[]): Promise<"error" | undefined> {
    const latest = (await this.saver.getTuple(configOf(threadId)))?.checkpoint.id;
    const s = states.find((x) => x.checkpoint.checkpoint_id === latest);
    const tasks = s?.tasks ?? [];
    const failed = tasks.some((t) => (t as { error?: unknown }).error != null);
    return failed && !tasks.some((t) => t.interrupts?.length) ? "error" : undefined;
  }

  /** Refuses a state the graph cannot take, naming the field, before anything is written. */
  private check(graph: AnyGraph, graphId: unknown, s: ImportedState, i: number): void {
    const at = `checkpoints[${i}]`;
    if ((s.checkpoint.checkpoint_ns ?? "") !== "") {
      throw invalidInput(
        `${at}.checkpoint.checkpoint_ns: only the root namespace ("") can be imported`,
        `${at}.checkpoint.checkpoint_ns`,
      );
    }
    for (const name of s.next) {
      if (!graph.nodes[name]) {
        throw invalidInput(`${at}.next: "${name}" is not a node of graph "${String(graphId)}"`, `${at}.next`);
      }
    }
  }

  private async importOne(
    graph: AnyGraph,
    threadId: string,
    s: ImportedState,
    warnings: string[],
  ): Promise<void> {
    const id = s.checkpoint.checkpoint_id;
    const channels = graph.channels as unknown as Record<string, Channel>;
    const values = reviveMessages(s.values) as Json;
    const channelValues: Json = { ...values };
    // What makes `next` run: the trigger channel of each node, fired (the input for __start__).
    for (const name of s.next) {
      const trigger = graph.nodes[name].triggers[0];
      if (trigger === undefined) continue;
      if (name === "__start__") {
        const start = s.tasks?.find((t) => t.name === "__start__");
        if (!isObject(start?.result)) warnings.push(`${id}: the input of its __start__ task is not known`);
        channelValues[trigger] = isObject(start?.result) ? start.result : {};
      } else channelValues[trigger] = firedValue(channels[trigger]);
    }
    const versions: ChannelVersions = {};
    for (const k of Object.keys(channelValues)) versions[k] = this.saver.getNextVersion(undefined);
    const checkpoint: Checkpoint = {
      ...emptyCheckpoint(),
      id,
      ts: s.created_at ?? new Date().toISOString(),
      channel_values: channelValues,
      channel_versions: versions,
      versions_seen: {},
    };
    const metadata = {
      source: "update",
      step: -1,
      parents: {},
      ...(s.metadata ?? {}),
    } as unknown as CheckpointMetadata;
    // The tasks' writes first, under the source's task ids (LangGraph derives a task's id from the checkpoint id,
    // its step and the node, so they are this server's too), the checkpoint last: once it is there, its import is
    // complete, and an import that stopped before is done again.
    await this.putTaskWrites(threadId, id, s.tasks ?? [], new Map());
    await this.saver.put(
      configOf(threadId, s.parent_checkpoint?.checkpoint_id),
      checkpoint,
      metadata,
      versions,
    );
    const snap = await graph.getState(configOf(threadId, id));
    const ours = new Map<string, string[]>();
    for (const t of snap.tasks) ours.set(t.name, [...(ours.get(t.name) ?? []), t.id]);
    const renamed = new Map<string, string>();
    const counts = new Map<string, number>();
    for (const t of s.tasks ?? []) {
      const n = counts.get(t.name) ?? 0;
      counts.set(t.name, n + 1);
      const mine = ours.get(t.name)?.[n];
      if (mine && mine !== t.id) renamed.set(t.id, mine);
    }
    if (renamed.size) await this.putTaskWrites(threadId, id, s.tasks ?? [], renamed);
    const next = [...snap.next].sort().join(",");
    if (next !== [...s.next].sort().join(",")) {
      warnings.push(`${id}: next reads [${next}] here, [${s.next.join(",")}] was given`);
    }
  }

  /** The results and interrupts of the state's tasks as pending writes (only the renamed ones, when given). */
  private async putTaskWrites(
    threadId: string,
    checkpointId: string,
    tasks: NonNullable<ImportedState["tasks"]>,
    renamed: Map<string, string>,
  ): Promise<void> {
    const config = configOf(threadId, checkpointId);
    for (const t of tasks) {
      if (renamed.size && !renamed.has(t.id)) continue;
      const taskId = renamed.get(t.id) ?? t.id;
      const writes: PendingWrite[] = isObject(t.result) ? Object.entries(t.result) : [];
      if (writes.length) await this.saver.putWrites(config, writes, taskId);
      if (t.interrupts?.length) await this.saver.putWrites(config, [["__interrupt__", t.interrupts]], taskId);
    }
  }
}
