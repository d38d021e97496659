// Scale-out backend (PostgreSQL + Redis) under faults: a worker SIGKILLed mid-run (another resumes it from its
// last checkpoint as attempt 2), Redis restarted while clients stream a run (a client reconnecting with
// Last-Event-ID misses nothing and gets nothing twice), both faults under a protocol v2 event stream (a client
// reconnecting with `since` gets every later event once, in seq order, and a replay from 0 agrees), and
// PostgreSQL terminating a server's connections (once, while requests or a run are in flight; and again and
// again for 2 s, while requests are made and while runs execute): requests fail cleanly or succeed, the
// process lives on and serves again by itself.
//
// Every deployment here is this file's own: `hangar serve` children on a fresh schema of the machine's
// PostgreSQL (DATABASE_URL) and on a private redis-server started on a free port (the machine's shared Redis
// is never used, let alone restarted). Schemas are dropped, children and redis-servers killed, in afterAll.
// The processes are spawned here rather than by test/helpers/server.ts, which on the embedded backend only
// starts `hangar dev`, so the file runs the same in either vitest project. The graph is the run suites'
// `steps` (test/fixtures/runs-project): one checkpoint per step, `log` gets `<label>:<i>` per step, and its
// `marker_file` records each step's start and completion outside the checkpointer.
import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import type { Client } from "@langchain/langgraph-sdk";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { DATABASE_URL, ident, testRedis } from "../helpers/backend.ts";
import {
  RUNS_CONFIG,
  Scratch,
  SseReader,
  job,
  logNow,
  logOf,
  markerLines,
  readUntil,
  startHeld,
  waitFor,
  waitForLogEntry,
  waitForStatus,
  within,
  type StepsValues,
} from "../helpers/runs.ts";
import { parseSse, type RawSseEvent } from "../helpers/sse.ts";
import { BIN, ROOT, noRetryClient } from "../helpers/server.ts";
import { BOUND_MS } from "../helpers/wait.ts";
import { PROTOCOL_CHANNELS } from "../helpers/protocol-channels.ts";
import { PgRunQueue } from "../../src/runs/postgres-queue.ts";
import type { RunStore } from "../../src/storage/types.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Upper bound of a server's start (tsx compiles the project on a shared machine). */
const START_MS = BOUND_MS;
/** Upper bound of a run that has to survive a fault (recovery included). */
const RUN_MS = BOUND_MS;

const tag = randomUUID().replace(/-/g, "").slice(0, 10);
const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 });
const scratch = new Scratch();
const schemas: string[] = [];
const children = new Set<ChildProcess>();
const redises: RedisServer[] = [];

afterAll(async () => {
  await Promise.all([...children].map((p) => killAndWait(p, "SIGKILL")));
  await Promise.all(redises.map((r) => r.kill("SIGKILL")));
  for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${ident(s)} CASCADE`).catch(() => {});
  await admin.end();
  scratch.cleanup();
});

function exited(p: ChildProcess): boolean {
  return p.exitCode !== null || p.signalCode !== null;
}

function killAndWait(p: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (exited(p)) return Promise.resolve();
  const done = new Promise<void>((res) => p.once("exit", () => res()));
  p.kill(signal);
  return within(`process ${p.pid} to exit after ${signal}`, done, 10_000);
}

/** A loopback port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}

/** A private redis-server (nothing persisted) that a test may kill and start again on the same port. */
class RedisServer {
  proc: ChildProcess | undefined;
  private out = "";
  private constructor(readonly port: number) {}

  static async start(): Promise<RedisServer> {
    const r = new RedisServer(await freePort());
    redises.push(r);
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const args = ["--port", String(this.port), "--bind", "127.0.0.1"];
    args.push("--save", "", "--appendonly", "no", "--daemonize", "no");
    const proc = spawn("redis-server", args, { stdio: ["ignore", "pipe", "pipe"] });
    this.proc = proc;
    proc.stdout!.on("data", (d) => (this.out += d));
    proc.stderr!.on("data", (d) => (this.out += d));
    proc.once("error", (e) => (this.out += `spawn failed: ${e.message}\n`));
    await waitFor(
      () => `redis-server on port ${this.port} to start:\n${this.out}`,
      async () => {
        if (exited(proc)) throw new Error(`redis-server on port ${this.port} exited:\n${this.out}`);
        const client = testRedis(this.url);
        client.on("error", () => {});
        try {
          await client.connect();
          return (await client.ping()) === "PONG";
        } finally {
          client.disconnect();
        }
      },
      10_000,
      50,
    );
  }

  async kill(signal: NodeJS.Signals): Promise<void> {
    if (this.proc) await killAndWait(this.proc, signal);
  }
}

/** One deployment: a schema and Redis prefix that several `serve` processes share. */
interface Deployment {
  schema: string;
  prefix: string;
  redis: RedisServer;
}

function deployment(redis: RedisServer): Deployment {
  const schema = `faults_${tag}_${schemas.length}`;
  schemas.push(schema);
  return { schema, prefix: `${schema}:`, redis };
}

interface Serve {
  name: string;
  proc: ChildProcess;
  pid: number;
  url: string;
  /** A no-retry SDK client (api/all only). */
  client: Client;
  output: () => string;
}

/** Env that must come from the deployment, never from the environment of the test run. */
const BACKEND_ENV = ["DATABASE_URL", "REDIS_URL", "HANGAR_DATABASE_SCHEMA", "HANGAR_REDIS_PREFIX", "PORT"];

/** Starts `hangar serve --mode <mode>` on `dep`; resolves once it prints where it listens. */
async function serve(
  name: string,
  mode: "api" | "worker" | "all",
  dep: Deployment,
  env: Record<string, string> = {},
): Promise<Serve> {
  const base = { ...process.env };
  for (const k of BACKEND_ENV) delete base[k];
  const args = [BIN, "serve", "--config", RUNS_CONFIG, "--port", "0", "--host", "127.0.0.1", "--mode", mode];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...base,
      DATABASE_URL,
      REDIS_URL: dep.redis.url,
      HANGAR_DATABASE_SCHEMA: dep.schema,
      HANGAR_REDIS_PREFIX: dep.prefix,
      HANGAR_LEASE_SECONDS: "2",
      HANGAR_QUEUE_POLL_MS: "200",
      HANGAR_SHUTDOWN_GRACE_SECONDS: "2",
      HANGAR_CONNECT_TIMEOUT_SECONDS: "20",
      // Without graph threads, as the harness's servers (test/helpers/server.ts baseEnv), unless the run sets them.
      HANGAR_GRAPH_THREADS: process.env.HANGAR_GRAPH_THREADS ?? "0",
      ...env,
    },
  });
  children.add(proc);
  proc.once("exit", () => children.delete(proc));
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = await within(
    `${name} to listen`,
    new Promise<string>((res, rej) => {
      const onData = () => {
        const m = /listening on (http:\/\/[^\s"]+)/.exec(out);
        if (m) {
          proc.stdout!.off("data", onData);
          res(m[1]);
        }
      };
      proc.stdout!.on("data", onData);
      proc.once("exit", (code, signal) =>
        rej(new Error(`${name} exited (${code ?? signal}) before listening:\n${out}`)),
      );
    }),
    START_MS,
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n--- ${name} output ---\n${out}`);
  });
  return { name, proc, pid: proc.pid!, url, client: noRetryClient(url), output: () => out };
}

