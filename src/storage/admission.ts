// What a run's admission on a thread reads from the thread's active runs: the same rule on both backends.

/** A pending or running run of the thread; `delayed`: still waiting for its after_seconds (SQLite says 0/1). */
export interface ActiveRun {
  run_id: string;
  delayed: boolean | number;
}

/**
 * The thread's line, from its active runs (running first, then in the order they start): its current run
 * (running, or pending and due), its runs waiting for their after_seconds, and the run a "reject" is refused for
 * (the current one, else a delayed one: a delayed run makes the thread busy).
 */
export function threadLine(rows: ActiveRun[]): {
  current: string | null;
  delayed: string[];
  busyWith?: string;
} {
  const current = rows.find((r) => !r.delayed)?.run_id ?? null;
  const delayed = rows.filter((r) => r.delayed).map((r) => r.run_id);
  return { current, delayed, busyWith: current ?? delayed[0] };
}
