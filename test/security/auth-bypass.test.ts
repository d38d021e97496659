// Security: custom auth on every path of the Agent Server (issue 12, item 2). Two users, alice and bob; each
// test is one way bob could reach alice's data, or a graph could be told the wrong user.
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it } from "vitest";
import { unique } from "../helpers/http.ts";
import { ROOT, useHangar } from "../helpers/server.ts";

const hangar = useHangar({ config: join(ROOT, "test/fixtures/auth-sec-project/langgraph.json") });

const TOKENS = { alice: "token-alice", bob: "token-bob" } as const;
type Who = keyof typeof TOKENS;

const as = (who: Who) =>
  new Client({
    apiUrl: hangar.server.url,
    defaultHeaders: { authorization: `Bearer ${TOKENS[who]}` },
    callerOptions: { maxRetries: 0 },
  });

/** A raw request as `who` (JSON body if given): status, headers and the body text. */
async function call(who: Who, method: string, path: string, body?: unknown) {
  const res = await fetch(`${hangar.server.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKENS[who]}`,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Polls until `check` returns a value (bounded; the failure says what was awaited). */
async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  boundMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The 404 body of a thread that does not exist, for `id` (what any hidden thread must answer). */
const missingThread = (id: string) => JSON.stringify({ detail: `Thread "${id}" not found` });

/** A run of alice that stays pending (after_seconds) on a thread of hers. */
async function pendingRunOfAlice() {
  const alice = as("alice");
  const t = await alice.threads.create();
  const run = await alice.runs.create(t.thread_id, "whoami", {
    input: { note: "later" },
    afterSeconds: 600,
    multitaskStrategy: "enqueue",
  });
  expect(run.status).toBe("pending");
  return { threadId: t.thread_id, runId: run.run_id };
}

describe("custom auth on every path", () => {
  // Attack: POST /threads with another user's thread_id and if_exists "do_nothing" returned their thread
  // (and "raise" answered 409, which says the id exists). Also thread copy, join, prune of their thread.
  it("creating a thread or assistant with another user's id is a 404 like a missing one; copy, join, prune too", async () => {
    const alice = as("alice");
    const t = await alice.threads.create({ metadata: { secret: "alice's" } });
    await alice.runs.wait(t.thread_id, "whoami", { input: { note: "private" } });
    const id = t.thread_id;
    for (const ifExists of ["do_nothing", "raise"]) {
      const r = await call("bob", "POST", "/threads", { thread_id: id, if_exists: ifExists });
      expect(r.status).toBe(404);
      expect(r.text).toBe(missingThread(id));
      expect(r.text).not.toContain("alice");
    }
    // The same body as a GET of an id that does not exist at all.
    const nobody = randomUUID();
    const missing = await call("bob", "GET", `/threads/${nobody}`);
    expect(missing.status).toBe(404);
    expect(missing.text).toBe(missingThread(nobody));
    // Alice herself still gets her thread back with do_nothing, and a 409 with raise.
    const again = await call("alice", "POST", "/threads", { thread_id: id, if_exists: "do_nothing" });
    expect(again.status).toBe(200);
    expect(JSON.parse(again.text).metadata.secret).toBe("alice's");
    expect((await call("alice", "POST", "/threads", { thread_id: id })).status).toBe(409);
    // The same for an assistant: another user's id on create is a 404 like a missing assistant.
    const asst = await alice.assistants.create({ graphId: "whoami", metadata: { secret: "alice's" } });
    for (const ifExists of ["do_nothing", "raise"]) {
      const r = await call("bob", "POST", "/assistants", {
        assistant_id: asst.assistant_id,
        graph_id: "whoami",
        if_exists: ifExists,
      });
      expect(r.status).toBe(404);
      expect(r.text).toBe((await call("bob", "GET", `/assistants/${randomUUID()}`)).text);
    }
    expect((await call("bob", "HEAD", `/assistants/${asst.assistant_id}`)).status).toBe(404);
    const mine = await call("alice", "POST", "/assistants", {
      assistant_id: asst.assistant_id,
      graph_id: "whoami",
      if_exists: "do_nothing",
    });
    expect(JSON.parse(mine.text).metadata.secret).toBe("alice's");
    // Copy, join and prune of her thread: as for a thread that does not exist.
    const copy = await call("bob", "POST", `/threads/${id}/copy`, {});
    expect(copy.status).toBe(404);
    expect(copy.text).toBe(missingThread(id));
    const [run] = await alice.runs.list(id);
    expect((await call("bob", "GET", `/threads/${id}/runs/${run.run_id}/join`)).status).toBe(404);
    const prune = await call("bob", "POST", "/threads/prune", { thread_ids: [id] });
    expect(prune.status).toBe(200);
    expect(JSON.parse(prune.text)).toEqual({ pruned_count: 0 });
    expect((await alice.threads.get(id)).metadata?.secret).toBe("alice's");
  });

  // Attack: POST /runs/cancel without thread_id, by run_ids or by status (even "all" with action=rollback),
  // cancelled or deleted every user's runs.
  it("bulk cancel without a thread_id touches only the caller's runs", async () => {
    const alice = as("alice");
    const bob = as("bob");
    const a = await pendingRunOfAlice();
    const bt = await bob.threads.create();
    const bobRun = await bob.runs.create(bt.thread_id, "whoami", { input: {}, afterSeconds: 600 });
    // By id: accepted as an id that does not exist would be, and nothing happens to alice's run.
    expect((await call("bob", "POST", "/runs/cancel", { run_ids: [a.runId] })).status).toBe(204);
    expect((await alice.runs.get(a.threadId, a.runId)).status).toBe("pending");
    for (const [status, action] of [
      ["pending", "interrupt"],
      ["all", "interrupt"],
      ["all", "rollback"],
    ]) {
      const r = await call("bob", "POST", `/runs/cancel?action=${action}`, { status });
      expect(r.status).toBe(204);
      expect((await alice.runs.get(a.threadId, a.runId)).status).toBe("pending");
    }
    // Bob's own pending run was cancelled by his bulk cancel (rolled back or interrupted).
    const bobs = await bob.runs.list(bt.thread_id);
    expect(bobs.filter((r) => r.run_id === bobRun.run_id && r.status === "pending")).toEqual([]);
    // Alice can cancel hers by id without a thread.
    expect((await call("alice", "POST", "/runs/cancel", { run_ids: [a.runId] })).status).toBe(204);
    await eventually("alice's run to be cancelled", async () => {
      const r = await alice.runs.get(a.threadId, a.runId);
      return r.status === "pending" ? undefined : r;
    });
  });

  // Attack: DELETE /threads/{id}/runs/{run_id} on another user's thread deleted their run, and answered 409
  // "pending" for a pending one (which says it exists).
  it("deleting another user's run is a 404 like a missing thread, for a finished and a pending run", async () => {
    const alice = as("alice");
    const t = await alice.threads.create();
    await alice.runs.wait(t.thread_id, "whoami", { input: { note: "done" } });
    const [done] = await alice.runs.list(t.thread_id);
    const del = await call("bob", "DELETE", `/threads/${t.thread_id}/runs/${done.run_id}`);
    expect(del.status).toBe(404);
    expect(del.text).toBe(missingThread(t.thread_id));
    expect((await alice.runs.get(t.thread_id, done.run_id)).run_id).toBe(done.run_id);
    const p = await pendingRunOfAlice();
    const delPending = await call("bob", "DELETE", `/threads/${p.threadId}/runs/${p.runId}`);
    expect(delPending.status).toBe(404);
    expect(delPending.text).toBe(missingThread(p.threadId));
    expect(delPending.text).not.toContain("pending");
    expect((await alice.runs.get(p.threadId, p.runId)).status).toBe("pending");
    await alice.runs.cancel(p.threadId, p.runId);
  });

  // Attack: HEAD requests on store items and crons skipped the auth handlers (200, and a content-length
  // for another user's item); every HEAD must answer as its GET does.
  it("HEAD of every resource goes through the same auth as its GET", async () => {
    const alice = as("alice");
    const ns = unique("notes");
    await alice.store.putItem([ns], "k", { secret: "alice's ".repeat(50) });
    // Bob names alice's real namespace: his handler puts it under his own, where nothing is.
    const q = (namespace: string, key: string) =>
      `/store/items?namespace=${encodeURIComponent(namespace)}&key=${encodeURIComponent(key)}`;
    const bobGet = await call("bob", "GET", q(`alice.${ns}`, "k"));
    expect(bobGet.text).toBe("null");
    const bobHead = await call("bob", "HEAD", q(`alice.${ns}`, "k"));
    const noneHead = await call("bob", "HEAD", q(`alice.${ns}`, "no-such-key"));
    expect(bobHead.status).toBe(noneHead.status);
    expect(bobHead.headers.get("content-length")).toBe(noneHead.headers.get("content-length"));
    // Alice's own HEAD sees her item (the same length as her GET).
    const aliceGet = await call("alice", "GET", q(ns, "k"));
    const aliceHead = await call("alice", "HEAD", q(ns, "k"));
    expect(aliceHead.status).toBe(200);
    expect(aliceHead.headers.get("content-length")).toBe(String(Buffer.byteLength(aliceGet.text)));
    expect(bobHead.headers.get("content-length")).not.toBe(aliceHead.headers.get("content-length"));

    const cron = await alice.crons.create("whoami", { schedule: "0 9 * * *" } as any);
    expect((await call("alice", "HEAD", `/runs/crons/${cron.cron_id}`)).status).toBe(200);
    expect((await call("bob", "HEAD", `/runs/crons/${cron.cron_id}`)).status).toBe(404);
    expect((await call("bob", "GET", `/runs/crons/${cron.cron_id}`)).status).toBe(404);
    await alice.crons.delete(cron.cron_id);

    const t = await alice.threads.create();
    await alice.runs.wait(t.thread_id, "whoami", { input: {} });
    const [run] = await alice.runs.list(t.thread_id);
    for (const path of [
      `/threads/${t.thread_id}`,
      `/threads/${t.thread_id}/state`,
      `/threads/${t.thread_id}/history`,
      `/threads/${t.thread_id}/runs`,
      `/threads/${t.thread_id}/runs/${run.run_id}`,
    ]) {
      expect((await call("alice", "HEAD", path)).status, path).toBe(200);
      expect((await call("bob", "HEAD", path)).status, path).toBe(404);
    }
  });

  // Attack: langgraph_auth_user never reached the graph (its per-user store writes fell into a shared
  // namespace), and a client could put its own langgraph_auth_user into config.configurable.
  it("the graph gets the authenticated user in configurable, never the client's, for every kind of run", async () => {
    const alice = as("alice");
    const bob = as("bob");
    const forged = {
      configurable: {
        langgraph_auth_user: { identity: "bob", permissions: ["admin"] },
        langgraph_auth_user_id: "bob",
        langgraph_auth_permissions: ["admin"],
      },
    };
    const expectAlice = (auth: any) => {
      expect(auth.user_id).toBe("alice");
      expect(auth.permissions).toEqual(["threads:write", "store:read"]);
      expect(auth.user).toMatchObject({
        identity: "alice",
        display_name: "alice",
        is_authenticated: true,
        permissions: ["threads:write", "store:read"],
        team: "red",
      });
    };
    // A run on a thread (executed by a worker on the scale-out backend), with a forged user.
    const t = await alice.threads.create();
    const out = (await alice.runs.wait(t.thread_id, "whoami", {
      input: { note: "on a thread" },
      config: forged,
    })) as { auth: unknown };
    expectAlice(out.auth);
    // Its store write went to alice's own namespace (read back through the store API, which scopes it).
    const item = await alice.store.getItem(["profile"], "whoami");
    expect(item?.value).toMatchObject({ note: "on a thread", user_id: "alice" });
    expect(await bob.store.getItem(["profile"], "whoami")).toBeNull();
    // A stateless run.
    const stateless = (await alice.runs.wait(null, "whoami", {
      input: { note: "stateless" },
      config: forged,
    })) as {
      auth: unknown;
    };
    expectAlice(stateless.auth);
    // Bob's run is bob's, whatever he sends.
    const bobOut = (await bob.runs.wait(null, "whoami", { input: { note: "bob" }, config: forged })) as {
      auth: any;
    };
    expect(bobOut.auth.user_id).toBe("bob");
    expect(bobOut.auth.permissions).toEqual([]);
    expect((await bob.store.getItem(["profile"], "whoami"))?.value).toMatchObject({ note: "bob" });
    expect((await alice.store.getItem(["profile"], "whoami"))?.value).toMatchObject({ note: "stateless" });
    // Background stateless runs of a batch: their store writes land in alice's namespace, not bob's.
    const batch = await call("alice", "POST", "/runs/batch", [
      { assistant_id: "whoami", input: { note: "batch" }, config: forged },
    ]);
    expect(batch.status).toBe(200);
    const fromBatch = await eventually("the batch run's store write", async () => {
      const got = await alice.store.getItem(["profile"], "whoami");
      return got?.value.note === "batch" ? got.value : undefined;
    });
    expectAlice(fromBatch);
    expect((await bob.store.getItem(["profile"], "whoami"))?.value).toMatchObject({ note: "bob" });
    // A cron on alice's thread, created and patched with a forged user: its runs are alice's.
    const ct = await alice.threads.create();
    const cron = await alice.crons.createForThread(ct.thread_id, "whoami", {
      schedule: "0 9 * * *",
      input: { note: "cron" },
      config: forged,
    } as any);
    await alice.crons.update(cron.cron_id, { schedule: "* * * * * *", config: forged } as any);
    const values = await eventually("a cron run to finish", async () => {
      const runs = await alice.runs.list(ct.thread_id);
      if (!runs.some((r) => r.status === "success")) return undefined;
      return (await alice.threads.getState<{ auth: unknown }>(ct.thread_id)).values;
    });
    await alice.crons.delete(cron.cron_id);
    expectAlice(values.auth);
  });

  // Attack (the other way round): a thread a run creates (if_not_exists "create", a kept stateless run) had
  // only service_auth_user_id, not what the create handler adds, so the handlers' filters hid it from its
  // own user, and a filter on another key would have shown it to others.
  it("threads that runs create go through the create handler: they are the caller's", async () => {
    const alice = as("alice");
    const bob = as("bob");
    const id = randomUUID();
    await alice.runs.wait(id, "whoami", { input: { note: "new" }, ifNotExists: "create" });
    expect((await alice.threads.get(id)).metadata).toMatchObject({
      owner: "alice",
      service_auth_user_id: "alice",
    });
    expect((await call("bob", "GET", `/threads/${id}`)).status).toBe(404);
    const kept = await alice.runs.create(null, "whoami", {
      input: { note: "kept" },
      onCompletion: "keep",
    } as any);
    expect(kept.thread_id).toBeTruthy();
    await alice.runs.join(kept.thread_id!, kept.run_id);
    expect((await alice.threads.get(kept.thread_id!)).metadata?.owner).toBe("alice");
    expect((await call("bob", "GET", `/threads/${kept.thread_id}`)).status).toBe(404);
    expect((await bob.threads.search({ metadata: { owner: "alice" } })).length).toBe(0);
  });
});
