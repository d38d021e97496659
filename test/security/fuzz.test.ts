// Bounded fuzz test (issue 12): malformed, oversized, deeply nested, wrongly typed and NUL/surrogate-laden
// input (bodies, path and query parameters, headers) to every operation of the Agent Server (this project's
// backend) and of the control plane. Fails on any 5xx, any error body that is not JSON {detail}, or any change
// to data created before it. Seeded and counted: the same requests every run, and it stops by itself.
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import pLimit from "p-limit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, ROOT, useHangar } from "../helpers/server.ts";
import { cpClient, startCp, type CpProcess } from "../helpers/control-plane.ts";
import {
  answerProblem,
  CORE_VALUES,
  HOSTILE_HEADERS,
  HOSTILE_SEGMENTS,
  HOSTILE_VALUES,
  MALFORMED_BODIES,
  operationsOf,
  pick,
  prng,
  rawRequest,
  toJsonText,
  type Operation,
  type RawRequest,
} from "../helpers/fuzz.ts";

const SEED = 0x5eed12;
const FIXTURES = join(ROOT, "test/fixtures/openapi");
const doc = (name: string) => JSON.parse(readFileSync(join(FIXTURES, name), "utf8"));

/**
 * How many hostile requests of each kind an operation gets (the run is bounded by these and the op count); each
 * body field gets CORE_VALUES and `perField` more. Raise them (and change SEED) to explore further.
 */
const PER_OP = {
  malformed: 6,
  topLevel: 4,
  perField: 3,
  fieldsMax: 60,
  subFieldsMax: 60,
  perQuery: 6,
  perPath: 6,
  headers: 4,
};

interface Target {
  url: string;
  headers: Record<string, string>;
  ids: Record<string, string>;
  /** A valid body for an operation (the one the hostile values are put into), by "METHOD path". */
  bodies: Record<string, unknown>;
  /** Headers fuzzed on every operation, beside Last-Event-ID on streams. */
  fuzzHeaders: string[];
  /** The JSON body limit (an oversized body declares one byte more). */
  bodyLimit: number;
}

/** The hostile requests for one operation, deterministic for a seed. */
function requestsFor(op: Operation, t: Target, rand: () => number): { label: string; req: RawRequest }[] {
  const out: { label: string; req: RawRequest }[] = [];
  const fill = (override?: Record<string, string>) =>
    op.path.replace(/\{(\w+)\}/g, (_m, name: string) => override?.[name] ?? t.ids[name] ?? "x");
  const key = `${op.method} ${op.path}`;
  const base = t.bodies[key] ?? (op.bodyFields ? (op.bodyIsArray ? [{}] : {}) : undefined);
  const baseText = base === undefined ? undefined : JSON.stringify(base);
  const headers = { ...t.headers };
  const add = (label: string, req: Partial<RawRequest>) =>
    out.push({ label, req: { method: op.method, path: fill(), headers, body: baseText, ...req } });

  if (op.bodyFields || op.method !== "GET") {
    for (const body of pick(rand, MALFORMED_BODIES, PER_OP.malformed)) {
      add(`malformed body ${JSON.stringify(String(body).slice(0, 40))}`, { body });
    }
    add("oversized body (declared)", { body: "x".repeat(70 * 1024), declaredLength: t.bodyLimit + 1 });
    for (const v of pick(rand, HOSTILE_VALUES, PER_OP.topLevel)) add("whole body", { body: toJsonText(v) });
  }
  if (op.bodyFields && base !== undefined) {
    const fields = pick(rand, op.bodyFields, PER_OP.fieldsMax);
    for (const field of fields) {
      for (const v of [...CORE_VALUES, ...pick(rand, HOSTILE_VALUES, PER_OP.perField)]) {
        const item = { ...((op.bodyIsArray ? (base as unknown[])[0] : base) as object), [field]: v };
        add(`body.${field}`, { body: toJsonText(op.bodyIsArray ? [item] : item) });
      }
    }
    // One level down: a hostile value in a field of an object (or of a list's item), the rest of the body valid.
    for (const { field, sub, list } of pick(rand, op.subFields ?? [], PER_OP.subFieldsMax)) {
      for (const v of [...CORE_VALUES, ...pick(rand, HOSTILE_VALUES, PER_OP.perField)]) {
        const inner = { [sub]: v };
        const item = {
          ...((op.bodyIsArray ? (base as unknown[])[0] : base) as object),
          [field]: list ? [inner] : inner,
        };
        add(`body.${field}${list ? "[]" : ""}.${sub}`, { body: toJsonText(op.bodyIsArray ? [item] : item) });
      }
    }
    const badKey = pick(rand, ["\u0000", "a\ud800", "\udc00"], 1)[0];
    const item = { ...((op.bodyIsArray ? (base as unknown[])[0] : base) as object), [badKey]: 1 };
    add("a body key with NUL or a lone surrogate", { body: toJsonText(op.bodyIsArray ? [item] : item) });
  }
  const queryBase = t.bodies[`${key}?`] as string | undefined;
  for (const q of op.query) {
    for (const v of pick(rand, HOSTILE_SEGMENTS, PER_OP.perQuery)) {
      add(`query ${q}`, { path: `${fill()}?${queryBase ? `${queryBase}&` : ""}${q}=${v}` });
    }
  }
  for (const name of [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])) {
    for (const v of pick(rand, HOSTILE_SEGMENTS, PER_OP.perPath)) {
      add(`path ${name}`, { path: fill({ [name]: v || "%20" }) });
    }
  }
  const headerNames = [...t.fuzzHeaders, ...(op.path.endsWith("/stream") ? ["last-event-id"] : [])];
  for (const h of headerNames) {
    for (const v of pick(rand, HOSTILE_HEADERS, PER_OP.headers)) {
      add(`header ${h}`, { headers: { ...headers, [h]: v } });
    }
  }
  if (op.method !== "GET" && op.method !== "DELETE") {
    add("wrong content type", {
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded" },
    });
  }
  return out;
}