/** The last lines of each server's output, printed when a test fails. */
function dumpOnFailure(servers: () => (Serve | undefined)[]): void {
  onTestFailed(() => {
    for (const s of servers()) {
      if (s) console.log(`--- ${s.name} (pid ${s.pid}) ---\n${s.output().slice(-6000)}`);
    }
  });
}

async function runRow(
  dep: Deployment,
  runId: string,
): Promise<{ status: string; worker_id: string | null; attempt: number } | undefined> {
  const { rows } = await admin.query(
    `SELECT status, worker_id, attempt FROM ${ident(dep.schema)}.runs WHERE run_id = $1`,
    [runId],
  );
  return rows[0];
}

const path = (threadId: string, runId: string) => `/threads/${threadId}/runs/${runId}/stream`;

/** The values a join or wait answers with, within RUN_MS. */
function valuesOf(what: string, p: Promise<unknown>): Promise<StepsValues> {
  return within(what, p, RUN_MS) as Promise<StepsValues>;
}

const ids = (events: RawSseEvent[]) => events.map((e) => Number(e.id));

/** Event ids are integers, each greater than the one before (so no event was delivered twice). */
function expectIncreasingIds(events: RawSseEvent[], what: string): void {
  const seq = ids(events);
  expect(
    seq.every((id, i) => Number.isSafeInteger(id) && (i === 0 || id > seq[i - 1])),
    `${what}: ids ${JSON.stringify(seq)}`,
  ).toBe(true);
}

/** The `log` of each `values` event, in order. */
const valueLogs = (events: RawSseEvent[]) =>
  events.filter((e) => e.event === "values").map((e) => (e.data as StepsValues).log);

/**
 * Every `values` log extends the one before by at most one step (events in order, none missing between
 * the first and the last), and the last is `full`.
 */
function expectContiguousValues(events: RawSseEvent[], full: string[], what: string): void {
  const logs = valueLogs(events);
  const desc = `${what}: values logs ${JSON.stringify(logs)}`;
  expect(logs.length, desc).toBeGreaterThan(0);
  for (let i = 1; i < logs.length; i++) {
    expect(logs[i].slice(0, logs[i - 1].length), desc).toEqual(logs[i - 1]);
    expect(logs[i].length - logs[i - 1].length, desc).toBeLessThanOrEqual(1);
  }
  expect(logs.at(-1), desc).toEqual(full);
}

/**
 * For a describe block: one api and two worker processes of a fresh deployment on its own Redis, started before
 * its tests (the processes and Redis are ended by the file's afterAll).
 */
function useCluster() {
  const c = {} as { dep: Deployment; redis: RedisServer; api: Serve; workers: Serve[] };
  beforeAll(
    async () => {
      c.redis = await RedisServer.start();
      c.dep = deployment(c.redis);
      // The api starts first (it migrates the fresh schema), then both workers at once.
      c.api = await serve("api", "api", c.dep);
      c.workers = await Promise.all([serve("worker 1", "worker", c.dep), serve("worker 2", "worker", c.dep)]);
    },
    2 * START_MS + 10_000,
  );
  return c;
}

