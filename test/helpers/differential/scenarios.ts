// The differential scenarios on the fixture project test/fixtures/differential (test/e2e/differential.test.ts):
// written once with the official SDK, run against Hangar and the official dev server, their transcripts compared.
// A scenario finds what it created by its session's nonce (`scenario_run` metadata, store namespaces), since the
// official server is shared by every test file and both backends' runs.
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Checkpoint, Client, ThreadState } from "@langchain/langgraph-sdk";
import WebSocket from "ws";
import { PROTOCOL_CHANNELS } from "../protocol-channels.ts";
import type { Session } from "./session.ts";

export interface Scenario {
  name: string;
  run: (s: Session) => Promise<void>;
}

type Values = Record<string, unknown>;

/** The checkpoint an updateState answers (the SDK types the answer as a config). */
const checkpointOf = (answer: unknown) => (answer as { checkpoint: Checkpoint }).checkpoint;

/** A run record's `kwargs` (the SDK's Run type leaves them out). */
const kwargs = (run: object) => (run as { kwargs: Record<string, unknown> }).kwargs;

/** Runs oldest first (servers list them in different orders: the order itself is a step of its own). */
const byCreation = <T extends { created_at: string }>(runs: T[]) =>
  [...runs].sort((a, b) => a.created_at.localeCompare(b.created_at));
const user = (content: string) => ({ messages: [{ role: "user", content }] });

/** A new thread of the session's own (its nonce in the metadata). */
const ownThread = async (s: Session) =>
  (await s.client.threads.create({ metadata: { scenario_run: s.nonce } })).thread_id;

/** The system assistant of a graph (created_by: system). */
async function systemAssistant(client: Client, graphId: string) {
  const [found] = await client.assistants.search({ graphId, metadata: { created_by: "system" }, limit: 1 });
  if (!found) throw new Error(`no system assistant for ${graphId}`);
  return found.assistant_id;
}

const assistants: Scenario = {
  name: "assistants",
  async run(s) {
    const { client } = s;
    const [research] = await s.must("search research", () =>
      client.assistants.search({ graphId: "research", metadata: { created_by: "system" } }),
    );
    const id = research.assistant_id;
    await s.step("get research", () => client.assistants.get(id));
    await s.step("graph research", () => client.assistants.getGraph(id));
    await s.step("graph research xray", () => client.assistants.getGraph(id, { xray: true }));
    await s.step("graph research xray 1", () => client.assistants.getGraph(id, { xray: 1 }));
    await s.step("graph approval", async () =>
      client.assistants.getGraph(await systemAssistant(client, "approval")),
    );
    await s.step("graph agent", async () =>
      client.assistants.getGraph(await systemAssistant(client, "agent")),
    );
    await s.step("search system chat", () =>
      client.assistants.search({ graphId: "chat", metadata: { created_by: "system" } }),
    );
    await s.step("unknown graph search", () => client.assistants.search({ graphId: "nope" }));

    const created = await s.must("create", () =>
      client.assistants.create({
        graphId: "approval",
        name: "reviewed",
        config: { configurable: { reviewer: "ann" } },
        metadata: { scenario_run: s.nonce, team: "red" },
      }),
    );
    const aid = created.assistant_id;
    await s.step("update", () =>
      client.assistants.update(aid, {
        config: { configurable: { reviewer: "bob" } },
        metadata: { team: "blue" },
      }),
    );
    await s.step("versions", () => client.assistants.getVersions(aid));
    await s.step("versions by metadata", () =>
      client.assistants.getVersions(aid, { metadata: { team: "red" } }),
    );
    await s.step("set latest 1", () => client.assistants.setLatest(aid, 1));
    await s.step("get after set latest", () => client.assistants.get(aid));
    await s.step("search by metadata", () =>
      client.assistants.search({ metadata: { scenario_run: s.nonce } }),
    );
    await s.step("count by metadata", () => client.assistants.count({ metadata: { scenario_run: s.nonce } }));
    await s.step("graph of created", () => client.assistants.getGraph(aid));
    await s.step("run on created", async () => {
      const thread = await client.threads.create();
      return client.runs.wait(thread.thread_id, aid, { input: { request: "a shed" } });
    });
    // The answer is a list of the deleted ids: recorded under a masked field name, so ids are compared as ids.
    await s.step("delete", async () => ({ assistant_id: await client.assistants.delete(aid) }));
    await s.step("get deleted", () => client.assistants.get(aid));
  },
};

const schemas: Scenario = {
  name: "schemas",
  async run(s) {
    const { client } = s;
    for (const graph of ["chat", "research", "approval", "research_builder"]) {
      const id = await systemAssistant(client, graph);
      await s.step(`schemas ${graph}`, () => client.assistants.getSchemas(id));
    }
    const research = await systemAssistant(client, "research");
    await s.step("subgraphs research", () => client.assistants.getSubgraphs(research));
    await s.step("subgraphs research recurse", () =>
      client.assistants.getSubgraphs(research, { recurse: true }),
    );
    await s.step("subgraphs research namespace", () =>
      client.assistants.getSubgraphs(research, { namespace: "research" }),
    );
    const builder = await systemAssistant(client, "research_builder");
    await s.step("subgraphs research_builder", () => client.assistants.getSubgraphs(builder));
  },
};

