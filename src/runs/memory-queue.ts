// The embedded run queue (one process): admission through the SQLite run store (busy check and insert in one
// transaction), then, in memory, one run at a time per thread (in order), delayed runs (after_seconds) held until
// due, and the runs workers took. Nobody else takes these runs, so a lease never expires; what a stopped process
// left pending or running is taken up by `recover` at the next start. Stateless runs live in memory only.
import type {
  AdmittedThread,
  Json,
  Run,
  RunAdmission,
  RunInput,
  RunStatus,
  Storage,
} from "../storage/types.js";
import type { CancelAction } from "./execute-job.js";
import type { ClaimedRun, Leftovers, RunQueue } from "./queue.js";

interface Entry {
  /** The queue's own copy of the run (the caller's is never changed): status pending or running. */
  run: ClaimedRun;
  /** Admitted first in its thread's line (interrupt, rollback). */
  first: boolean;
}

export class MemoryRunQueue implements RunQueue {
  readonly shared = false;
  /** Every run in the queue (waiting, delayed, ready, or taken by a worker), by id. */
  private entries = new Map<string, Entry>();
  /** The run holding each thread (taken, or ready and waiting for a worker). */
  private holding = new Map<string, Entry>();
  /** Runs waiting for their thread, in order. */
  private waiting = new Map<string, Entry[]>();
  /** Runs whose thread is free (and stateless runs), waiting for a worker, in order. */
  private ready: Entry[] = [];
  /** Runs waiting for their after_seconds, with its timer. */
  private delayed = new Map<Entry, NodeJS.Timeout>();
  private due: () => void = () => {};

  constructor(private storage: Storage) {}

  onDue(fn: () => void): void {
    this.due = fn;
  }

  /** Admission by the run store, in one synchronous transaction (see SqliteRuns.admit); then in line. */
  async admit(input: RunInput & { thread_id: string }, thread?: AdmittedThread): Promise<RunAdmission> {
    const admitted = await this.storage.runs.admit(input, thread);
    if (admitted.run) {
      const first = input.multitask_strategy === "interrupt" || input.multitask_strategy === "rollback";
      this.place(this.track(admitted.run, first), input.delay_seconds ?? 0);
    }
    return admitted;
  }

  /** A stateless run: in memory only (the embedded backend keeps no record of it). */
  async enqueue(input: RunInput): Promise<Run> {
    const ts = new Date().toISOString();
    const run: Run = {
      run_id: input.run_id,
      thread_id: null,
      assistant_id: input.assistant_id,
      created_at: ts,
      updated_at: ts,
      status: "pending",
      metadata: input.metadata,
      kwargs: input.kwargs,
      multitask_strategy: input.multitask_strategy,
    };
    this.place(this.track(run, false), input.delay_seconds ?? 0);
    return run;
  }

  private track(run: Run, first: boolean, attempt = 1): Entry {
    const entry: Entry = { run: { ...run, status: "pending", attempt, cancel_action: null }, first };
    this.entries.set(run.run_id, entry);
    return entry;
  }

  /** Puts a run in line behind its thread's runs (first, if it was admitted so), once `afterSeconds` passed. */
  private place(entry: Entry, afterSeconds: number): void {
    if (afterSeconds > 0) {
      const timer = setTimeout(() => {
        this.delayed.delete(entry);
        this.place(entry, 0);
      }, afterSeconds * 1000);
      timer.unref();
      this.delayed.set(entry, timer);
      return;
    }
    const threadId = entry.run.thread_id;
    if (threadId && (this.holding.has(threadId) || this.waiting.get(threadId)?.length)) {
      const line = this.lineOf(threadId);
      if (entry.first) line.unshift(entry);
      else line.push(entry);
      if (!this.holding.has(threadId)) this.release(threadId);
      return;
    }
    if (threadId) this.holding.set(threadId, entry);
    this.ready.push(entry);
    this.due();
  }

  private lineOf(threadId: string): Entry[] {
    let line = this.waiting.get(threadId);
    if (!line) {
      line = [];
      this.waiting.set(threadId, line);
    }
    return line;
  }

  /** The thread's run ended or was taken out: its next run becomes ready. */
  private release(threadId: string): void {
    const line = this.waiting.get(threadId);
    const next = line?.shift();
    if (!line?.length) this.waiting.delete(threadId);
    if (next) {
      this.holding.set(threadId, next);
      this.ready.push(next);
      this.due();
    } else {
      this.holding.delete(threadId);
    }
  }

  async current(threadId: string): Promise<string | undefined> {
    return this.holding.get(threadId)?.run.run_id;
  }

  async active(threadId: string): Promise<{ run_id: string; status: RunStatus; delayed: boolean }[]> {
    const out: { run_id: string; status: RunStatus; delayed: boolean }[] = [];
    const holder = this.holding.get(threadId);
    if (holder) out.push({ run_id: holder.run.run_id, status: holder.run.status, delayed: false });
    for (const e of this.waiting.get(threadId) ?? [])
      out.push({ run_id: e.run.run_id, status: "pending", delayed: false });
    for (const e of this.delayed.keys())
      if (e.run.thread_id === threadId) out.push({ run_id: e.run.run_id, status: "pending", delayed: true });
    return out;
  }

