// Messages between the API thread (pool.ts) and a graph thread (host.ts).
import type { RunOutcome } from "../executor.js";
import type { GraphRun } from "../graph-runner.js";
import type { ThreadStateJson } from "../state.js";

export type ToHost =
  /** Execute a run; `bindings` are its log lines' context. */
  | { t: "run"; id: number; job: GraphRun; bindings: Record<string, unknown> }
  | { t: "abort"; id: number }
  | { t: "close" };

export type FromHost =
  | { t: "ready" }
  /** The graphs could not be loaded on this thread. */
  | { t: "failed"; message: string }
  /**
   * A run's event (its data as JSON text); `wrote`: PostgreSQL checkpoints were committed before it (the API
   * thread's sync() then flushes the WAL), as a `wrote` message says alone.
   */
  | { t: "event"; id: number; event: string; json: string; wrote?: true }
  | { t: "wrote" }
  | {
      t: "done";
      id: number;
      outcome: RunOutcome;
      state: ThreadStateJson | null | undefined;
      stateError: string | undefined;
    }
  /** The run threw outside the graph's own error handling. */
  | { t: "crashed"; id: number; message: string }
  /** A JSON log line of this thread. */
  | { t: "log"; line: string };