const threads: Scenario = {
  name: "threads",
  async run(s) {
    const { client } = s;
    const thread = await s.must("create", () =>
      client.threads.create({ metadata: { scenario_run: s.nonce, kind: "threads" } }),
    );
    const tid = thread.thread_id;
    await s.step("get new", () => client.threads.get(tid));
    await s.step("state of new", () => client.threads.getState(tid));
    await s.step("history of new", () => client.threads.getHistory(tid));
    await s.step("patch metadata", () => client.threads.update(tid, { metadata: { colour: "green" } }));
    await s.step("first run", () => client.runs.wait(tid, "chat", { input: user("hi") }));
    await s.step("second run", () => client.runs.wait(tid, "chat", { input: user("again") }));
    await s.step("get after runs", () => client.threads.get(tid));
    await s.step("search by metadata", () => client.threads.search({ metadata: { scenario_run: s.nonce } }));
    await s.step("search by metadata and status", () =>
      client.threads.search({ metadata: { scenario_run: s.nonce }, status: "idle" }),
    );
    await s.step("count by metadata", () => client.threads.count({ metadata: { scenario_run: s.nonce } }));
    await s.step("state", () => client.threads.getState(tid));
    const history = await s.must("history", () => client.threads.getHistory(tid));
    await s.step("history limit 2", () => client.threads.getHistory(tid, { limit: 2 }));
    await s.step("history by source", () =>
      client.threads.getHistory(tid, { metadata: { source: "input" } }),
    );
    await s.step("history by step", () => client.threads.getHistory(tid, { metadata: { step: 1 } }));
    await s.step("history by thread metadata", () =>
      client.threads.getHistory(tid, { metadata: { scenario_run: s.nonce } }),
    );
    await s.step("history by graph_id", () =>
      client.threads.getHistory(tid, { metadata: { graph_id: "chat" } }),
    );
    await s.step("history before", () =>
      client.threads.getHistory(tid, { before: history[1].checkpoint as never, limit: 2 }),
    );
    await s.step("state at checkpoint", () =>
      client.threads.getState(tid, history[2].checkpoint.checkpoint_id!),
    );
    const updated = await s.must("update state", () =>
      client.threads.updateState(tid, { values: user("edited"), asNode: "agent" }),
    );
    await s.step("state after update", () => client.threads.getState(tid));
    await s.step("state of update's checkpoint", () => client.threads.getState(tid, checkpointOf(updated)));
    await s.step("update state without as_node", () =>
      client.threads.updateState(tid, { values: { messages: [{ role: "ai", content: "by hand" }] } }),
    );
    await s.step("history after updates", () => client.threads.getHistory(tid, { limit: 3 }));
    const copy = await s.must("copy", () => client.threads.copy(tid));
    await s.step("state of copy", () => client.threads.getState(copy.thread_id));
    await s.step("history of copy", () => client.threads.getHistory(copy.thread_id, { limit: 3 }));
    await s.step("search copy by metadata", () =>
      client.threads.search({ metadata: { scenario_run: s.nonce }, sortBy: "created_at", sortOrder: "asc" }),
    );
    await s.step("delete copy", () => client.threads.delete(copy.thread_id));
    await s.step("get deleted copy", () => client.threads.get(copy.thread_id));
  },
};

const streams: Scenario = {
  name: "streams",
  async run(s) {
    const { client } = s;
    const fresh = () => ownThread(s);
    const topic = { topic: "owls" };
    await s.stream(
      "values updates custom",
      client.runs.stream(await fresh(), "research", {
        input: topic,
        streamMode: ["values", "updates", "custom"],
        streamSubgraphs: true,
      }),
    );
    await s.stream(
      "updates without subgraphs",
      client.runs.stream(await fresh(), "research", { input: topic, streamMode: "updates" }),
    );
    await s.stream(
      "debug",
      client.runs.stream(await fresh(), "research", {
        input: topic,
        streamMode: "debug",
        streamSubgraphs: true,
      }),
    );
    await s.stream(
      "tasks checkpoints",
      client.runs.stream(await fresh(), "research", {
        input: topic,
        streamMode: ["tasks", "checkpoints"],
        streamSubgraphs: true,
      }),
    );
    await s.stream(
      "messages-tuple",
      client.runs.stream(await fresh(), "chat", {
        input: user("hi"),
        streamMode: ["messages-tuple", "values"],
      }),
    );
    await s.stream(
      "agent messages-tuple updates",
      client.runs.stream(await fresh(), "agent", {
        input: user("remember that the sky is blue"),
        streamMode: ["messages-tuple", "updates"],
        streamSubgraphs: true,
      }),
    );
    await s.stream(
      "events",
      client.runs.stream(await fresh(), "chat", { input: user("hi"), streamMode: "events" }),
    );
    await s.stream("default mode", client.runs.stream(await fresh(), "chat", { input: user("hi") }));
  },
};