describe("a worker SIGKILLed mid-run", () => {
  const cluster = useCluster();

  it("another worker resumes the run from its last checkpoint as attempt 2: nothing lost, nothing done twice", async () => {
    const { api, workers, dep } = cluster;
    dumpOnFailure(() => [api, ...workers]);
    const client = api.client;
    const marker = scratch.marker();
    const STEPS = 8;
    const { thread_id } = await client.threads.create();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "k", steps: STEPS, delay_ms: 400, marker_file: marker }),
      streamMode: ["values", "updates"],
      streamResumable: true,
    });
    // A client following the run on the API process, connected through the whole fault.
    const live = await SseReader.open(api.url, path(thread_id, run.run_id), { "Last-Event-ID": "-1" });
    expect(live.status).toBe(200);
    const liveEvents = live.rest("the live stream of the run");
    liveEvents.catch(() => {});

    // Two steps are checkpointed; find the worker holding the run and kill it.
    await waitForLogEntry(client, thread_id, "k:1");
    const row = await runRow(dep, run.run_id);
    expect(row?.status).toBe("running");
    expect(row?.attempt).toBe(1);
    const holderPid = Number(row!.worker_id!.split(":").at(-2));
    const holder = workers.find((w) => w.pid === holderPid);
    expect(holder, `worker_id ${row!.worker_id} is neither worker`).toBeDefined();
    const survivor = workers.find((w) => w !== holder)!;
    await killAndWait(holder!.proc, "SIGKILL");
    // What the dead worker had checkpointed: nothing can be added to it any more.
    const before = await logNow(client, thread_id);
    expect(before.length).toBeGreaterThanOrEqual(2);
    expect(before.length).toBeLessThan(STEPS);
    expect(before).toEqual(logOf("k", before.length));

    // The survivor takes the run over once the lease expired, and finishes it.
    const values = await valuesOf("the join of the run", client.runs.join(thread_id, run.run_id));
    expect(values.log).toEqual(logOf("k", STEPS));
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("success");
    const after = await runRow(dep, run.run_id);
    expect(after?.status).toBe("success");
    expect(after?.attempt).toBe(2);
    expect(Number(after?.worker_id?.split(":").at(-2))).toBe(survivor.pid);
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual(logOf("k", STEPS));

    // Steps checkpointed before the kill ran once; every step completed at least once.
    const lines = markerLines(marker);
    for (const entry of before)
      expect(
        lines.filter((l) => l === `done ${entry}`),
        entry,
      ).toHaveLength(1);
    for (const entry of logOf("k", STEPS)) expect(lines, entry).toContain(`done ${entry}`);
    // Only the step that was running when the worker died may have started twice.
    const restarted = logOf("k", STEPS).filter((e) => lines.filter((l) => l === `start ${e}`).length > 1);
    expect(restarted.length, JSON.stringify(lines)).toBeLessThanOrEqual(1);

    // The live client saw both attempts, with increasing ids, and the full log at the end.
    const events = await liveEvents;
    const attempts = events.filter((e) => e.event === "metadata").map((e) => (e.data as any).attempt);
    expect(attempts).toEqual([1, 2]);
    expect(events.filter((e) => e.event === "error")).toEqual([]);
    expectIncreasingIds(events, "live stream");
    expect(valueLogs(events).at(-1)).toEqual(logOf("k", STEPS));

    // Replayed from the start after the end: the same events.
    const replay = await SseReader.open(api.url, path(thread_id, run.run_id), { "Last-Event-ID": "-1" });
    const replayed = await replay.rest("the replay of the run");
    expect(replayed.map((e) => [e.id, e.event])).toEqual(events.map((e) => [e.id, e.event]));
    // The shape of the first event: exactly the run and its attempt, as the official servers send it.
    expect(replayed.find((e) => e.event === "metadata" && (e.data as any).attempt === 2)?.data).toEqual({
      run_id: run.run_id,
      attempt: 2,
    });
  });

  it("a worker stalled past its lease: its run and the next, cancelled while the run waits to be taken up again, leave the thread idle", async () => {
    const { api, workers, dep } = cluster;
    dumpOnFailure(() => [api, ...workers]);
    const client = api.client;
    const { thread_id } = await client.threads.create();
    const held = await startHeld(client, thread_id, "h", 1);
    const waiting = await client.runs.create(thread_id, "steps", { input: job({ label: "hw", steps: 1 }) });
    expect(waiting.status).toBe("pending");
    const holderPid = Number((await runRow(dep, held.run_id))!.worker_id!.split(":").at(-2));
    const holder = workers.find((w) => w.pid === holderPid)!;
    // The workers stop answering, as on a machine too busy to run their heartbeats (every one, so that none
    // takes the run up again before the cancel) ...
    const alive = workers.filter((w) => !exited(w.proc));
    for (const w of alive) process.kill(w.pid, "SIGSTOP");
    try {
      // ... the run's lease expires, and a sweep (what every worker's sweeper runs) queues it again.
      const queue = new PgRunQueue(admin, dep.schema, null as unknown as RunStore);
      await waitFor("the held run's lease to expire and a sweep to queue it again", async () =>
        (await queue.sweepExpired(3)).requeued.includes(held.run_id),
      );
      expect(await runRow(dep, held.run_id)).toMatchObject({ status: "pending", attempt: 2 });
      // Both are cancelled while they wait: the held run's steps so far stay, the waiting one never starts.
      await client.runs.cancelMany({ threadId: thread_id, runIds: [held.run_id, waiting.run_id] });
    } finally {
      for (const w of alive) process.kill(w.pid, "SIGCONT");
    }
    for (const id of [held.run_id, waiting.run_id])
      await waitForStatus(client, thread_id, id, ["interrupted"]);
    // The stalled worker comes back, finds its lease lost and stops the run there; its end is not recorded.
    await waitFor("the holder to let go of the run", () => holder.output().includes("run lease lost"));
    expect((await client.threads.get(thread_id)).status).toBe("idle");
    expect(await logNow(client, thread_id)).toEqual(["h:0"]);
    const next = await valuesOf(
      "a run after the cancel",
      client.runs.wait(thread_id, "steps", { input: job({ label: "n", steps: 1 }) }),
    );
    expect(next.log).toEqual(["h:0", "n:0"]);
  });
});

