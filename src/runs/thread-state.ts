// Thread state through the graph: read state at a checkpoint, update it, list history, apply supersteps.
import type { GraphRegistry, AnyGraph } from "../graphs/registry.js";
import { conflict, notFound, unprocessable } from "../api/errors.js";
import { JsonCache, RawJson } from "./json-cache.js";
import { toJson, toPlain } from "./serde.js";
import type { Json, Storage, Thread } from "../storage/types.js";
import {
  EMPTY_STATE,
  configToCheckpoint,
  interruptsByTask,
  snapshotToState,
  type ThreadStateJson,
} from "./state.js";

export interface CheckpointSel {
  checkpoint_id?: string | null;
  checkpoint_ns?: string | null;
  checkpoint_map?: Json | null;
}

export class ThreadStateService {
  /** Serialized state and history, keyed by the thread's checkpoint token: exact, never stale. */
  private cache = new JsonCache();

  constructor(
    private storage: Storage,
    private graphs: GraphRegistry,
    private isBusy: (threadId: string) => Promise<boolean>,
  ) {}

  async thread(threadId: string): Promise<Thread> {
    const t = await this.storage.threads.get(threadId);
    if (!t) throw notFound(`Thread "${threadId}" not found`);
    return t;
  }

  private async graphOf(thread: Thread): Promise<AnyGraph | null> {
    const graphId = thread.metadata.graph_id;
    if (typeof graphId !== "string" || !this.graphs.has(graphId)) return null;
    return this.graphs.get(graphId, { configurable: { thread_id: thread.thread_id } });
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
    return snapshotToState(snap);
  }

  async updateState(
    threadId: string,
    body: { values?: unknown; as_node?: string; checkpoint?: CheckpointSel; checkpoint_id?: string },
  ): Promise<{ checkpoint: ReturnType<typeof configToCheckpoint> }> {
    const thread = await this.thread(threadId);
    if (await this.isBusy(threadId)) throw conflict(`Thread "${threadId}" is busy with a run`);
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
    let next;
    try {
      next = await graph.updateState(this.config(threadId, sel), (body.values ?? null) as any, body.as_node);
    } catch (e) {
      throw unprocessable(`values: ${(e as Error).message}`);
    }
    await this.refresh(threadId, graph);
    return { checkpoint: configToCheckpoint(next) };
  }

  /** Stores the thread's latest values and derived status after its checkpoints changed. */
  async refresh(threadId: string, graph: AnyGraph): Promise<ThreadStateJson> {
    const state = snapshotToState(await graph.getState({ configurable: { thread_id: threadId } }));
    await this.storage.threads.setState(threadId, {
      values: toPlain<Json>(state.values),
      interrupts: toPlain<Json>(interruptsByTask(state)),
      status: state.next.length ? "interrupted" : "idle",
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
    const out: ThreadStateJson[] = [];
    const iter = graph.getStateHistory(this.config(threadId, q.checkpoint), {
      limit: q.limit,
      ...(before?.checkpoint_id ? { before: this.config(threadId, before) } : {}),
      ...(q.metadata && Object.keys(q.metadata).length ? { filter: q.metadata } : {}),
    });
    for await (const snap of iter) out.push(snapshotToState(snap));
    return out;
  }

  /** Applies supersteps in order to a new thread bound to `graphId`. */
  async applySupersteps(
    threadId: string,
    graphId: string,
    supersteps: { updates: { values?: unknown; command?: Json | null; as_node: string }[] }[],
  ): Promise<ThreadStateJson> {
    if (!this.graphs.has(graphId)) throw notFound(`Graph "${graphId}" not found`);
    const graph = await this.graphs.get(graphId, { configurable: { thread_id: threadId } });
    try {
      await graph.bulkUpdateState(
        { configurable: { thread_id: threadId } },
        supersteps.map((s) => ({
          updates: s.updates.map((u) => ({ values: (u.values ?? null) as any, asNode: u.as_node })),
        })),
      );
    } catch (e) {
      throw unprocessable(`supersteps: ${(e as Error).message}`);
    }
    return this.refresh(threadId, graph);
  }
}