/** Operations in a safe order: deletes last, the longest paths first (a run before its thread). */
function ordered(ops: Operation[]): Operation[] {
  const isDelete = (o: Operation) => Number(o.method === "DELETE");
  return ops.sort((a, b) => isDelete(a) - isDelete(b) || (isDelete(a) ? b.path.length - a.path.length : 0));
}

/** Sends every hostile request; returns the problems (a 5xx or a non-JSON error), one line each. */
async function fuzz(ops: Operation[], t: Target): Promise<{ problems: string[]; sent: number }> {
  const rand = prng(SEED);
  const problems: string[] = [];
  let sent = 0;
  // One operation after the other (deletes last), the requests of one operation a few at a time.
  const limit = pLimit(4);
  for (const op of ordered(ops)) {
    const requests = requestsFor(op, t, rand);
    sent += requests.length;
    await Promise.all(
      requests.map(({ label, req }) =>
        limit(async () => {
          const res = await rawRequest(t.url, req).catch((e: Error) => ({
            status: 599,
            contentType: "",
            body: `request failed: ${e.message}`,
          }));
          // FUZZ_DEBUG=1 prints every answer (what the fuzz reached, not only what failed).
          if (process.env.FUZZ_DEBUG)
            process.stderr.write(
              `${res.status} ${op.method} ${op.path} [${label}] ${res.body.slice(0, 150)}\n`,
            );
          const problem = answerProblem(res, { jsonRpc: /^\/(mcp|a2a)\b/.test(op.path) });
          if (problem) problems.push(`${op.method} ${op.path} [${label}]: ${problem}`);
        }),
      ),
    );
  }
  return { problems, sent };
}

