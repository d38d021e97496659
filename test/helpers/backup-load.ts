// A load of `steps` runs for the backup tests (embedded `hangar backup`, PostgreSQL's pg_dump): several threads,
// each taking its runs one after the other through the SDK, recording what the server acknowledged (the SDK call
// returned) so a test can take a backup in the middle and check that the restored data holds all of it.
import type { Client } from "@langchain/langgraph-sdk";
import { expect } from "vitest";
import { job } from "./runs.ts";
import { waitFor } from "./wait.ts";

export class RunLoad {
  /** Threads created (acknowledged) so far. */
  readonly threads: string[] = [];
  /** Per thread, the labels of its runs whose `runs.wait` returned, in order. */
  readonly acked = new Map<string, string[]>();
  private count = 0;
  private failure: unknown;
  done: Promise<void> = Promise.resolve();

  constructor(
    private client: Client,
    private opts: { threads: number; runsPerThread: number },
  ) {}

  /** Creates the threads, then runs `runsPerThread` runs on each, the threads at once (one run each at a time). */
  start(): void {
    const one = async (t: number) => {
      const { thread_id } = await this.client.threads.create({ metadata: { load: "backup", t } });
      this.threads.push(thread_id);
      this.acked.set(thread_id, []);
      for (let r = 0; r < this.opts.runsPerThread; r++) {
        const label = `t${t}r${r}`;
        const values = (await this.client.runs.wait(thread_id, "steps", {
          input: job({ label, steps: 2, delay_ms: 1 }),
        })) as { log?: string[] };
        if (!values.log?.includes(`${label}:1`))
          throw new Error(`run ${label} answered ${JSON.stringify(values)}`);
        this.acked.get(thread_id)!.push(label);
        this.count++;
      }
    };
    this.done = Promise.all(Array.from({ length: this.opts.threads }, (_, t) => one(t))).then(
      () => undefined,
      (e) => {
        this.failure = e;
        throw e;
      },
    );
    this.done.catch(() => {});
  }

  /** Resolves once `n` runs were acknowledged (fails at once if the load failed). */
  reached(n: number): Promise<unknown> {
    return waitFor(`${n} acknowledged runs (now ${this.count})`, () => {
      if (this.failure) throw this.failure;
      return this.count >= n;
    });
  }

  get acknowledged(): number {
    return this.count;
  }

  /** What was acknowledged until now: thread id to its acknowledged run labels. */
  snapshot(): Map<string, string[]> {
    return new Map([...this.acked].map(([id, labels]) => [id, [...labels]]));
  }
}

/**
 * Checks that `client`'s server (on restored data) has every thread of `before` with every acknowledged run's
 * checkpoints: its state's log holds each run's two steps, and its history a checkpoint after each run's end.
 */
export async function expectAcknowledged(client: Client, before: Map<string, string[]>): Promise<void> {
  for (const [threadId, labels] of before) {
    const thread = await client.threads.get(threadId);
    expect(thread.thread_id).toBe(threadId);
    const history = await client.threads.getHistory<{ log?: string[] }>(threadId, { limit: 1000 });
    const logs = history.map((h) => h.values?.log ?? []);
    for (const label of labels) {
      // The checkpoint written at the run's end: its log ends with the run's last step.
      expect(
        logs.some((log) => log[log.length - 1] === `${label}:1`),
        `thread ${threadId}: the checkpoint that ends run ${label}`,
      ).toBe(true);
    }
  }
}

/** Waits until every run of each thread succeeded (those in flight in a backup are taken up after its restore). */
export async function expectRunsFinish(client: Client, threadIds: Iterable<string>): Promise<void> {
  for (const threadId of threadIds) {
    await waitFor(`the restored runs of ${threadId} to finish`, async () => {
      const runs = await client.runs.list(threadId, { limit: 100 });
      return runs.every((r) => r.status === "success");
    });
  }
}