  async listActive(threadId: string | null, statuses: RunStatus[]): Promise<string[]> {
    const out: string[] = [];
    for (const { run } of this.entries.values()) {
      if ((threadId === null || run.thread_id === threadId) && statuses.includes(run.status))
        out.push(run.run_id);
    }
    return out;
  }

  async counts(): Promise<{ pending: number; running: number }> {
    let running = 0;
    for (const { run } of this.entries.values()) if (run.status === "running") running++;
    return { pending: this.entries.size - running, running };
  }

  /** Takes ready runs, marking those on a thread running in the store (their attempt: 1, or more when resumed). */
  async claim(_workerId: string, _leaseMs: number, limit: number): Promise<ClaimedRun[]> {
    const taken = this.ready.splice(0, Math.max(0, limit));
    for (const e of taken) e.run.status = "running";
    for (let i = 0; i < taken.length; i++) {
      const { run } = taken[i];
      if (!run.thread_id) continue;
      try {
        run.attempt = await this.storage.runs.start(run.run_id);
      } catch (err) {
        // Not taken after all: back in line, in order, for the next look at the queue.
        const back = taken.slice(i);
        for (const e of back) e.run.status = "pending";
        this.ready.unshift(...back);
        if (i === 0) throw err;
        return taken.slice(0, i).map((e) => e.run);
      }
    }
    return taken.map((e) => e.run);
  }

  /** Leases never expire here: every run taken is still held; the answer carries the cancellations asked for. */
  async heartbeat(
    _workerId: string,
    runIds: string[],
    _leaseMs?: number,
  ): Promise<Map<string, CancelAction | null>> {
    const held = new Map<string, CancelAction | null>();
    for (const id of runIds) {
      const e = this.entries.get(id);
      if (e?.run.status === "running") held.set(id, e.run.cancel_action);
    }
    return held;
  }

  async sweepExpired(): Promise<Leftovers> {
    return { requeued: [], failed: [] };
  }

  /**
   * Takes up the runs a stopped process left in the store: a pending one waits out what is left of its delay;
   * a running one resumes as its next attempt, or fails (with its thread) once it reached `maxAttempts`.
   */
  async recover(maxAttempts: number): Promise<Leftovers> {
    const out: Leftovers = { requeued: [], failed: [] };
    for (const run of await this.storage.runs.inFlight()) {
      // Runs this process already has are not someone else's leftovers.
      if (!run.thread_id || this.entries.has(run.run_id)) continue;
      if (run.status === "running" && run.attempt >= maxAttempts) {
        const error = {
          error: "RunAttemptsExceeded",
          message: `run stopped ${run.attempt} times without finishing`,
        };
        await this.storage.runs.setStatus(run.run_id, "error");
        await this.storage.threads.setState(run.thread_id, { status: "error", error: error as Json });
        out.failed.push({ ...run, status: "error", cancel_action: null });
        continue;
      }
      const { not_before, ...rest } = run;
      const wait = not_before ? Math.max(0, (Date.parse(not_before) - Date.now()) / 1000) : 0;
      this.place(this.track(rest, false, run.attempt), wait);
      out.requeued.push(run.run_id);
    }
    return out;
  }

  /** Runs of a stopping process stay `running` in the store: the next start takes them up (recover). */
  async handBack(): Promise<number> {
    return 0;
  }

  async complete(runId: string): Promise<void> {
    const entry = this.entries.get(runId);
    if (!entry) return;
    this.entries.delete(runId);
    const threadId = entry.run.thread_id;
    if (threadId && this.holding.get(threadId) === entry) this.release(threadId);
  }

  async requestCancel(
    runId: string,
    action: CancelAction,
  ): Promise<{ was: "pending" | "running"; run: ClaimedRun } | null> {
    const entry = this.entries.get(runId);
    if (!entry) return null;
    const { run } = entry;
    if (run.status === "running") {
      run.cancel_action ??= action;
      return { was: "running", run };
    }
    // Out of line before the store is written, so no worker takes it meanwhile.
    clearTimeout(this.delayed.get(entry));
    this.delayed.delete(entry);
    this.entries.delete(runId);
    const threadId = run.thread_id;
    const line = threadId ? this.waiting.get(threadId) : undefined;
    const inLine = line ? line.indexOf(entry) : -1;
    if (inLine >= 0) line!.splice(inLine, 1);
    const inReady = this.ready.indexOf(entry);
    if (inReady >= 0) this.ready.splice(inReady, 1);
    try {
      if (threadId) {
        if (action === "rollback") await this.storage.runs.delete(runId);
        else await this.storage.runs.setStatus(runId, "interrupted");
      }
    } finally {
      // It held its thread (ready): the thread's next run may go.
      if (threadId && this.holding.get(threadId) === entry) this.release(threadId);
    }
    return { was: "pending", run };
  }

  async ended(runId: string): Promise<boolean> {
    return !this.entries.has(runId);
  }

  /** Stateless runs have no record here. */
  async deleteRun(): Promise<void> {}
}
