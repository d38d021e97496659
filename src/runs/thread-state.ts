// Thread state through the graph: read state at a checkpoint, update it, list history, apply supersteps.
import type { StateSnapshot } from "@langchain/langgraph";
import type { GraphRegistry, AnyGraph } from "../graphs/registry.js";
import { busy, conflict, invalidInput, notFound } from "../lib/errors.js";
import { JsonCache } from "./json-cache.js";
import { RawJson, toJson, toPlain } from "../lib/serde.js";
import type { Json, Storage, Thread } from "../storage/types.js";
import {
  EMPTY_STATE,
  configToCheckpoint,
  interruptsByTask,
  snapshotToState,
  type ThreadStateJson,
} from "./state.js";
import { isObject } from "../lib/objects.js";

export interface CheckpointSel {
  checkpoint_id?: string | null;
  checkpoint_ns?: string | null;
  checkpoint_map?: Json | null;
}

export class ThreadStateService {
  /** Serialized state and history, keyed by the thread's checkpoint token: exact, never stale. */
  private cache: JsonCache;

  /** @param cacheBytes the size of the cache of serialized states and histories (HANGAR_STATE_CACHE_BYTES) */
  constructor(
    private storage: Storage,
    private graphs: GraphRegistry,
    private isBusy: (threadId: string) => Promise<boolean>,
    cacheBytes?: number,
  ) {
    this.cache = new JsonCache(cacheBytes);
  }

  async thread(threadId: string): Promise<Thread> {
    const t = await this.storage.threads.get(threadId);
    if (!t) throw notFound(`Thread "${threadId}" not found`);
    return t;
  }

  /** The thread's graph, built from the config its runs left on it (a graph may be a factory of it). */
  async graphOf(thread: Thread): Promise<AnyGraph | null> {
    const graphId = thread.metadata.graph_id;
    if (typeof graphId !== "string" || !this.graphs.has(graphId)) return null;
    const config = (thread.config ?? {}) as Json;
    const configurable = isObject(config.configurable) ? config.configurable : {};
    return this.graphs.get(graphId, {
      ...config,
      configurable: { ...configurable, thread_id: thread.thread_id },
    });
  }

  private config(threadId: string, sel?: CheckpointSel | null) {
    const configurable: Json = { thread_id: threadId };
    if (sel?.checkpoint_id) configurable.checkpoint_id = sel.checkpoint_id;
    if (sel?.checkpoint_ns) configurable.checkpoint_ns = sel.checkpoint_ns;
    if (sel?.checkpoint_map) configurable.checkpoint_map = sel.checkpoint_map;
    return { configurable };
  }

  /** Serves `compute` from the cache while the thread's checkpoints are unchanged. */
  private async cached(threadId: string, query: unknown, compute: () => Promise<unknown>): Promise<RawJson> {
    // The thread's graph decides how checkpoints read; it is part of the key (and a missing thread is 404).
    const graphId = (await this.thread(threadId)).metadata.graph_id;
    const token = await this.storage.checkpointToken(threadId);
    const key = token === null ? null : `${threadId}|${token}|${String(graphId)}|${JSON.stringify(query)}`;
    const hit = key === null ? undefined : this.cache.get(key);
    if (hit !== undefined) return new RawJson(hit);
    const json = toJson(await compute());
    // Cache only if nothing was written meanwhile (the token is read again after computing).
    if (key !== null && (await this.storage.checkpointToken(threadId)) === token) this.cache.set(key, json);
    return new RawJson(json);
  }

  /** The state as JSON text (cached). */
  stateJson(threadId: string, sel: CheckpointSel | null, subgraphs = false): Promise<RawJson> {
    return this.cached(threadId, ["state", sel, subgraphs], () => this.getState(threadId, sel, subgraphs));
  }

  /** The history as JSON text (cached). */
  historyJson(threadId: string, q: Parameters<ThreadStateService["history"]>[1]): Promise<RawJson> {
    return this.cached(threadId, ["history", q], () => this.history(threadId, q));
  }

