/**
 * Benchmark scenarios, written once against the Agent Server HTTP API and run unchanged against Hangar and
 * the peer: create thread, run-wait, streamed run on a thread, stateless streamed run, history of a thread
 * with >= 50 checkpoints, and metadata-filtered thread search over many threads (10,000, and 100,000 in
 * `search-100k`, which the peer skips unless asked: it fills 100k threads far too slowly). Each scenario has an
 * untimed setup (once per server), an optional untimed per-operation `prepare`, and a timed `op` that also
 * checks the answer, so a fast-but-wrong server counts errors instead of winning. Streams are timed to the
 * first SSE event (ttfe), the last SSE event (last) and the end of the response (total).
 */
import { mapConcurrent } from "./measure.ts";
import { getJson, postJson, postJsonSized, postSse, type StreamTiming } from "./client.ts";

export const GRAPH_ID = "chat";
export const INPUT = { messages: [{ role: "user", content: "hi" }] };
export const STREAM_MODE = ["values", "messages-tuple"];

/** Setup concurrency for untimed bulk work (thread pools, the 10,000 search threads). */
export const SETUP_CONCURRENCY = 32;

export interface ScenarioContext {
  url: string;
  /** Threads created for the search scenario. */
  searchThreads: number;
  /** Threads created for the search-100k scenario. */
  bigSearchThreads: number;
}

export interface Scenario<S = any, T = any> {
  id: string;
  title: string;
  /**
   * Timed metrics (ms), in display order. `op` may return further keys (e.g. `bytes`, `events`): they are
   * averaged into the JSON results only.
   */
  metrics: string[];
  /** Untimed, once per server; returns state shared by both concurrency levels. */
  setup?: (ctx: ScenarioContext) => Promise<S>;
  /** Untimed, per level: `count` inputs for `op`. */
  prepare?: (ctx: ScenarioContext, state: S, count: number) => Promise<T[]>;
  op: (ctx: ScenarioContext, state: S, input: T) => Promise<Record<string, number>>;
  /** One line about what the setup did (e.g. how fast it filled the server), for the report. */
  describeSetup?: (ctx: ScenarioContext, state: S) => string;
  /** Why the peer is skipped unless asked for (`--with-peer`); undefined: it runs everywhere. */
  peerOptIn?: string;
}

interface Thread {
  thread_id: string;
  metadata?: Record<string, unknown>;
}

export async function createThread(url: string, metadata?: Record<string, unknown>): Promise<Thread> {
  const thread = await postJson<Thread>(`${url}/threads`, metadata ? { metadata } : {});
  if (!thread || typeof thread.thread_id !== "string") {
    throw new Error(`POST /threads: no thread_id in ${JSON.stringify(thread).slice(0, 200)}`);
  }
  return thread;
}

export function freshThreads(ctx: ScenarioContext, count: number): Promise<string[]> {
  return mapConcurrent(
    Array.from({ length: count }, (_, i) => i),
    SETUP_CONCURRENCY,
    async () => (await createThread(ctx.url)).thread_id,
  );
}

/** Checks a run's final values: the message list must end with the AI answer. */
export function checkValues(values: any, what: string): void {
  const msgs = values?.messages;
  const last = Array.isArray(msgs) ? msgs[msgs.length - 1] : undefined;
  if (!last || (last.type !== "ai" && last.type !== "AIMessage" && last.role !== "assistant")) {
    throw new Error(
      `${what}: expected final messages ending with an AI message, got ${JSON.stringify(values).slice(0, 300)}`,
    );
  }
}

/** Checks a streamed run: values and messages events, no error event; returns the timings. */
export function checkStream(s: StreamTiming, what: string): Record<string, number> {
  const error = s.events.find((e) => e.event === "error");
  if (error) throw new Error(`${what}: error event ${error.data.slice(0, 300)}`);
  const names = new Set(s.events.map((e) => e.event.split("|")[0]));
  if (!names.has("values") || !names.has("messages")) {
    throw new Error(`${what}: expected values and messages events, got [${[...names].join(", ")}]`);
  }
  const lastValues = [...s.events].reverse().find((e) => e.event === "values");
  checkValues(JSON.parse(lastValues!.data), what);
  return {
    ttfe: s.firstEventMs,
    last: s.lastEventMs,
    total: s.totalMs,
    bytes: s.bytes,
    events: s.events.length,
  };
}