const interrupts: Scenario = {
  name: "interrupts",
  async run(s) {
    const { client } = s;
    const tid = await ownThread(s);
    await s.stream(
      "run to interrupt",
      client.runs.stream(tid, "approval", {
        input: { request: "a fence" },
        streamMode: ["values", "updates"],
        config: { configurable: { reviewer: "ann" } },
      }),
    );
    await s.step("thread interrupted", () => client.threads.get(tid));
    await s.step("state at interrupt", () => client.threads.getState(tid));
    await s.step("state at interrupt with subgraphs", () =>
      client.threads.getState(tid, undefined, { subgraphs: true }),
    );
    await s.stream(
      "resume",
      client.runs.stream(tid, "approval", { command: { resume: "yes" }, streamMode: ["values", "updates"] }),
    );
    await s.step("state after resume", () => client.threads.getState(tid));
    await s.step("thread after resume", () => client.threads.get(tid));
    await s.step("runs oldest first", async () => byCreation(await client.runs.list(tid)));
    await s.step("runs order", async () =>
      (await client.runs.list(tid)).map((r) => kwargs(r).command ?? kwargs(r).input),
    );

    const other = await ownThread(s);
    await s.step("wait to interrupt", () =>
      client.runs.wait(other, "approval", { input: { request: "a gate" } }),
    );
    await s.step("resume with input and command", () =>
      client.runs.wait(other, "approval", { input: { request: "ignored" }, command: { resume: "fine" } }),
    );
    await s.step("state after input and command", () => client.threads.getState(other));
    await s.step("resume with empty input and command", async () => {
      const fourth = (await client.threads.create()).thread_id;
      await client.runs.wait(fourth, "approval", { input: { request: "a door" } });
      return client.runs.wait(fourth, "approval", { input: {}, command: { resume: "sure" } });
    });
    await s.step("command update and goto", async () => {
      const third = (await client.threads.create()).thread_id;
      await client.runs.wait(third, "approval", { input: { request: "a roof" } });
      return client.runs.wait(third, "approval", { command: { update: { draft: "changed" }, resume: "ok" } });
    });
  },
};

const timeTravel: Scenario = {
  name: "time-travel",
  async run(s) {
    const { client } = s;
    const tid = await ownThread(s);
    await client.runs.wait(tid, "chat", { input: user("first") });
    await client.runs.wait(tid, "chat", { input: user("second") });
    const history = await s.must("history", () => client.threads.getHistory<Values>(tid));
    const afterFirst = history.find(
      (h) => (h.values.messages as unknown[] | undefined)?.length === 2 && h.next.length === 0,
    )!;
    const beforeAgent = history.find(
      (h) => (h.values.messages as unknown[] | undefined)?.length === 1 && h.next.includes("agent"),
    )!;
    await s.step("fork with checkpoint_id", () =>
      client.runs.wait(tid, "chat", {
        input: user("instead"),
        checkpointId: afterFirst.checkpoint.checkpoint_id!,
      }),
    );
    await s.step("history after fork", () => client.threads.getHistory(tid, { limit: 4 }));
    await s.step("replay from before a node", () =>
      client.runs.wait(tid, "chat", { input: null, checkpoint: beforeAgent.checkpoint as never }),
    );
    await s.step("state after replay", () => client.threads.getState(tid));
    const edited = await s.must("update state at a past checkpoint", () =>
      client.threads.updateState(tid, {
        values: user("rewritten"),
        checkpointId: afterFirst.checkpoint.checkpoint_id!,
      }),
    );
    await s.step("run from the edited checkpoint", () =>
      client.runs.wait(tid, "chat", { input: null, checkpointId: checkpointOf(edited).checkpoint_id! }),
    );
    const state = await s.must("state after all", () => client.threads.getState<Values>(tid));
    await s.step("parent chain", async () => {
      const chain: string[] = [];
      let at: ThreadState<Values> | undefined = state;
      while (at?.parent_checkpoint) {
        chain.push(`${at.metadata?.source}:${(at.values.messages as unknown[] | undefined)?.length ?? 0}`);
        at = await client.threads.getState<Values>(tid, at.parent_checkpoint as Checkpoint);
      }
      return chain;
    });
  },
};

const store: Scenario = {
  name: "store",
  async run(s) {
    const { client } = s;
    const tid = await ownThread(s);
    await s.step("agent run", () =>
      client.runs.wait(tid, "agent", { input: user("remember that the sky is blue") }),
    );
    await s.step("item the tool wrote", () => client.store.getItem(["facts", tid], "latest"));
    const ns = ["notes", s.nonce];
    await s.step("put k1", () => client.store.putItem(ns, "k1", { text: "first", n: 1 }));
    await s.step("put k2", () => client.store.putItem(ns, "k2", { text: "second", n: 2 }));
    await s.step("put nested", () => client.store.putItem([...ns, "inner"], "k3", { n: 3 }));
    await s.step("get k1", () => client.store.getItem(ns, "k1"));
    await s.step("get missing", () => client.store.getItem(ns, "nope"));
    await s.step("search", () => client.store.searchItems(ns));
    await s.step("search filter", () => client.store.searchItems(ns, { filter: { n: 2 } }));
    await s.step("search limit offset", () => client.store.searchItems(ns, { limit: 1, offset: 1 }));
    await s.step("namespaces", () => client.store.listNamespaces({ prefix: ns }));
    await s.step("namespaces max depth", () => client.store.listNamespaces({ prefix: ns, maxDepth: 2 }));
    await s.step("overwrite k1", () => client.store.putItem(ns, "k1", { text: "again", n: 10 }));
    await s.step("get k1 again", () => client.store.getItem(ns, "k1"));
    await s.step("delete k1", () => client.store.deleteItem(ns, "k1"));
    await s.step("get deleted", () => client.store.getItem(ns, "k1"));
    await s.step("search after delete", () => client.store.searchItems(ns));
    // Filters with operators, a parent namespace's search, namespaces by suffix and paged, and what is refused.
    await s.step("search filter $gt", () => client.store.searchItems(ns, { filter: { n: { $gt: 2 } } }));
    await s.step("search filter $ne", () => client.store.searchItems(ns, { filter: { n: { $ne: 2 } } }));
    // Which items, whatever their order (the order is compared in the searches above).
    await s.step("search of the parent", async () =>
      (await client.store.searchItems(["notes", s.nonce])).items
        .map((i) => `${i.namespace.slice(2).join("/")}:${i.key}`)
        .sort(),
    );
    await s.step("search with a query, no index", () => client.store.searchItems(ns, { query: "second" }));
    await s.step("namespaces by suffix", () =>
      client.store.listNamespaces({ prefix: ns, suffix: ["inner"] }),
    );
    await s.step("namespaces paged", () => client.store.listNamespaces({ prefix: ns, limit: 1, offset: 1 }));
    await s.step("delete missing", () => client.store.deleteItem(ns, "never"));
    // Past the SDK, which checks some of these itself: the status each server answers.
    const put = (namespace: string[], value: unknown) => async () =>
      (
        await fetch(`${s.url}/store/items`, {
          method: "PUT",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ namespace, key: "k", value }),
        })
      ).status;
    await s.step("put with a dot in a label", put(["notes", "a.b"], { n: 1 }));
    await s.step("put in the empty namespace", put([], { n: 1 }));
    await s.step("put a value that is not an object", put(ns, 5));
  },
};