describe("Agent Server", () => {
  const hangar = useHangar();
  const INPUT = { messages: [{ role: "user", content: "fuzz" }] };

  /** What the data created before the fuzz looks like through the API. */
  async function snapshot(p: Record<string, string>): Promise<unknown> {
    const { client } = hangar;
    const threadState = await client.threads.getState(p.thread);
    return {
      thread: await client.threads.get(p.thread),
      state: threadState,
      history: await client.threads.getHistory(p.thread, { limit: 100 }),
      runs: await client.runs.list(p.thread),
      run: await client.runs.get(p.thread, p.run),
      assistant: await client.assistants.get(p.assistant),
      versions: await client.assistants.getVersions(p.assistant),
      item: await client.store.getItem(["protected", "fuzz"], "k"),
      cron: await client.crons.search({ assistantId: p.assistant }),
      threadCount: await client.threads.count({ metadata: { protected: "yes" } }),
    };
  }

  // Attack: hostile input of every kind to every operation (issue 12, item 5 and the fuzz acceptance test).
  it("answers hostile input to every operation without a 5xx or a non-JSON error, and changes no data", async () => {
    const { client, server } = hangar;
    // Protected data: never named by a fuzzed request, compared before and after.
    const pThread = await client.threads.create({ metadata: { protected: "yes" } });
    let pRun = "";
    await client.runs.wait(pThread.thread_id, "chat", {
      input: INPUT,
      onRunCreated: (m) => (pRun = m.run_id),
    });
    const pAssistant = await client.assistants.create({ graphId: "chat", metadata: { protected: "yes" } });
    await client.store.putItem(["protected", "fuzz"], "k", { v: "kept" });
    await client.crons.create(pAssistant.assistant_id, { schedule: "0 9 * * *", input: INPUT } as any);
    const p = { thread: pThread.thread_id, run: pRun, assistant: pAssistant.assistant_id };
    const before = await snapshot(p);

    // Targets of the fuzzed requests (they may change these: a hostile value that is valid is accepted).
    const thread = await client.threads.create();
    let runId = "";
    await client.runs.wait(thread.thread_id, "chat", {
      input: INPUT,
      onRunCreated: (m) => (runId = m.run_id),
    });
    const state = await client.threads.getState(thread.thread_id);
    const assistant = await client.assistants.create({ graphId: "research" });
    const cron = await client.crons.create(assistant.assistant_id, { schedule: "0 9 * * *" } as any);
    await client.store.putItem(["fuzz"], "k", { v: 1 });
    const ids = {
      thread_id: thread.thread_id,
      run_id: runId,
      assistant_id: assistant.assistant_id,
      cron_id: cron.cron_id,
      checkpoint_id: state.checkpoint.checkpoint_id!,
      namespace: "research",
    };
    // Runs on the target thread are rejected while it is busy, so a fuzzed run never waits for a queue.
    const run = { assistant_id: "chat", input: INPUT, multitask_strategy: "reject" };
    const bodies: Record<string, unknown> = {
      "POST /assistants": { graph_id: "chat", name: "fuzz" },
      "PATCH /assistants/{assistant_id}": { metadata: { fuzzed: true } },
      "POST /assistants/{assistant_id}/latest": { version: 1 },
      "POST /threads": { metadata: { fuzzed: true } },
      "POST /threads/{thread_id}/state": { values: { messages: [] }, as_node: "agent" },
      "POST /threads/{thread_id}/state/checkpoint": { checkpoint: { checkpoint_id: ids.checkpoint_id } },
      "PATCH /threads/{thread_id}": { metadata: { fuzzed: true } },
      "POST /threads/prune": { thread_ids: [randomUUID()] },
      "POST /threads/{thread_id}/runs": run,
      "POST /threads/{thread_id}/runs/stream": run,
      "POST /threads/{thread_id}/runs/wait": run,
      "POST /threads/{thread_id}/runs/crons": { assistant_id: "chat", schedule: "0 9 * * *" },
      "POST /runs/crons": { assistant_id: "chat", schedule: "0 9 * * *" },
      "PATCH /runs/crons/{cron_id}": { enabled: false },
      "POST /runs/stream": { assistant_id: "chat", input: INPUT },
      "POST /runs/wait": { assistant_id: "chat", input: INPUT },
      "POST /runs": { assistant_id: "chat", input: INPUT },
      "POST /runs/batch": [{ assistant_id: "chat", input: INPUT }],
      "POST /runs/cancel": { run_ids: [randomUUID()] },
      "PUT /store/items": { namespace: ["fuzz"], key: "k", value: { v: 2 } },
      "DELETE /store/items": { namespace: ["fuzz"], key: "gone" },
      "POST /store/items/search": { namespace_prefix: ["fuzz"] },
      "GET /store/items?": "namespace=fuzz&key=k",
      "POST /threads/{thread_id}/commands": { id: 1, method: "state.get" },
      "POST /mcp/": {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "chat", arguments: INPUT },
      },
      "POST /a2a/{assistant_id}": {
        jsonrpc: "2.0",
        id: 1,
        method: "message/send",
        params: {
          message: { kind: "message", messageId: "fuzz", role: "user", parts: [{ kind: "text", text: "x" }] },
        },
      },
    };
    const served = (await (await fetch(`${server.url}/openapi.json`)).json()) as never;
    const ops = operationsOf(
      [doc("agent-server-openapi.json"), served],
      // Protocol v2's event stream, which stays open until its client leaves (its bad input: protocol-v2.test.ts),
      // and the docs pages.
      [/\/stream\/events$/, /^\/docs/],
    );
    expect(ops.length).toBeGreaterThan(50);

    const { problems, sent } = await fuzz(ops, {
      url: server.url,
      // What MCP's transport requires of every POST (the other routes ignore it).
      headers: { accept: "application/json, text/event-stream" },
      ids,
      bodies,
      fuzzHeaders: [],
      bodyLimit: 50 * 1024 * 1024,
    });
    expect(sent).toBeGreaterThan(800);
    expect(problems).toEqual([]);

    // A body really larger than the limit (not only declared): 413 naming the limit.
    const big = await rawRequest(server.url, {
      method: "POST",
      path: "/threads",
      body: `{"metadata":{"x":"${"x".repeat(50 * 1024 * 1024)}"}}`,
      chunked: true,
    }).catch((e: Error) => ({ status: 599, contentType: "", body: e.message }));
    expect(big.status, big.body).toBe(413);
    expect(JSON.parse(big.body).detail).toContain("50 MB");

    expect(await snapshot(p)).toEqual(before);
  });
});