describe("Redis restarted while a client streams a run", () => {
  let dep: Deployment;
  let redis: RedisServer;
  let api: Serve | undefined;
  let worker: Serve | undefined;

  beforeAll(
    async () => {
      redis = await RedisServer.start();
      dep = deployment(redis);
      api = await serve("api", "api", dep);
      // The worker polls the queue rarely: it starts runs on the wake-up signal (Redis pub/sub), so a run
      // after the restart also shows that its subscription came back.
      worker = await serve("worker", "worker", dep, { HANGAR_QUEUE_POLL_MS: "60000" });
    },
    2 * START_MS + 10_000,
  );

  it("reconnecting with Last-Event-ID misses nothing and gets nothing twice; the server goes on working", async () => {
    dumpOnFailure(() => [api, worker]);
    const client = api!.client;
    const STEPS = 12;
    const full = logOf("r", STEPS);
    const { thread_id } = await client.threads.create();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "r", steps: STEPS, delay_ms: 300 }),
      streamMode: ["values"],
      streamResumable: true,
    });
    const p = path(thread_id, run.run_id);
    // One client stays connected to the API process through the restart; the other drops its connection
    // when Redis dies and comes back with Last-Event-ID.
    const stay = await SseReader.open(api!.url, p, { "Last-Event-ID": "-1" });
    const stayEvents = stay.rest("the stream of the client that stays connected");
    stayEvents.catch(() => {});
    const first = await SseReader.open(api!.url, p, { "Last-Event-ID": "-1" });
    expect(first.status).toBe(200);
    // The next values event comes a step (300 ms) later: Redis dies before anything else is published.
    const head = await first.until(
      "the values event of the third step",
      (e) => e.event === "values" && (e.data as StepsValues).log.length >= 3,
    );
    await redis.kill("SIGKILL");
    first.close();
    const lastId = head.at(-1)!.id!;
    await sleep(1000);
    await redis.start();

    const second = await SseReader.open(api!.url, p, { "Last-Event-ID": lastId });
    expect(second.status).toBe(200);
    const tail = await second.rest("the resumed stream");
    // Events published after the restart (or buffered while Redis was down) arrived, after lastId.
    expect(valueLogs(tail).length).toBeGreaterThan(0);
    expect(Number(tail[0].id)).toBeGreaterThan(Number(lastId));
    expect(tail.filter((e) => e.event === "error")).toEqual([]);
    const seen = [...head, ...tail];
    expectIncreasingIds(seen, "reconnecting client");
    expectContiguousValues(seen, full, "reconnecting client");

    const stayed = await stayEvents;
    expectIncreasingIds(stayed, "connected client");
    expectContiguousValues(stayed, full, "connected client");

    const values = await valuesOf("the join of the run", client.runs.join(thread_id, run.run_id));
    expect(values.log).toEqual(full);
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("success");
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual(full);

    // No restart needed: a new run (started by the worker on the wake-up signal) streams normally, and
    // its log is resumable.
    const other = (await client.threads.create()).thread_id;
    const next = await within(
      "a streamed run after the restart",
      (async () => {
        const parts: { event: string; data: any }[] = [];
        for await (const part of client.runs.stream(other, "steps", {
          input: job({ label: "n", steps: 3, delay_ms: 10 }),
          streamMode: "values",
          streamResumable: true,
        })) {
          parts.push(part);
        }
        return parts;
      })(),
      RUN_MS,
    );
    const meta = next.find((e) => e.event === "metadata")?.data as { run_id: string } | undefined;
    expect(meta?.run_id).toBeTypeOf("string");
    expect(next.filter((e) => e.event === "values").at(-1)?.data.log).toEqual(logOf("n", 3));
    expect((await client.runs.get(other, meta!.run_id)).status).toBe("success");
    const replay = await SseReader.open(api!.url, path(other, meta!.run_id), { "Last-Event-ID": "-1" });
    const replayed = await replay.rest("the replay of the run after the restart");
    expectIncreasingIds(replayed, "replay after the restart");
    expect(valueLogs(replayed).at(-1)).toEqual(logOf("n", 3));
  });
});

/** Every protocol v2 channel (the `steps` graph writes lifecycle, values, updates, tasks and checkpoints). */
const CHANNELS = [...PROTOCOL_CHANNELS, "input"];

/** A protocol v2 event as `POST /threads/{id}/stream/events` sends it. */
interface ProtocolEvent {
  type: "event";
  seq: number;
  event_id: string;
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: any };
}

/** The SSE events of a response body, as they arrive. */
async function* sseEvents(body: AsyncIterable<Uint8Array>): AsyncGenerator<RawSseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    const blocks = buffer.split(/\r?\n\r?\n/);
    buffer = blocks.pop() ?? "";
    for (const block of blocks) yield* parseSse(block);
  }
}

/** A client of a thread's protocol event stream (every channel), which stays open until `close()`. */
class ProtocolStream {
  private constructor(
    private readonly controller: AbortController,
    private readonly events: AsyncIterator<ProtocolEvent>,
  ) {}