const runs: Scenario = {
  name: "runs",
  async run(s) {
    const { client } = s;
    await s.step("stateless wait", () => client.runs.wait(null, "chat", { input: user("hi") }));
    await s.stream(
      "stateless stream",
      client.runs.stream(null, "research", { input: { topic: "owls" }, streamMode: ["updates"] }),
    );
    const tid = await ownThread(s);
    const run = await s.must("background create", () =>
      client.runs.create(tid, "research", { input: { topic: "bees" }, metadata: { purpose: "background" } }),
    );
    await s.step("join", () => client.runs.join(tid, run.run_id));
    await s.step("get", () => client.runs.get(tid, run.run_id));
    await s.step("list", () => client.runs.list(tid));
    await s.step("list after a second run", async () => {
      await client.runs.wait(tid, "research", { input: { topic: "wasps" } });
      return (await client.runs.list(tid)).map((r) => kwargs(r).input);
    });
    await s.step("thread after", () => client.threads.get(tid));
    await s.step("history by run metadata", () =>
      client.threads.getHistory(tid, { metadata: { purpose: "background" } }),
    );
    await s.step("history by assistant_id", async () =>
      client.threads.getHistory(tid, {
        metadata: { assistant_id: await systemAssistant(client, "research") },
      }),
    );
    await s.step("second run's record", async () => {
      const created = await client.runs.create(tid, "research", {
        input: { topic: "ants" },
        metadata: { purpose: "second" },
        config: { configurable: { extra: "x" }, tags: ["t1"] },
      });
      await client.runs.join(tid, created.run_id);
      return client.runs.get(tid, created.run_id);
    });
    await s.step("state metadata of second", async () => (await client.threads.getState(tid)).metadata);

    // A graph whose input and output schemas are narrower than its state: what a run answers and streams.
    const narrowInput = { ...user("count me"), topic: "owls" };
    await s.step("narrowed stateless wait", () => client.runs.wait(null, "narrowed", { input: narrowInput }));
    const narrowed = await ownThread(s);
    await s.step("narrowed wait", () => client.runs.wait(narrowed, "narrowed", { input: narrowInput }));
    await s.stream(
      "narrowed stream",
      client.runs.stream(narrowed, "narrowed", { input: narrowInput, streamMode: ["values", "updates"] }),
    );
    await s.step("narrowed join", async () => {
      const created = await client.runs.create(narrowed, "narrowed", { input: narrowInput });
      return client.runs.join(narrowed, created.run_id);
    });
    await s.step("narrowed state", async () => (await client.threads.getState(narrowed)).values);
  },
};

const errors: Scenario = {
  name: "errors",
  async run(s) {
    const { client } = s;
    const missing = "00000000-0000-4000-8000-000000000000";
    await s.step("unknown thread", () => client.threads.get(missing));
    await s.step("unknown assistant", () => client.assistants.get(missing));
    await s.step("run on unknown assistant", async () => {
      const thread = await client.threads.create();
      return client.runs.wait(thread.thread_id, "nope", { input: {} });
    });
    await s.step("state of unknown thread", () => client.threads.getState(missing));
  },
};

/**
 * Gates for the `gate` graph (test/fixtures/differential/src/gate.ts): a run waits at its gate, a file of the
 * session's own directory (both servers' sessions run at once), until the scenario opens it. `input` is a gate run's.
 */
