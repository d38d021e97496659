// The thread's state at the end of a run that finished, from what the run already has rather than by reading its
// last checkpoint back (LangGraph's getState deserializes the whole state, a cost that grows with the thread; the
// official server does the same, from the debug events it asks every run for). The run's last checkpoint as its
// stream gave it (values, next tasks) plus what the checkpointer recorded when writing it (storage/recent-puts.ts).
// Only where the two are known to agree with getState: a run that reached its end (no next task, so no task and no
// interrupt), whose last checkpoint this run wrote in this process, on a graph without untracked channels (kept out
// of checkpoints, yet in the live values). Otherwise (an interrupt, a breakpoint, an error, a cancel, durability
// "exit") the state is read back. test/e2e/run-end-state.test.ts holds the two to the same answer.
import type { CheckpointEvent } from "./executor.js";
import { recentPutsOf } from "../storage/recent-puts.js";
import { toPlain } from "../lib/serde.js";
import { snapshotToState, type ThreadStateJson } from "./state.js";
import type { StateSnapshot } from "@langchain/langgraph";

/** Whether a compiled graph has channels that checkpoints leave out (LangGraph's UntrackedValue). */
function hasUntracked(graph: unknown): boolean {
  const channels = (graph as { channels?: Record<string, unknown> } | null)?.channels ?? {};
  return Object.values(channels).some(
    (c) => (c as { lc_graph_name?: unknown } | null)?.lc_graph_name === "UntrackedValue",
  );
}

/**
 * The plain ThreadState of a finished run, as getState would read it; undefined when it must be read back.
 * `plainValues` gives the plain JSON of the checkpoint's values.
 */
export function finishedRunState(
  graph: unknown,
  threadId: string,
  runId: string,
  last: CheckpointEvent | undefined,
  plainValues: (values: unknown) => unknown = toPlain,
): ThreadStateJson | undefined {
  // Taken whatever the run's end, so that nothing of the thread stays here once its run ended.
  const put = recentPutsOf((graph as { checkpointer?: unknown }).checkpointer)?.take(threadId);
  if (!last || last.next.length || last.tasks.length || hasUntracked(graph)) return undefined;
  const id = last.config?.configurable?.checkpoint_id;
  // The thread's last write, made by this run: with durability "exit" the event names the last checkpoint written
  // before the run (the one made at exit has no event), so the state must be read back.
  if (typeof id !== "string" || put?.checkpointId !== id || put.metadata.run_id !== runId) return undefined;
  // The snapshot getState would give, into the ThreadState as every read makes it (snapshotToState).
  const configOf = (checkpointId: string) => ({
    configurable: { thread_id: threadId, checkpoint_ns: "", checkpoint_id: checkpointId },
  });
  const snapshot = {
    values: {},
    next: [],
    tasks: [],
    metadata: put.metadata,
    createdAt: put.ts,
    config: configOf(id),
    parentConfig: put.parentId ? configOf(put.parentId) : undefined,
  };
  const state = toPlain<ThreadStateJson>(snapshotToState(snapshot as unknown as StateSnapshot));
  // The values apart: the largest part, which the run has most often serialized already (graph-runner.ts).
  state.values = last.values == null ? {} : plainValues(last.values);
  return state;
}