  /** Opens the stream (after `since`, if given); resolves once the server answered 200. */
  static async open(baseUrl: string, threadId: string, since?: number): Promise<ProtocolStream> {
    const controller = new AbortController();
    const res = await fetch(new URL(`/threads/${threadId}/stream/events`, baseUrl), {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ channels: CHANNELS, ...(since === undefined ? {} : { since }) }),
      signal: controller.signal,
    });
    if (res.status !== 200) throw new Error(`stream/events answered ${res.status}: ${await res.text()}`);
    async function* events(): AsyncGenerator<ProtocolEvent> {
      for await (const raw of sseEvents(res.body as unknown as AsyncIterable<Uint8Array>)) {
        // The SSE id is the event's seq, its name the event's method.
        const ev = raw.data as ProtocolEvent;
        expect(raw.id, JSON.stringify(raw)).toBe(String(ev.seq));
        expect(raw.event, JSON.stringify(raw)).toBe(ev.method);
        expect(ev.event_id, JSON.stringify(raw)).toBe(String(ev.seq));
        yield ev;
      }
    }
    return new ProtocolStream(controller, events());
  }

  /** What the thread's log holds from its start to the run's end, read by a new client after the run. */
  static async replay(baseUrl: string, threadId: string): Promise<ProtocolEvent[]> {
    const stream = await ProtocolStream.open(baseUrl, threadId, 0);
    try {
      return await stream.until("the replay of the run", isRootEnd);
    } finally {
      stream.close();
    }
  }

  /** Reads events until `stop(event)` holds (that event included), within BOUND_MS. */
  until(what: string, stop: (ev: ProtocolEvent) => boolean): Promise<ProtocolEvent[]> {
    return readUntil(what, this.events, stop);
  }

  /** Closes the connection (the client goes away). */
  close(): void {
    this.controller.abort();
  }
}

/** The root graph's end: its lifecycle event completed, failed or interrupted. */
const isRootEnd = (e: ProtocolEvent) =>
  e.method === "lifecycle" &&
  e.params.namespace.length === 0 &&
  ["completed", "failed", "interrupted"].includes(e.params.data?.event);

/** The start of step `i` of a `steps` run (its task, with the step's input): the last event before its delay. */
const isStepStart = (i: number) => (e: ProtocolEvent) =>
  e.method === "tasks" &&
  e.params.data?.name === "step" &&
  !("result" in e.params.data) &&
  e.params.data.input?.log?.length === i;

/** Starts a protocol run of the `steps` graph on the thread; returns its run id. */
async function runStart(baseUrl: string, threadId: string, input: unknown): Promise<string> {
  const res = await fetch(new URL(`/threads/${threadId}/commands`, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: 1, method: "run.start", params: { assistant_id: "steps", input } }),
  });
  const body = (await res.json()) as any;
  expect(body, JSON.stringify(body)).toMatchObject({ type: "success", id: 1 });
  return body.result.run_id as string;
}

/** The thread's values, as the protocol's state.get answers them. */
async function stateValues(baseUrl: string, threadId: string): Promise<StepsValues> {
  const res = await fetch(new URL(`/threads/${threadId}/commands`, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ id: 2, method: "state.get" }),
  });
  const body = (await res.json()) as any;
  expect(body, JSON.stringify(body)).toMatchObject({ type: "success", id: 2 });
  return body.result.values as StepsValues;
}

const seqs = (events: ProtocolEvent[]) => events.map((e) => e.seq);

/** Seqs are integers, each greater than the one before (so none is there twice). */
function expectIncreasingSeqs(events: ProtocolEvent[], what: string): void {
  const s = seqs(events);
  expect(
    s.every((n, i) => Number.isSafeInteger(n) && (i === 0 || n > s[i - 1])),
    `${what}: seqs ${JSON.stringify(s)}`,
  ).toBe(true);
}

/** What an event says about the run, without what differs between two runs of one input (times, ids). */
function gist(e: ProtocolEvent): unknown[] {
  const { namespace, node, data } = e.params;
  if (e.method === "tasks")
    return [
      "tasks",
      namespace,
      data.name,
      "result" in data ? { result: data.result } : { input: data.input },
    ];
  if (e.method === "checkpoints") return ["checkpoints", namespace, data.step, data.source];
  return [e.method, namespace, node, data];
}

/**
 * A run's status once recorded as ended. A protocol stream's root `completed` event comes from the graph, before the
 * worker records the run's end (its thread's state and the run's status, in one statement): a read right after the
 * stream ended may still see `running`.
 */
const endedStatus = (client: Client, threadId: string, runId: string): Promise<string> =>
  waitFor(`run ${runId} recorded as ended`, async () => {
    const { status } = await client.runs.get(threadId, runId);
    return status === "pending" || status === "running" ? undefined : status;
  });

/** The log that each root `updates` event of the `step` node adds, in order. */
const stepUpdates = (events: ProtocolEvent[]) =>
  events
    .filter((e) => e.method === "updates" && e.params.namespace.length === 0 && e.params.node === "step")
    .flatMap((e) => e.params.data.log as string[]);

/** The `log` of the last root values event. */
const lastLog = (events: ProtocolEvent[]) =>
  events.filter((e) => e.method === "values" && e.params.namespace.length === 0).at(-1)?.params.data.log;