/** POST /threads/{id}/runs/wait on the bench graph with the bench input; returns the final values. */
export async function runWait(url: string, threadId: string): Promise<any> {
  return postJson(`${url}/threads/${threadId}/runs/wait`, { assistant_id: GRAPH_ID, input: INPUT });
}

/** The floor of every scenario: one HTTP round trip that does no work (GET /ok). */
export const okScenario: Scenario<void, void> = {
  id: "ok",
  title: "floor: HTTP round trip (GET /ok)",
  metrics: ["latency"],
  async op(ctx) {
    const t0 = performance.now();
    await getJson(`${ctx.url}/ok`);
    return { latency: performance.now() - t0 };
  },
};

export const createThreadScenario: Scenario<void, void> = {
  id: "create-thread",
  title: "create thread (POST /threads)",
  metrics: ["latency"],
  async op(ctx) {
    const t0 = performance.now();
    await createThread(ctx.url);
    return { latency: performance.now() - t0 };
  },
};

export const runWaitScenario: Scenario<void, string> = {
  id: "run-wait",
  title: "run-wait on a new thread (POST /threads/{id}/runs/wait)",
  metrics: ["latency"],
  prepare: (ctx, _s, count) => freshThreads(ctx, count),
  async op(ctx, _s, threadId) {
    const t0 = performance.now();
    const { body: values, bytes } = await postJsonSized(`${ctx.url}/threads/${threadId}/runs/wait`, {
      assistant_id: GRAPH_ID,
      input: INPUT,
    });
    const latency = performance.now() - t0;
    checkValues(values, "runs/wait");
    return { latency, bytes };
  },
};

export const streamThreadScenario: Scenario<void, string> = {
  id: "stream-thread",
  title: "streamed run on a thread (POST /threads/{id}/runs/stream)",
  metrics: ["ttfe", "last", "total"],
  prepare: (ctx, _s, count) => freshThreads(ctx, count),
  async op(ctx, _s, threadId) {
    const s = await postSse(`${ctx.url}/threads/${threadId}/runs/stream`, {
      assistant_id: GRAPH_ID,
      input: INPUT,
      stream_mode: STREAM_MODE,
    });
    return checkStream(s, "threads/runs/stream");
  },
};

export const streamStatelessScenario: Scenario<void, void> = {
  id: "stream-stateless",
  title: "stateless streamed run (POST /runs/stream)",
  metrics: ["ttfe", "last", "total"],
  async op(ctx) {
    const s = await postSse(`${ctx.url}/runs/stream`, {
      assistant_id: GRAPH_ID,
      input: INPUT,
      stream_mode: STREAM_MODE,
    });
    return checkStream(s, "runs/stream");
  },
};

/** The end of a protocol v2 run: its root graph's lifecycle event that is not `running`/`started`. */
function isProtocolRunEnd(ev: { event: string; data: string }): boolean {
  if (ev.event !== "lifecycle") return false;
  const e = JSON.parse(ev.data);
  return (
    e.params?.namespace?.length === 0 && ["completed", "failed", "interrupted"].includes(e.params.data?.event)
  );
}

