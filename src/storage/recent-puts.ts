// What a checkpointer wrote last on each thread (the root namespace's checkpoints only). A run reads its thread's
// state at its end from what it already has, its last checkpoint as its own stream gave it, with the rest (when the
// checkpoint was made, its metadata as stored, its parent) from here, rather than reading the checkpoint back:
// LangGraph's getState deserializes the whole state, a cost that grows with the thread (see runs/end-state.ts).
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint } from "@langchain/langgraph-checkpoint";

export interface PutRecord {
  checkpointId: string;
  /** The checkpoint's `ts`: the state's `created_at`. */
  ts: string;
  /** As stored (before encryption, after Hangar's additions): what reading it back gives. */
  metadata: Record<string, unknown>;
  parentId: string | null;
}

/**
 * One record per thread, kept until taken (a run takes its thread's when it ends), at most `max` threads (the
 * oldest go first): a write no run asks about (an update of the state through the API) is not kept for long.
 */
export class RecentPuts {
  private puts = new Map<string, PutRecord>();

  constructor(private max = 64) {}

  /** Records a checkpoint once it was written. */
  record(config: RunnableConfig, checkpoint: Checkpoint, metadata: Record<string, unknown>): void {
    const c = config.configurable;
    if (!c?.thread_id || (c.checkpoint_ns ?? "") !== "") return;
    const threadId = String(c.thread_id);
    this.puts.delete(threadId);
    this.puts.set(threadId, {
      checkpointId: checkpoint.id,
      ts: checkpoint.ts,
      metadata,
      parentId: (c.checkpoint_id as string | undefined) ?? null,
    });
    if (this.puts.size > this.max) this.puts.delete(this.puts.keys().next().value!);
  }

  /** The thread's last write here, removed; undefined when none (or no longer kept). */
  take(threadId: string): PutRecord | undefined {
    const p = this.puts.get(threadId);
    if (p) this.puts.delete(threadId);
    return p;
  }
}

/** A checkpointer that records its writes. */
export const recentPutsOf = (saver: unknown): RecentPuts | undefined =>
  (saver as { recentPuts?: unknown } | null)?.recentPuts instanceof RecentPuts
    ? (saver as { recentPuts: RecentPuts }).recentPuts
    : undefined;