describe("control plane", () => {
  const KEY = "fuzz-key";
  let cp: CpProcess;

  beforeAll(async () => {
    cp = await startCp({
      env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY, HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise" },
    });
  });

  afterAll(async () => {
    await cp?.stop();
    if (cp) cleanupDir(cp.dataDir);
  });

  const deployment = (name: string) => ({
    name,
    source: "github",
    source_config: { repo_url: "https://github.com/example/agent.git" },
    source_revision_config: { langgraph_config_path: "langgraph.json" },
    secrets: [{ name: "OPENAI_API_KEY", value: "sk-secret" }],
  });
  const listener = (computeId: string) => ({
    version: "0.1.0",
    compute_type: "k8s",
    compute_id: computeId,
    compute_config: { k8s_namespaces: ["agents"] },
  });

  // Attack: hostile input of every kind to every control plane operation (issue 12, item 5, fuzz test).
  it("answers hostile input to every operation without a 5xx or a non-JSON error, and changes no data", async () => {
    const api = cpClient(cp.url, { "X-Api-Key": KEY });
    const created = async (r: Promise<{ status: number; body: any }>) => {
      const res = await r;
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    // Protected data, compared before and after.
    const pDep = await created(api.post("/v2/deployments", deployment(`protected-${randomUUID()}`)));
    const pListener = await created(api.post("/v2/listeners", listener(`protected-${randomUUID()}`)));
    const snapshot = async () => ({
      deployment: (await api.get(`/v2/deployments/${pDep.id}`)).body,
      revisions: (await api.get(`/v2/deployments/${pDep.id}/revisions`)).body,
      listener: (await api.get(`/v2/listeners/${pListener.id}`)).body,
    });
    const before = await snapshot();

    // Targets of the fuzzed requests.
    const dep = await created(api.post("/v2/deployments", deployment(`fuzz-${randomUUID()}`)));
    const revisions = (await api.get(`/v2/deployments/${dep.id}/revisions`)).body;
    const lst = await created(api.post("/v2/listeners", listener(`fuzz-${randomUUID()}`)));
    const ids = {
      deployment_id: dep.id,
      revision_id: revisions.resources?.[0]?.id ?? randomUUID(),
      listener_id: lst.id,
    };
    const bodies: Record<string, unknown> = {
      "POST /v2/deployments": deployment(`fuzzed-${randomUUID()}`),
      "PATCH /v2/deployments/{deployment_id}": { secrets: [{ name: "X", value: "y" }] },
      "POST /v2/listeners": listener(`fuzzed-${randomUUID()}`),
      "PATCH /v2/listeners/{listener_id}": { compute_config: { k8s_namespaces: ["b"] } },
      "GET /v2/deployments?": "limit=5",
      "DELETE /v2/deployments?": `deployment_ids=${randomUUID()}`,
    };
    const served = (await (await fetch(`${cp.url}/openapi.json`)).json()) as never;
    const ops = operationsOf([doc("control-plane-openapi.json"), served], [/^\/docs/]);
    expect(ops.length).toBeGreaterThan(30);

    const { problems, sent } = await fuzz(ops, {
      url: cp.url,
      headers: { "x-api-key": KEY },
      ids,
      bodies,
      fuzzHeaders: ["x-tenant-id", "x-api-key"],
      bodyLimit: 1024 * 1024,
    });
    expect(sent).toBeGreaterThan(500);
    expect(problems).toEqual([]);

    expect(await snapshot()).toEqual(before);
  });
});