export const streamProtocolScenario: Scenario<void, string> = {
  id: "stream-protocol",
  title: "protocol v2 run: its events (POST /threads/{id}/stream/events) after run.start (POST .../commands)",
  metrics: ["ttfe", "last", "total"],
  prepare: (ctx, _s, count) => freshThreads(ctx, count),
  async op(ctx, _s, threadId) {
    // The stream is asked for first; the run's events are replayed to it should the command arrive first.
    const stream = postSse(
      `${ctx.url}/threads/${threadId}/stream/events`,
      { channels: ["lifecycle", "values", "messages"] },
      { stopWhen: isProtocolRunEnd },
    );
    const started = await postJson(`${ctx.url}/threads/${threadId}/commands`, {
      id: 1,
      method: "run.start",
      params: { assistant_id: GRAPH_ID, input: INPUT },
    });
    if (started?.type !== "success") throw new Error(`run.start: ${JSON.stringify(started).slice(0, 300)}`);
    const s = await stream;
    const end = s.events.at(-1)!;
    if (!isProtocolRunEnd(end) || !end.data.includes('"completed"')) {
      throw new Error(`stream-protocol: the run did not complete: ${end.data.slice(0, 300)}`);
    }
    if (!s.events.some((e) => e.event === "messages")) throw new Error("stream-protocol: no messages events");
    const values = [...s.events]
      .reverse()
      .find((e) => e.event === "values" && JSON.parse(e.data).params.namespace.length === 0);
    if (!values) throw new Error("stream-protocol: no values event");
    checkValues(JSON.parse(values.data).params.data, "stream-protocol");
    return {
      ttfe: s.firstEventMs,
      last: s.lastEventMs,
      total: s.totalMs,
      bytes: s.bytes,
      events: s.events.length,
    };
  },
};

const HISTORY_LIMIT = 50;

export const historyScenario: Scenario<string, void> = {
  id: "history",
  title: `history, limit ${HISTORY_LIMIT}, of a thread with >= ${HISTORY_LIMIT} checkpoints`,
  metrics: ["latency"],
  async setup(ctx) {
    // Every run-wait on the chat graph adds 3 checkpoints (input, __start__, agent); run until >= 50.
    const { thread_id } = await createThread(ctx.url);
    for (let runs = 0; runs < 40; runs++) {
      checkValues(await runWait(ctx.url, thread_id), "history setup runs/wait");
      if (runs >= 16) {
        const all = await postJson<unknown[]>(`${ctx.url}/threads/${thread_id}/history`, { limit: 100 });
        if (all.length >= HISTORY_LIMIT) return thread_id;
      }
    }
    throw new Error(`history setup: thread has fewer than ${HISTORY_LIMIT} checkpoints after 40 runs`);
  },
  async op(ctx, threadId) {
    const t0 = performance.now();
    const { body: states, bytes } = await postJsonSized<unknown[]>(`${ctx.url}/threads/${threadId}/history`, {
      limit: HISTORY_LIMIT,
    });
    const latency = performance.now() - t0;
    if (!Array.isArray(states) || states.length !== HISTORY_LIMIT) {
      throw new Error(
        `history: expected ${HISTORY_LIMIT} states, got ${Array.isArray(states) ? states.length : typeof states}`,
      );
    }
    return { latency, bytes };
  },
};

const SEARCH_GROUP = 7;
const SEARCH_LIMIT = 10;
/** Keeps the whole run bounded even if a server creates threads very slowly. */
const SEARCH_SETUP_BUDGET_MS = 120_000;

export const searchScenario: Scenario<void, void> = {
  id: "search",
  title: `thread search, metadata filter, limit ${SEARCH_LIMIT}`,
  metrics: ["latency"],
  async setup(ctx) {
    const deadline = performance.now() + SEARCH_SETUP_BUDGET_MS;
    await mapConcurrent(
      Array.from({ length: ctx.searchThreads }, (_, i) => i),
      SETUP_CONCURRENCY,
      (i) => {
        if (performance.now() > deadline) {
          throw new Error(
            `search setup: ${i} threads created, over the ${SEARCH_SETUP_BUDGET_MS / 1000} s budget`,
          );
        }
        return createThread(ctx.url, { bench_group: i % 100, tenant: "bench" });
      },
    );
  },
  async op(ctx) {
    const t0 = performance.now();
    const { body: threads, bytes } = await postJsonSized<Thread[]>(`${ctx.url}/threads/search`, {
      metadata: { bench_group: SEARCH_GROUP },
      limit: SEARCH_LIMIT,
    });
    const latency = performance.now() - t0;
    const expected = Math.min(SEARCH_LIMIT, Math.ceil(ctx.searchThreads / 100));
    if (!Array.isArray(threads) || threads.length !== expected) {
      throw new Error(
        `search: expected ${expected} threads, got ${Array.isArray(threads) ? threads.length : typeof threads}`,
      );
    }
    const wrong = threads.find((t) => t.metadata?.bench_group !== SEARCH_GROUP);
    if (wrong) throw new Error(`search: thread ${wrong.thread_id} does not match the filter`);
    return { latency, bytes };
  },
};