function gates() {
  const dir = mkdtempSync(join(tmpdir(), "hangar-differential-gates-"));
  let n = 0;
  return {
    /** A new gate, closed. */
    next: () => `gate-${++n}`,
    open: (gate: string) => writeFileSync(join(dir, gate), ""),
    input: (gate: string, label: string) => ({ gate_dir: dir, gate, label }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

type Gates = ReturnType<typeof gates>;

/** Runs `body` on a new thread of the session's, with gates of its own that are removed at its end. */
async function withGates(s: Session, body: (g: Gates, threadId: string) => Promise<void>): Promise<void> {
  const g = gates();
  try {
    await body(g, await ownThread(s));
  } finally {
    g.remove();
  }
}

/**
 * Waits (bounded) until the gate run `runId` is running and its input is in the thread's state (its first checkpoint
 * written): what a request made next finds no longer depends on how far the server had got.
 */
async function untilAtGate(client: Client, threadId: string, runId: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    const run = await client.runs.get(threadId, runId);
    if (run.status !== "pending" && run.status !== "running") {
      throw new Error(`run ${runId} ${run.status} before it was seen at its gate`);
    }
    const label = (kwargs(run).input as Values | undefined)?.label;
    if (run.status === "running") {
      const values = (await client.threads.getState(threadId)).values as Values | undefined;
      if (values?.label === label) return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`run ${runId} not at its gate after 3,000 looks`);
}

/** The events of `stream`; `then` is called once the first has arrived (a join is then known to be under way). */
async function* openingAfterFirst<T>(stream: AsyncIterable<T>, then: () => void): AsyncGenerator<T> {
  let first = true;
  for await (const event of stream) {
    yield event;
    if (first) then();
    first = false;
  }
}

/** What a run record says once settled, without what every server mints anew. */
const outcome = (run: { status: string; multitask_strategy?: unknown }) => ({
  status: run.status,
  multitask_strategy: run.multitask_strategy ?? null,
});

/** A step reading run `runId` of the thread once settled (its outcome). */
const settledRun = (client: Client, threadId: string) => (runId: string) => async () =>
  outcome(await client.runs.get(threadId, runId));

// Every strategy of a run arriving while its thread's run is busy: reject, enqueue, interrupt, rollback.
const multitask: Scenario = {
  name: "multitask",
  async run(s) {
    const { client } = s;
    await withGates(s, async (g, tid) => {
      const start = (
        label: string,
        gate: string,
        strategy?: "reject" | "enqueue" | "interrupt" | "rollback",
      ) =>
        client.runs.create(tid, "gate", {
          input: g.input(gate, label),
          ...(strategy ? { multitaskStrategy: strategy } : {}),
        });
      const joined = (runId: string) => () => client.runs.join(tid, runId);
      const values = async () => (await client.threads.getState(tid)).values;
      const settled = settledRun(client, tid);
      // The thread's runs by label (a run missing on one side is one difference, the others still compared).
      const labelled = async () =>
        Object.fromEntries(
          (await client.runs.list(tid)).map((r) => [
            String((kwargs(r).input as Values | undefined)?.label),
            outcome(r),
          ]),
        );

      const gate1 = g.next();
      const first = await s.must("first run", () => start("first", gate1));
      await untilAtGate(client, tid, first.run_id);
      await s.step("thread while busy", () => client.threads.get(tid));
      await s.step("reject while busy", () => start("rejected", gate1, "reject"));
      // Behind a gate of its own, opened once the first run's join has answered: the join sees the first run's end,
      // not the queued one's too.
      const gateQ = g.next();
      const queued = await s.must("enqueue while busy", () => start("queued", gateQ, "enqueue"));
      await s.step("runs while one waits", labelled);
      g.open(gate1);
      await s.step("join first", joined(first.run_id));
      g.open(gateQ);
      await s.step("join queued", joined(queued.run_id));
      await s.step("queued run", settled(queued.run_id));
      await s.step("state after enqueue", values);

      const gate2 = g.next();
      const interrupted = await s.must("run to interrupt", () => start("interrupted", gate2));
      await untilAtGate(client, tid, interrupted.run_id);
      const open3 = g.next();
      g.open(open3);
      const interrupter = await s.must("interrupt while busy", () =>
        start("interrupter", open3, "interrupt"),
      );
      await s.step("join interrupter", joined(interrupter.run_id));
      await s.step("interrupted run", settled(interrupted.run_id));
      await s.step("state after interrupt", values);

      const gate4 = g.next();
      const rolled = await s.must("run to roll back", () => start("rolled back", gate4));
      await untilAtGate(client, tid, rolled.run_id);
      const roller = await s.must("rollback while busy", () => start("roller", open3, "rollback"));
      await s.step("join roller", joined(roller.run_id));
      await s.step("rolled back run", () =>
        client.runs.get(tid, rolled.run_id).then(outcome, (e: { status?: number }) => ({ http: e.status })),
      );
      await s.step("runs at the end", labelled);
      await s.step("state after rollback", values);
      await s.step("thread at the end", () => client.threads.get(tid));
    });
  },
};

// A run's life beside multitask: a resumable stream joined from its first event while its run waits, and again after
// its end; a cancel of a waiting run, and deletes; a run creating its thread (`if_not_exists`); a stateless run kept.
const lifecycle: Scenario = {
  name: "run lifecycle",
  async run(s) {
    const { client } = s;
    await withGates(s, async (g, tid) => {
      const settled = settledRun(client, tid);

      const gate1 = g.next();
      const streamed = await s.must("resumable run", () =>
        client.runs.create(tid, "gate", {
          input: g.input(gate1, "streamed"),
          streamMode: ["values", "updates"],
          streamResumable: true,
        }),
      );
      await untilAtGate(client, tid, streamed.run_id);
      await s.stream(
        "join from its first event",
        openingAfterFirst(client.runs.joinStream(tid, streamed.run_id, { lastEventId: "-1" }), () =>
          g.open(gate1),
        ),
      );
      await s.step("run after its stream", settled(streamed.run_id));
      await s.stream(
        "join after its end",
        client.runs.joinStream(tid, streamed.run_id, { lastEventId: "-1" }),
      );

      const gate2 = g.next();
      const cancelled = await s.must("run to cancel", () =>
        client.runs.create(tid, "gate", { input: g.input(gate2, "cancelled") }),
      );
      await untilAtGate(client, tid, cancelled.run_id);
      await s.step("cancel and wait", () => client.runs.cancel(tid, cancelled.run_id, true));
      await s.step("cancelled run", settled(cancelled.run_id));
      await s.step("thread after cancel", () => client.threads.get(tid));
      await s.step("state after cancel", async () => (await client.threads.getState(tid)).values);
      await s.step("cancel again", () => client.runs.cancel(tid, cancelled.run_id));
      await s.step("runs interrupted", async () =>
        (await client.runs.list(tid, { status: "interrupted" })).map(outcome),
      );
      await s.step("delete the cancelled run", () => client.runs.delete(tid, cancelled.run_id));
      await s.step("get the deleted run", () => client.runs.get(tid, cancelled.run_id));
      await s.step("runs at the end", async () => (await client.runs.list(tid)).map(outcome));

      const created = randomUUID();
      await s.step("run creating its thread", () =>
        client.runs.wait(created, "chat", { input: user("hi"), ifNotExists: "create" }),
      );
      await s.step("thread it created", () => client.threads.get(created));
      await s.step("run on a missing thread", () =>
        client.runs.wait(randomUUID(), "chat", { input: user("hi") }),
      );

      const kept = await s.must("stateless run kept", () =>
        // The API document's `on_completion` (`delete` | `keep`); the SDK's type names other values.
        client.runs.create(null, "chat", { input: user("hi"), onCompletion: "keep" as never }),
      );
      await s.step("join the kept run", () => client.runs.join(kept.thread_id, kept.run_id));
      await s.step("thread of the kept run", () => client.threads.get(kept.thread_id));
      await s.step("kept run", async () => outcome(await client.runs.get(kept.thread_id, kept.run_id)));
    });
  },
};

// Searches, counts and field selection over the session's own threads, runs and assistants: filters (metadata,
// values, status, name), sort orders, pages and `select`.
const search: Scenario = {
  name: "search and select",
  async run(s) {
    const { client } = s;
    const mine = { scenario_run: s.nonce };
    const tids: string[] = [];
    for (const [n, topic] of [
      [1, "owls"],
      [2, "bees"],
      [3, "owls"],
    ] as const) {
      const { thread_id } = await client.threads.create({ metadata: { ...mine, n } });
      tids.push(thread_id);
      if (n < 3) await client.runs.wait(thread_id, "research", { input: { topic } });
    }
    const ordered = { metadata: mine, sortBy: "created_at", sortOrder: "asc" } as const;
    await s.step("threads oldest first, selected fields", () =>
      client.threads.search({ ...ordered, select: ["thread_id", "metadata", "status"] }),
    );
    await s.step("threads newest first, page 2 of 1", async () =>
      (await client.threads.search({ ...ordered, sortOrder: "desc", limit: 1, offset: 1 })).map(
        (t) => t.metadata,
      ),
    );
    await s.step("threads by values", async () =>
      (await client.threads.search({ ...ordered, values: { topic: "owls" } })).map((t) => t.metadata),
    );
    await s.step("threads by status idle", async () =>
      (await client.threads.search({ ...ordered, status: "idle" })).map((t) => t.metadata),
    );
    await s.step("threads by ids", async () =>
      (await client.threads.search({ ...ordered, ids: [tids[2], tids[0]] })).map((t) => t.metadata),
    );
    await s.step("threads sorted by thread_id", async () =>
      (await client.threads.search({ metadata: mine, sortBy: "thread_id", sortOrder: "asc" })).map(
        (t) => t.thread_id === [...tids].sort()[0],
      ),
    );
    await s.step("count idle", () => client.threads.count({ metadata: mine, status: "idle" }));
    await s.step("count by values", () =>
      client.threads.count({ metadata: mine, values: { topic: "owls" } as never }),
    );
    await s.step("state, one value selected", () =>
      client.threads.getState(tids[0], undefined, { select: ["values.topic"] } as never),
    );
    await s.step("history, fields selected", () =>
      client.threads.getHistory(tids[0], { limit: 2, select: ["values", "next", "metadata"] }),
    );
    await s.step("runs, fields selected", () =>
      client.runs.list(tids[0], { select: ["run_id", "status", "multitask_strategy"] }),
    );
    await s.step("runs by status", async () => (await client.runs.list(tids[0], { status: "error" })).length);

    for (const name of ["zeta", "alpha", "mid"]) {
      await client.assistants.create({ graphId: "chat", name, metadata: mine });
    }
    await s.step("assistants sorted by name", () =>
      client.assistants.search({
        metadata: mine,
        sortBy: "name",
        sortOrder: "asc",
        select: ["name", "graph_id", "metadata"],
      }),
    );
    await s.step("assistants named", async () =>
      (await client.assistants.search({ metadata: mine, name: "alp" })).map((a) => a.name),
    );
    await s.step("assistants page", async () =>
      (
        await client.assistants.search({
          metadata: mine,
          sortBy: "name",
          sortOrder: "desc",
          limit: 2,
          offset: 1,
        })
      ).map((a) => a.name),
    );
    await s.step("count assistants", () => client.assistants.count({ metadata: mine, graphId: "chat" }));
  },
};

// A run's options: interrupts before and after nodes given at run time, subgraph events, durability, context, a
// batch of stateless runs, cancelling many, and a thread's state metadata patched.
const runOptions: Scenario = {
  name: "run options",
  async run(s) {
    const { client } = s;
    const thread = () => ownThread(s);
    const topic = { topic: "moths" };

    const before = await thread();
    await s.step("interrupt before write", () =>
      client.runs.wait(before, "research", { input: topic, interruptBefore: ["write"] }),
    );
    await s.step("thread stopped before write", () => client.threads.get(before));
    await s.step("state stopped before write", async () => {
      const { next, tasks, values } = await client.threads.getState(before);
      return { next, tasks, values };
    });
    await s.step("go on past write", () => client.runs.wait(before, "research", { input: null }));
    await s.step("thread after going on", () => client.threads.get(before));

    const after = await thread();
    await s.step("interrupt after plan", () =>
      client.runs.wait(after, "research", { input: topic, interruptAfter: ["plan"] }),
    );
    await s.step("next after plan", async () => (await client.threads.getState(after)).next);
    const everyNode = await thread();
    await s.step("interrupt before every node", () =>
      client.runs.wait(everyNode, "research", { input: topic, interruptBefore: "*" }),
    );

    await s.stream(
      "updates with subgraphs",
      client.runs.stream(await thread(), "research", {
        input: topic,
        streamMode: ["updates"],
        streamSubgraphs: true,
      }),
    );
    await s.stream(
      "values with subgraphs, durability exit",
      client.runs.stream(await thread(), "research", {
        input: topic,
        streamMode: ["values"],
        streamSubgraphs: true,
        durability: "exit",
      }),
    );
    const exitOnly = await thread();
    await client.runs.wait(exitOnly, "research", { input: topic, durability: "exit" });
    await s.step("history with durability exit", async () =>
      (await client.threads.getHistory(exitOnly)).map((h) => ({ next: h.next, step: h.metadata?.step })),
    );

    const withContext = await thread();
    const run = await s.must("run with context", () =>
      client.runs.create(withContext, "research", { input: topic, context: { region: "eu" } }),
    );
    await s.step("join run with context", () => client.runs.join(withContext, run.run_id));
    await s.step("record of run with context", async () =>
      kwargs(await client.runs.get(withContext, run.run_id)),
    );

    await s.step("batch of stateless runs", async () =>
      (
        await client.runs.createBatch([
          { assistantId: "chat", input: user("one"), metadata: { scenario_run: s.nonce, n: 1 } },
          { assistantId: "research", input: topic, metadata: { scenario_run: s.nonce, n: 2 } },
        ])
      ).map((r) => ({ metadata: r.metadata, status: r.status, multitask_strategy: r.multitask_strategy })),
    );

    const pending = await thread();
    const queued = await client.runs.create(pending, "research", { input: topic, afterSeconds: 3600 });
    await s.step("cancel many", () => client.runs.cancelMany({ threadId: pending, runIds: [queued.run_id] }));
    await s.step("run cancelled by cancel many", async () => {
      const got = await client.runs.get(pending, queued.run_id);
      return { status: got.status };
    });
    await s.step("thread after cancel many", () => client.threads.get(pending));
    // The dev server has no bulk cancel: the delayed run is cancelled through its thread, outside the transcript, so
    // that it does not wait on the shared server for the rest of the test run.
    await client.runs.cancel(pending, queued.run_id).catch(() => {});

    const patched = await thread();
    await client.runs.wait(patched, "research", { input: topic });
    await s.step("patch state metadata", () => client.threads.patchState(patched, { reviewed: true }));
    await s.step("state metadata after patch", async () => (await client.threads.getState(patched)).metadata);
  },
};

/** The root graph's `completed` (or `interrupted`) lifecycle event: the run's last. */
const rootEnded = (e: { method?: string; params?: { namespace?: unknown[]; data?: { event?: string } } }) =>
  e.method === "lifecycle" &&
  !e.params?.namespace?.length &&
  ["completed", "interrupted", "failed"].includes(e.params?.data?.event ?? "");

/**
 * A protocol event subscription's events after seq `after` (a subscription replays the thread's log from its start),
 * up to the root graph's end, as {event: method, data: the rest}.
 */
async function* protocolEvents(
  events: AsyncIterable<unknown>,
  after = 0,
): AsyncGenerator<{ event: string; data: unknown }> {
  for await (const raw of events) {
    const { method, ...rest } = raw as { method: string; seq: number };
    if (rest.seq <= after) continue;
    yield { event: method, data: rest };
    if (rootEnded(raw as never)) return;
  }
}

/** A protocol WebSocket of a thread: commands answered by id, and the events it was sent, in order. */
async function protocolSocket(url: string, threadId: string) {
  const ws = new WebSocket(`${url.replace(/^http/, "ws")}/threads/${threadId}/stream/events`);
  await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
  const answers = new Map<number, (answer: unknown) => void>();
  const events: { method: string; seq: number }[] = [];
  let wake = () => {};
  ws.on("message", (raw) => {
    const msg = JSON.parse(String(raw)) as { type?: string; id?: number; method: string; seq: number };
    if (msg.type === "event") {
      events.push(msg);
      wake();
    } else answers.get(msg.id!)?.(msg);
  });
  return {
    send: (id: number, method: string, params: unknown) =>
      new Promise<unknown>((resolve) => {
        answers.set(id, resolve);
        ws.send(JSON.stringify({ id, method, params }));
      }),
    /** The events up to the root graph's end (bounded: the scenario's timeout). */
    async *untilRootEnded(): AsyncGenerator<{ event: string; data: unknown }> {
      for (let at = 0; ;) {
        while (at < events.length) {
          const { method, ...rest } = events[at++];
          yield { event: method, data: rest };
          if (rootEnded({ method, ...rest } as never)) return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
      }
    },
    close: () => ws.close(),
  };
}

// Protocol v2 through the official SDK's ThreadStream (its HTTP transport: commands and the SSE event stream): a run
// of a graph with a subgraph and custom events on every channel, a chat model's run (messages), and a run that
// interrupts and is answered.
const protocol: Scenario = {
  name: "protocol v2",
  async run(s) {
    const { client } = s;
    const research = client.threads.stream({ assistantId: "research" });
    try {
      const all = await research.subscribe({ channels: PROTOCOL_CHANNELS } as never);
      await s.step("research run.start", async () =>
        Object.keys(await research.run.start({ input: { topic: "owls" } })),
      );
      await s.stream("research every channel", protocolEvents(all as AsyncIterable<unknown>));
    } finally {
      await research.close();
    }
    await s.step(
      "research state after",
      async () => (await client.threads.getState(research.threadId)).values,
    );

    // Over a WebSocket (the `ws` package: Node 20 has no global WebSocket): run.start in-band, then (the run over) a
    // subscription that replays it, and refusals; the answers by command id, the events in order. (The SDK's WebSocket transport subscribes
    // before its first run, which the dev server never answers: see docs/protocol-v2.md.)
    const socketThread = randomUUID();
    const socket = await protocolSocket(s.url, socketThread);
    try {
      const started = (await socket.send(1, "run.start", {
        assistant_id: "research",
        input: { topic: "bats" },
      })) as {
        result: { run_id: string };
      };
      await s.step("websocket run.start", async () => Object.keys(started.result));
      // Subscribed once the run ended: the whole run is replayed, whatever the two servers' speeds.
      await client.runs.join(socketThread, started.result.run_id);
      await s.step("websocket subscribe", () =>
        socket.send(2, "subscription.subscribe", { channels: PROTOCOL_CHANNELS }),
      );
      await s.stream("websocket research every channel", socket.untilRootEnded());
      await s.step("websocket subscribe without channels", () =>
        socket.send(3, "subscription.subscribe", { channels: [] }),
      );
      await s.step("websocket unsubscribe unknown", () =>
        socket.send(4, "subscription.unsubscribe", { subscription_id: "nope" }),
      );
    } finally {
      socket.close();
    }

    // Commands over HTTP on the research thread (its run ended), answered as the protocol's success or error.
    const command = (id: number, method: string, params?: unknown) => async () => {
      const res = await fetch(`${s.url}/threads/${research.threadId}/commands`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }),
      });
      return { status: res.status, body: await res.json().catch(() => null) };
    };
    // The ended run replayed to a second client, the root graph's events only (depth 0).
    const again = client.threads.stream(research.threadId, { assistantId: "research" });
    try {
      const root = await again.subscribe({ channels: ["lifecycle", "values", "updates"], depth: 0 } as never);
      await s.stream("research replayed at depth 0", protocolEvents(root as AsyncIterable<unknown>));
    } finally {
      await again.close();
    }
    await s.step("command state.get", command(1, "state.get"));
    await s.step("command agent.getTree", command(2, "agent.getTree"));
    await s.step("command unknown", command(3, "no.such"));
    await s.step("command run.start without assistant", command(4, "run.start", {}));
    await s.step(
      "command input.respond without interrupt",
      command(5, "input.respond", { interrupt_id: "nope", response: "x" }),
    );

    const chat = client.threads.stream({ assistantId: "chat" });
    try {
      const all = await chat.subscribe({ channels: PROTOCOL_CHANNELS } as never);
      await chat.run.start({ input: user("hi") });
      await s.stream("chat every channel", protocolEvents(all as AsyncIterable<unknown>));
    } finally {
      await chat.close();
    }

    const approval = client.threads.stream({ assistantId: "approval" });
    try {
      const sub = await approval.subscribe({ channels: [...PROTOCOL_CHANNELS, "input"] } as never);
      await approval.run.start({ input: { request: "fence" } });
      const until = await s.stream(
        "approval until interrupted",
        protocolEvents(sub as AsyncIterable<unknown>),
      );
      const interruptedAt = (until.at(-1)?.data as { seq?: number } | undefined)?.seq ?? 0;
      await s.step("approval interrupted", async () => approval.interrupted);
      const asked = approval.interrupts[0] as { interruptId?: string; payload?: unknown } | undefined;
      await s.step("approval interrupt payload", async () => asked?.payload ?? null);
      const resumed = await approval.subscribe({ channels: [...PROTOCOL_CHANNELS, "input"] } as never);
      await s.step("approval input.respond", async () => {
        await approval.input.respond({ interrupt_id: asked!.interruptId!, response: "no", namespace: [] });
        return "answered";
      });
      await s.stream(
        "approval after the answer",
        protocolEvents(resumed as AsyncIterable<unknown>, interruptedAt),
      );
    } finally {
      await approval.close();
    }
    await s.step(
      "approval state after",
      async () => (await client.threads.getState(approval.threadId)).values,
    );
  },
};

export const SCENARIOS: readonly Scenario[] = [
  assistants,
  schemas,
  threads,
  streams,
  interrupts,
  timeTravel,
  store,
  runs,
  multitask,
  lifecycle,
  search,
  runOptions,
  errors,
  protocol,
];