describe("protocol v2 events under faults: seq survives a Redis restart and a worker change", () => {
  const cluster = useCluster();

  it("Redis restarted mid-run: reconnecting with since gets every later event once, in seq order", async () => {
    const { api, workers, redis } = cluster;
    dumpOnFailure(() => [api, ...workers]);
    const url = api.url;
    const client = api.client;
    const STEPS = 6;
    // The run holds at the start of step 2 until the gate opens: Redis dies while nothing is being published
    // (what it held is lost with it: it persists nothing).
    const gate = scratch.gate();
    const input = job({ label: "r", steps: STEPS, delay_ms: 200, hold_at: 2, gate_file: gate.file });
    const threadId = randomUUID();
    // One client stays connected to the API process through the restart; the other leaves when Redis dies and
    // comes back with `since`.
    const stay = await ProtocolStream.open(url, threadId);
    const stayEvents = stay.until("the run's end on the connected client", isRootEnd);
    stayEvents.catch(() => {});
    const first = await ProtocolStream.open(url, threadId);
    const runId = await runStart(url, threadId, input);
    const head = await first.until("the start of step r:2", isStepStart(2));
    await redis.kill("SIGKILL");
    first.close();
    const since = head.at(-1)!.seq;
    // Meanwhile the run goes on: what steps r:2 and r:3 publish waits in the worker for Redis to be back.
    gate.open();
    await waitForLogEntry(client, threadId, "r:3");
    await redis.start();

    const second = await ProtocolStream.open(url, threadId, since);
    const tail = await second.until("the run's end after the restart", isRootEnd);
    second.close();
    expect(tail[0].seq).toBeGreaterThan(since);
    const seen = [...head, ...tail];
    expectIncreasingSeqs(seen, "reconnecting client");
    expect(lastLog(seen)).toEqual(logOf("r", STEPS));
    expect(tail.at(-1)!.params.data.event).toBe("completed");

    // The connected client saw the same events, with the same seqs.
    const stayed = await stayEvents;
    stay.close();
    expect(seqs(stayed)).toEqual(seqs(seen));
    expect(stayed).toEqual(seen);

    // A replay from 0 after the end: the thread's log now holds what was published after the restart, which is
    // what the client got after `since` (the events before the restart died with Redis). It may also hold the last
    // events from before the restart, with their seqs: a publish whose reply the worker had not read when Redis
    // died is sent again on reconnecting (Redis may have applied it, the worker cannot know). So the replay is a
    // run of the events the client saw, ending with them, and holding every event after `since`.
    const replayed = await ProtocolStream.replay(url, threadId);
    expect(replayed.length).toBeGreaterThanOrEqual(tail.length);
    expect(seqs(replayed)).toEqual(seqs(seen.slice(seen.length - replayed.length)));
    expect(replayed).toEqual(seen.slice(seen.length - replayed.length));

    expect(await endedStatus(client, threadId, runId)).toBe("success");
    expect((await stateValues(url, threadId)).log).toEqual(logOf("r", STEPS));

    // Nothing lost or doubled across the restart, also before it: the same input on another thread (its gate is
    // open), streamed after the restart without a fault, gives the same events (but for times and ids).
    const other = randomUUID();
    const ref = await ProtocolStream.open(url, other);
    await runStart(url, other, input);
    const reference = await ref.until("the run after the restart", isRootEnd);
    ref.close();
    expectIncreasingSeqs(reference, "run after the restart");
    expect(seen.map(gist)).toEqual(reference.map(gist));
  });

  it("the worker running it SIGKILLed mid-run: reconnecting with since gets the rest; a replay from 0 is what the client saw", async () => {
    const { api, workers, dep } = cluster;
    dumpOnFailure(() => [api, ...workers]);
    const url = api.url;
    const client = api.client;
    const STEPS = 6;
    const full = logOf("k", STEPS);
    // The run holds at the start of step k:2 until the gate opens: the worker dies with nothing being published.
    const gate = scratch.gate();
    const threadId = randomUUID();
    const live = await ProtocolStream.open(url, threadId);
    const liveEvents = live.until("the run's end on the connected client", isRootEnd);
    liveEvents.catch(() => {});
    const first = await ProtocolStream.open(url, threadId);
    const input = job({ label: "k", steps: STEPS, delay_ms: 200, hold_at: 2, gate_file: gate.file });
    const runId = await runStart(url, threadId, input);
    // Steps k:0 and k:1 are checkpointed and step k:2 holds: find the worker holding the run and kill it.
    const head = await first.until("the start of step k:2", isStepStart(2));
    const before = await waitForLogEntry(client, threadId, "k:1");
    expect(before).toEqual(logOf("k", 2));
    const row = await runRow(dep, runId);
    expect(row?.status).toBe("running");
    expect(row?.attempt).toBe(1);
    const holderPid = Number(row!.worker_id!.split(":").at(-2));
    const holder = workers.find((w) => w.pid === holderPid);
    expect(holder, `worker_id ${row!.worker_id} is neither worker`).toBeDefined();
    const survivor = workers.find((w) => w !== holder)!;
    await killAndWait(holder!.proc, "SIGKILL");
    first.close();
    gate.open();
    const since = head.at(-1)!.seq;

    // The survivor takes the run over once its lease expired; the client comes back with `since`.
    const second = await ProtocolStream.open(url, threadId, since);
    const tail = await second.until("the run's end after the worker died", isRootEnd);
    second.close();
    expect(tail[0].seq).toBeGreaterThan(since);
    const seen = [...head, ...tail];
    expectIncreasingSeqs(seen, "reconnecting client");
    expect(tail.at(-1)!.params.data.event).toBe("completed");
    expect(lastLog(seen)).toEqual(full);

    // The connected client and a replay from 0 after the end: the same events, with the same seqs.
    const stayed = await liveEvents;
    live.close();
    expect(stayed).toEqual(seen);
    const replayed = await ProtocolStream.replay(url, threadId);
    expect(seqs(replayed)).toEqual(seqs(seen));
    expect(replayed).toEqual(seen);

    expect(await endedStatus(client, threadId, runId)).toBe("success");
    const after = await runRow(dep, runId);
    expect(after?.status).toBe("success");
    expect(after?.attempt).toBe(2);
    expect(Number(after?.worker_id?.split(":").at(-2))).toBe(survivor.pid);
    expect((await client.runs.get(threadId, runId)).status).toBe("success");
    expect((await stateValues(url, threadId)).log).toEqual(full);

    // Observed: attempt 2 streams from the checkpoint it resumed under new seqs, after attempt 1's events: a
    // new root lifecycle `running`, that checkpoint's `checkpoints` and `values` events again, and the start
    // of step k:2 again. So the root starts twice and ends once; the steps checkpointed before the kill are
    // not run again, and every step's update comes once.
    const isRootStart = (e: ProtocolEvent) =>
      e.method === "lifecycle" && e.params.namespace.length === 0 && e.params.data.event === "running";
    const rootLifecycle = seen
      .filter((e) => e.method === "lifecycle" && e.params.namespace.length === 0)
      .map((e) => e.params.data.event);
    expect(rootLifecycle).toEqual(["running", "running", "completed"]);
    const restart = seen.findIndex((e, i) => i > 0 && isRootStart(e));
    expect(restart).toBe(head.length);
    const [attempt1, attempt2] = [seen.slice(0, restart), seen.slice(restart)];
    expect(stepUpdates(attempt1)).toEqual(before);
    expect(stepUpdates(attempt2)).toEqual(full.slice(before.length));
    expect(attempt2.find((e) => e.method === "values")?.params.data.log).toEqual(before);
  });
});