const BIG_SEARCH_TENANTS = 100;
const BIG_SEARCH_TENANT = "t42";
const BIG_SEARCH_KINDS = ["chat", "task", "support"];
/** Untimed fill of search-100k: threads created at once, and the bound on the whole fill. */
const BIG_FILL_CONCURRENCY = 32;
const BIG_FILL_BUDGET_MS = 240_000;

interface BigSearchState {
  threads: number;
  fillMs: number;
}

/**
 * Thread search over 100,000 threads (10,000 with --quick), filtered on metadata matching 1% of them.
 * The threads are created through the API (POST /threads, 32 at a time, untimed; the fill rate is
 * reported), with metadata `{ tenant: "t<i % 100>", kind, seq }`; timed: POST /threads/search with
 * `{ metadata: { tenant: "t42" }, limit: 10 }`, which must answer 10 threads of tenant t42.
 */
export const bigSearchScenario: Scenario<BigSearchState, void> = {
  id: "search-100k",
  title: `thread search over 100,000 threads, metadata filter matching 1%, limit ${SEARCH_LIMIT}`,
  metrics: ["latency"],
  peerOptIn: "the peer fills 100,000 threads far too slowly",
  async setup(ctx) {
    const n = ctx.bigSearchThreads;
    const t0 = performance.now();
    const deadline = t0 + BIG_FILL_BUDGET_MS;
    await mapConcurrent(
      Array.from({ length: n }, (_, i) => i),
      BIG_FILL_CONCURRENCY,
      async (i) => {
        if (performance.now() > deadline) {
          throw new Error(
            `search-100k setup: ${i} of ${n} threads created, over the ${BIG_FILL_BUDGET_MS / 1000} s budget`,
          );
        }
        await createThread(ctx.url, {
          tenant: `t${i % BIG_SEARCH_TENANTS}`,
          kind: BIG_SEARCH_KINDS[i % BIG_SEARCH_KINDS.length],
          seq: i,
        });
      },
    );
    return { threads: n, fillMs: performance.now() - t0 };
  },
  describeSetup: (_ctx, s) =>
    `${s.threads} threads created via POST /threads (${BIG_FILL_CONCURRENCY} at a time) in ` +
    `${(s.fillMs / 1000).toFixed(1)} s = ${Math.round(s.threads / (s.fillMs / 1000))} threads/s`,
  async op(ctx) {
    const t0 = performance.now();
    const { body: threads, bytes } = await postJsonSized<Thread[]>(`${ctx.url}/threads/search`, {
      metadata: { tenant: BIG_SEARCH_TENANT },
      limit: SEARCH_LIMIT,
    });
    const latency = performance.now() - t0;
    const expected = Math.min(SEARCH_LIMIT, Math.ceil(ctx.bigSearchThreads / BIG_SEARCH_TENANTS));
    if (!Array.isArray(threads) || threads.length !== expected) {
      throw new Error(
        `search-100k: expected ${expected} threads, got ${Array.isArray(threads) ? threads.length : typeof threads}`,
      );
    }
    const wrong = threads.find((t) => t.metadata?.tenant !== BIG_SEARCH_TENANT);
    if (wrong) throw new Error(`search-100k: thread ${wrong.thread_id} does not match the filter`);
    return { latency, bytes };
  },
};

export const SERVER_SCENARIOS: Scenario[] = [
  okScenario,
  createThreadScenario,
  runWaitScenario,
  streamThreadScenario,
  streamProtocolScenario,
  streamStatelessScenario,
  historyScenario,
  searchScenario,
  bigSearchScenario,
];