  async getState(threadId: string, sel: CheckpointSel | null, subgraphs = false): Promise<ThreadStateJson> {
    const thread = await this.thread(threadId);
    const graph = await this.graphOf(thread);
    if (!graph) {
      if (sel?.checkpoint_id) throw notFound(`Checkpoint "${sel.checkpoint_id}" not found`);
      return EMPTY_STATE;
    }
    if (sel?.checkpoint_id) {
      const tuple = await this.storage.checkpointer.getTuple(this.config(threadId, sel));
      if (!tuple) throw notFound(`Checkpoint "${sel.checkpoint_id}" not found in thread "${threadId}"`);
    }
    const snap = await graph.getState(this.config(threadId, sel), { subgraphs });
    const [state] = await this.withWrites(graph, [snap]);
    // A run from a given checkpoint records the root's `checkpoint_ns: ""` in its checkpoints' metadata (LangGraph
    // copies it from the configurable); the official server leaves it out of a state read, not of the history.
    const metadata = state.metadata as Json | null | undefined;
    if (metadata && metadata.checkpoint_ns === "") delete metadata.checkpoint_ns;
    return state;
  }

  /**
   * States with `metadata.writes` (node name -> what it wrote), as LangGraph once recorded it in checkpoint
   * metadata: an update or superstep records the values given when it is made; for the checkpoints of a run it
   * is read back here, from the results of the tasks of the checkpoint before (the parent), or for the input
   * checkpoint from its `__start__` task. Parents not in `snaps` are read (at most one per state).
   */
  private async withWrites(graph: AnyGraph, snaps: StateSnapshot[]): Promise<ThreadStateJson[]> {
    const byId = new Map<string, StateSnapshot>();
    for (const s of snaps) {
      const id = s.config?.configurable?.checkpoint_id;
      if (typeof id === "string") byId.set(`${s.config?.configurable?.checkpoint_ns ?? ""}|${id}`, s);
    }
    const parentOf = async (s: StateSnapshot): Promise<StateSnapshot | undefined> => {
      const p = s.parentConfig?.configurable;
      if (!p?.checkpoint_id) return undefined;
      const hit = byId.get(`${p.checkpoint_ns ?? ""}|${p.checkpoint_id}`);
      if (hit) return hit;
      return graph.getState({ configurable: { ...p } }).catch(() => undefined);
    };
    return Promise.all(
      snaps.map(async (snap) => {
        const state = snapshotToState(snap);
        const metadata = (state.metadata ?? {}) as Json;
        if (!("writes" in metadata)) {
          const source = metadata.source;
          const tasks =
            source === "input"
              ? snap.tasks.filter((t) => t.name === "__start__")
              : source === "loop"
                ? ((await parentOf(snap))?.tasks ?? []).filter((t) => !t.name.startsWith("__"))
                : [];
          state.metadata = { ...metadata, writes: groupWrites(tasks) };
        }
        return state;
      }),
    );
  }

  async updateState(
    threadId: string,
    body: { values?: unknown; as_node?: string; checkpoint?: CheckpointSel; checkpoint_id?: string },
  ): Promise<{ checkpoint: ReturnType<typeof configToCheckpoint> }> {
    const thread = await this.thread(threadId);
    // A pending run (also one waiting for after_seconds) counts: the thread is busy from its creation.
    const active = await this.storage.runs.idsByStatus(threadId, ["pending", "running"]);
    if (active.length || (await this.isBusy(threadId))) {
      throw busy(`Thread "${threadId}" is busy with a run`);
    }
    const graph = await this.graphOf(thread);
    if (!graph) {
      throw conflict(
        `Thread "${threadId}" has no graph yet: run it, or create it with graph_id, before updating state`,
      );
    }
    const sel = {
      ...(body.checkpoint ?? {}),
      ...(body.checkpoint_id ? { checkpoint_id: body.checkpoint_id } : {}),
    };
    // The checkpointer records run metadata given with the config: the writes of the update; and, as on the
    // official server, the thread's graph (copied from configurable).
    const base = this.config(threadId, sel);
    const config = {
      ...base,
      configurable: { ...base.configurable, graph_id: thread.metadata.graph_id },
      ...(body.as_node ? { metadata: { writes: { [body.as_node]: body.values ?? null } } } : {}),
    };
    let next;
    try {
      next = await graph.updateState(config, (body.values ?? null) as any, body.as_node);
    } catch (e) {
      throw invalidInput(`values: ${(e as Error).message}`, "values");
    }
    await this.refresh(threadId, graph);
    // As the official answer: the new checkpoint's thread, namespace and id (its map only when it has one).
    const checkpoint = configToCheckpoint(next);
    if (checkpoint && checkpoint.checkpoint_map === null)
      delete (checkpoint as { checkpoint_map?: unknown }).checkpoint_map;
    return { checkpoint };
  }