describe("PostgreSQL terminating a server's connections", () => {
  let dep: Deployment;
  let server: Serve | undefined;

  beforeAll(async () => {
    dep = deployment(await RedisServer.start());
    server = await serve("all", "all", dep);
  }, START_MS + 10_000);

  /**
   * Terminates every backend of the server (found by its application_name), never another; returns how
   * many were signalled (one that exited meanwhile is not).
   */
  async function terminateBackends(): Promise<number> {
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE application_name = $1 AND pid <> pg_backend_pid()`,
      [`hangar all ${server!.pid}`],
    );
    return rows.filter((r) => r.ok === true).length;
  }

  /**
   * Terminates the server's backends again and again (every few ms) while `during` runs, so that every
   * connection it opens dies at once: for the server, PostgreSQL is as good as unreachable meanwhile.
   * Returns what `during` returned and how many backends were terminated.
   */
  async function storm<T>(during: () => Promise<T>): Promise<{ result: T; terminated: number }> {
    let storming = true;
    const killer = (async () => {
      let n = 0;
      while (storming) {
        n += await terminateBackends();
        await sleep(5);
      }
      return n;
    })();
    let result: T;
    try {
      result = await during();
    } finally {
      storming = false;
    }
    return { result, terminated: await killer };
  }

  interface Answer {
    what: string;
    status: number | string;
    contentType?: string | null;
    json?: any;
    text?: string;
  }

  async function request(what: string, method: string, reqPath: string, body?: unknown): Promise<Answer> {
    try {
      const res = await fetch(new URL(reqPath, server!.url), {
        method,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { what, status: res.status, contentType: res.headers.get("content-type"), json, text };
    } catch (e) {
      return { what, status: `no answer: ${(e as Error).message}` };
    }
  }

  /** A 2xx, or a clean failure: a 5xx with a JSON body that says something. Never a 4xx, hang or reset. */
  function expectCleanAnswer(a: Answer): void {
    const desc = JSON.stringify(a);
    expect(typeof a.status, desc).toBe("number");
    const status = a.status as number;
    expect(status < 300 || status >= 500, desc).toBe(true);
    if (status >= 500) {
      expect(a.contentType, desc).toMatch(/application\/json/);
      expect(a.json, desc).toHaveProperty("detail");
    }
  }

  it("requests in flight and right after fail cleanly or succeed; then the server serves threads and runs again by itself", async () => {
    dumpOnFailure(() => [server]);
    const client = server!.client;
    // Some traffic first, so the pool holds several connections.
    const { thread_id } = await client.threads.create();
    const warm = await valuesOf(
      "a first run",
      client.runs.wait(thread_id, "steps", { input: job({ label: "w", steps: 2, delay_ms: 1 }) }),
    );
    expect(warm.log).toEqual(logOf("w", 2));

    const burst = (round: string, withRun = true) => [
      request(`${round}: create thread`, "POST", "/threads", {}),
      request(`${round}: search threads`, "POST", "/threads/search", {}),
      request(`${round}: get thread`, "GET", `/threads/${thread_id}`),
      request(`${round}: thread state`, "GET", `/threads/${thread_id}/state`),
      ...(withRun
        ? [
            request(`${round}: create run`, "POST", `/threads/${thread_id}/runs`, {
              assistant_id: "steps",
              input: job({ label: round, steps: 2, delay_ms: 1 }),
              multitask_strategy: "enqueue",
            }),
          ]
        : []),
      request(`${round}: ok`, "GET", "/ok"),
    ];
    // Runs accepted are not left behind: they run (one by one, the thread's line is FIFO) and succeed.
    const accepted: string[] = [];
    const settle = async (answers: Answer[]) => {
      for (const a of answers) expectCleanAnswer(a);
      expect(exited(server!.proc), "the server process died").toBe(false);
      for (const a of answers.filter((x) => x.what.endsWith("create run") && x.status === 200)) {
        const runId = a.json.run_id as string;
        await within(`the run of "${a.what}"`, client.runs.join(thread_id, runId), RUN_MS);
        expect((await client.runs.get(thread_id, runId)).status, a.what).toBe("success");
        accepted.push(a.what.split(":")[0]);
      }
    };
    // Requests right after the backends were terminated (the pool still holds them, now dead).
    expect(await terminateBackends()).toBeGreaterThan(0);
    await settle(await Promise.all(burst("after")));
    // Requests in flight while they are terminated (whatever connections the server holds by then).
    const [, ...inFlight] = await Promise.all([terminateBackends(), ...burst("during")]);
    await settle(inFlight);
    expect((await client.threads.getState<StepsValues>(thread_id)).values.log).toEqual([
      ...logOf("w", 2),
      ...accepted.flatMap((r) => logOf(r, 2)),
    ]);

    // A storm: the backends terminated again and again for 2 s while clients keep asking (the server's
    // retries run out, so some requests fail): each answer is still a clean one.
    const until = Date.now() + 2_000;
    const { result: stormAnswers, terminated: stormed } = await storm(async () => {
      const out: Answer[] = [];
      await Promise.all(
        Array.from({ length: 4 }, async (_, k) => {
          for (let i = 0; Date.now() < until; i++)
            out.push(...(await Promise.all(burst(`storm ${k}.${i}`, false))));
        }),
      );
      return out;
    });
    expect(stormed).toBeGreaterThan(0);
    for (const a of stormAnswers) expectCleanAnswer(a);
    await sleep(500);
    expect(exited(server!.proc), "the server process died").toBe(false);

    // Within a bounded time it serves threads again, by itself.
    const fresh = await waitFor(
      "the server to create and read threads again",
      async () => {
        const created = await request("create thread", "POST", "/threads", {});
        if (created.status !== 200) return undefined;
        const id = created.json.thread_id as string;
        const read = await request("get thread", "GET", `/threads/${id}`);
        return read.status === 200 ? id : undefined;
      },
      20_000,
    );
    // And a full run.
    const values = await valuesOf(
      "a run after the connections were terminated",
      client.runs.wait(fresh, "steps", { input: job({ label: "a", steps: 3, delay_ms: 10 }) }),
    );
    expect(values.log).toEqual(logOf("a", 3));
    const runs = await client.runs.list(fresh);
    expect(runs.map((r) => r.status)).toEqual(["success"]);
    expect(exited(server!.proc)).toBe(false);
  });

  it("a run executing while its connections are terminated still finishes, from its checkpoints", async () => {
    dumpOnFailure(() => [server]);
    const client = server!.client;
    const STEPS = 6;
    const { thread_id } = await client.threads.create();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "m", steps: STEPS, delay_ms: 300 }),
    });
    await waitForLogEntry(client, thread_id, "m:1");
    expect(await terminateBackends()).toBeGreaterThan(0);
    const values = await waitFor(
      "the run to end",
      async () => {
        const r = await request("join", "GET", `/threads/${thread_id}/runs/${run.run_id}/join`);
        return r.status === 200 ? (r.json as StepsValues) : undefined;
      },
      RUN_MS,
    );
    expect(values.log).toEqual(logOf("m", STEPS));
    expect((await client.runs.get(thread_id, run.run_id)).status).toBe("success");
    expect(exited(server!.proc)).toBe(false);
  });

  // Last in the file: when it fails, the server may be gone.
  it("PostgreSQL unreachable for 2 s while runs execute: the process stays alive, no run is left running, it serves again", async () => {
    dumpOnFailure(() => [server]);
    const client = server!.client;
    const started: { thread_id: string; run_id: string }[] = [];
    for (let k = 0; k < 4; k++) {
      const { thread_id } = await client.threads.create();
      const run = await client.runs.create(thread_id, "steps", {
        input: job({ label: `s${k}`, steps: 8, delay_ms: 150 }),
      });
      started.push({ thread_id, run_id: run.run_id });
    }
    await waitForLogEntry(client, started[0].thread_id, "s0:0");
    const { terminated } = await storm(() => sleep(2_000));
    expect(terminated).toBeGreaterThan(0);
    await sleep(500);
    expect(exited(server!.proc), "the server process died").toBe(false);

    // Each run ends: resumed from its checkpoints (success), or failed with its error recorded, and its thread
    // agrees. Both are read together until neither is in progress: a run whose lease lapsed during the outage may
    // be taken up again (another attempt) between two reads; a thread left busy for good fails the wait.
    for (const { thread_id, run_id } of started) {
      const { run, thread } = await waitFor(
        `run ${run_id} and its thread to end`,
        async () => {
          const r = await client.runs.get(thread_id, run_id);
          const t = await client.threads.get(thread_id);
          const running = r.status === "pending" || r.status === "running" || t.status === "busy";
          return running ? undefined : { run: r, thread: t };
        },
        RUN_MS,
      );
      expect(["success", "error"]).toContain(run.status);
      expect(thread.status).toBe(run.status === "success" ? "idle" : "error");
    }
    const { thread_id } = await client.threads.create();
    const values = await valuesOf(
      "a run after PostgreSQL came back",
      client.runs.wait(thread_id, "steps", { input: job({ label: "b", steps: 3, delay_ms: 10 }) }),
    );
    expect(values.log).toEqual(logOf("b", 3));
    expect(exited(server!.proc)).toBe(false);
  });
});
