// Memory bounded by what is active (issue 26): a server that served many threads, each with a run, keeps nothing
// of them once they are idle but what its bounded caches hold. The heap of the server process is searched for the
// ids of the threads and runs it served (a heap snapshot through its inspector, after a full collection): a
// map, log or cache keyed by thread or run that is never emptied shows up as ids that stay.
import { afterAll, describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { heapStrings, heldBytes, inspectorUrl } from "../helpers/inspector.ts";
import { waitFor } from "../helpers/wait.ts";

/** Threads served (one run each), after WARM that load code and fill what is filled once. */
const THREADS = 600;
const WARM = 100;
const CONCURRENCY = 8;
/** Ids a server may still hold at the end: its small caches (below), the last requests. Far below THREADS / 5. */
const KEPT_AT_MOST = 60;
/** How long the embedded broker keeps a finished, not resumable run's log (src/streams/channel.ts). */
const RUN_LOG_LINGER_MS = 1000;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

// The idle thread logs' cache, small (a few dozen echo threads): what stays beyond it is what is not bounded.
const hangar = useHangar({
  process: true,
  env: { HANGAR_THREAD_LOGS_CACHE_BYTES: "65536" },
  nodeFlags: ["--inspect=127.0.0.1:0"],
});

/** Reads a response's body until `done(text so far)` holds or it ends; then lets go of it. */
async function readUntil(res: Response, done: (text: string) => boolean): Promise<string> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      if (ended) break;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    await reader.cancel();
  }
  return text;
}

/**
 * Serves `n` threads, CONCURRENCY at a time: create, then one run; returns their thread and run ids. Every other
 * run is streamed (read to its end) instead of waited for, and every fifth thread is watched by a thread stream
 * (lifecycle events) from before its run until the run's end, then left.
 */
async function serve(url: string, n: number): Promise<{ threads: string[]; runs: string[] }> {
  const threads: string[] = [];
  const runs: string[] = [];
  let next = 0;
  const post = async (path: string, body: object) => {
    const res = await fetch(`${url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(res.status, `${path}: ${await res.clone().text()}`).toBe(200);
    return res;
  };
  const run = { assistant_id: "chat", input: { messages: [{ role: "user", content: "hello" }] } };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) {
        const { thread_id } = (await (await post("/threads", {})).json()) as { thread_id: string };
        let watched: Promise<string> | undefined;
        if (i % 5 === 0) {
          const res = await fetch(`${url}/threads/${thread_id}/stream?stream_mode=lifecycle`);
          expect(res.status).toBe(200);
          watched = readUntil(res, (text) => text.includes("run_done"));
        }
        let res: Response;
        if (i % 2 === 0) {
          res = await post(`/threads/${thread_id}/runs/wait`, run);
          const values = (await res.json()) as { messages: unknown[] };
          expect(values.messages).toHaveLength(2);
        } else {
          res = await post(`/threads/${thread_id}/runs/stream`, run);
          const text = await readUntil(res, () => false);
          expect(text).toContain("event: values");
          expect(text).not.toContain("event: error");
        }
        if (watched) expect(await watched).toContain("run_done");
        const runId = /\/runs\/([^/]+)$/.exec(res.headers.get("content-location") ?? "")?.[1];
        expect(runId).toBeDefined();
        threads.push(thread_id);
        runs.push(runId!);
      }
    }),
  );
  return { threads, runs };
}

/** Running and pending runs, as /metrics counts them. */
async function activeRuns(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const get = (name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(text)?.[1] ?? NaN);
  return get("hangar_runs_running") + get("hangar_runs_pending");
}

describe("memory", () => {
  const report: string[] = [];
  afterAll(() => {
    if (report.length) console.log(report.join("\n"));
  });

  it(`after ${THREADS} threads each with a run, the idle server holds the ids of almost none`, async () => {
    const { server } = hangar;
    const inspector = inspectorUrl(server.output());
    await serve(server.url, WARM);
    const before = await heldBytes(inspector);

    const served = await serve(server.url, THREADS);
    await waitFor("every run to end", async () => (await activeRuns(server.url)) === 0);
    // A run's log that is not resumable stays a second after its run ends (StreamBroker.finish), for a client
    // still draining it: the last second's runs are let go of before the heap is searched.
    await new Promise((r) => setTimeout(r, RUN_LOG_LINGER_MS * 2));
    const found = new Set<string>();
    for (const s of await heapStrings(inspector)) for (const m of s.matchAll(UUID)) found.add(m[0]);
    const keptThreads = served.threads.filter((id) => found.has(id));
    const keptRuns = served.runs.filter((id) => found.has(id));
    const after = await heldBytes(inspector);
    report.push(
      `memory: ${THREADS} threads served after ${WARM}: the heap holds ${keptThreads.length} of their thread ids, ` +
        `${keptRuns.length} of their run ids; held ${((after - before) / 2 ** 20).toFixed(1)} MB more ` +
        `(heap used + external after a full collection)`,
    );
    expect(keptThreads.length).toBeLessThanOrEqual(KEPT_AT_MOST);
    expect(keptRuns.length).toBeLessThanOrEqual(KEPT_AT_MOST);
  });
});