  /** Stores the thread's latest values and its status (given, or derived) after its checkpoints changed. */
  async refresh(threadId: string, graph: AnyGraph, status?: Thread["status"]): Promise<ThreadStateJson> {
    const state = snapshotToState(await graph.getState({ configurable: { thread_id: threadId } }));
    await this.storage.threads.setState(threadId, {
      values: toPlain<Json>(state.values),
      interrupts: toPlain<Json>(interruptsByTask(state)),
      status: status ?? (state.next.length ? "interrupted" : "idle"),
    });
    return state;
  }

  async history(
    threadId: string,
    q: {
      limit: number;
      before?: string | CheckpointSel | null;
      metadata?: Json | null;
      checkpoint?: CheckpointSel | null;
    },
  ): Promise<ThreadStateJson[]> {
    const thread = await this.thread(threadId);
    const graph = await this.graphOf(thread);
    if (!graph) return [];
    const before = typeof q.before === "string" ? { checkpoint_id: q.before } : q.before;
    const snaps: StateSnapshot[] = [];
    const iter = graph.getStateHistory(this.config(threadId, q.checkpoint), {
      limit: q.limit,
      ...(before?.checkpoint_id ? { before: this.config(threadId, before) } : {}),
      ...(q.metadata && Object.keys(q.metadata).length ? { filter: q.metadata } : {}),
    });
    for await (const snap of iter) snaps.push(snap);
    return this.withWrites(graph, snaps);
  }

  /**
   * Applies supersteps in order to a new thread bound to `graphId`; the thread stays idle (it was only
   * created). Each superstep is its own checkpoint, recording the values given as its writes.
   */
  async applySupersteps(
    threadId: string,
    graphId: string,
    supersteps: { updates: { values?: unknown; command?: Json | null; as_node: string }[] }[],
  ): Promise<ThreadStateJson> {
    if (!this.graphs.has(graphId)) throw notFound(`Graph "${graphId}" not found`);
    const graph = await this.graphs.get(graphId, { configurable: { thread_id: threadId } });
    let configurable: Record<string, unknown> = { thread_id: threadId, checkpoint_ns: "" };
    try {
      for (const step of supersteps) {
        // Updates as input are the input of the graph: recorded under __start__, as a run records it.
        const writes = groupWrites(
          step.updates.map((u) => ({
            name: u.as_node === "__input__" ? "__start__" : u.as_node,
            result: u.values ?? null,
          })),
        );
        const next = await graph.bulkUpdateState({ configurable, metadata: { writes } }, [
          { updates: step.updates.map((u) => ({ values: (u.values ?? null) as any, asNode: u.as_node })) },
        ]);
        configurable = { ...next.configurable };
      }
    } catch (e) {
      throw invalidInput(`supersteps: ${(e as Error).message}`, "supersteps");
    }
    return this.refresh(threadId, graph, "idle");
  }
}

/** Node name -> what it wrote (a list when the node ran more than once); null when nothing was written. */
function groupWrites(tasks: { name: string; result?: unknown }[]): Json | null {
  const byName = new Map<string, unknown[]>();
  for (const t of tasks)
    if (t.result !== undefined) byName.set(t.name, [...(byName.get(t.name) ?? []), t.result]);
  if (!byName.size) return null;
  return Object.fromEntries(
    [...byName].map(([name, results]) => [name, results.length === 1 ? results[0] : results]),
  );
}
