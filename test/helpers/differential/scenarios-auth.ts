// The differential scenarios under custom auth, on test/fixtures/differential-auth (test/e2e/differential-auth.test.ts):
// two users (alice, bob) and no one; threads owned by their creator, store items filtered by their `owner` field.
import type { Scenario } from "./scenarios.ts";

const ALICE = "token-alice";
const BOB = "token-bob";

const threads: Scenario = {
  name: "auth threads",
  async run(s) {
    const [alice, bob] = [s.as(ALICE), s.as(BOB)];
    const mine = { metadata: { scenario_run: s.nonce } };
    await s.step("health check without credentials", async () => (await fetch(`${s.url}/ok`)).status);
    await s.step("no credentials", () => s.client.threads.search(mine));
    await s.step("wrong token", () => s.as("token-mallory").threads.search(mine));
    const thread = await s.must("alice creates", () => alice.threads.create(mine));
    const tid = thread.thread_id;
    await s.step("bob creates", () => bob.threads.create(mine));
    await s.step("alice gets hers", () => alice.threads.get(tid));
    await s.step("bob gets alice's", () => bob.threads.get(tid));
    await s.step("alice searches", () => alice.threads.search(mine));
    await s.step("bob searches", () => bob.threads.search(mine));
    await s.step("alice counts", () => alice.threads.count(mine));
    await s.step("alice runs", () => alice.runs.wait(tid, "notes", { input: { note: "one" } }));
    await s.step("bob runs on alice's", () => bob.runs.wait(tid, "notes", { input: { note: "two" } }));
    await s.step("bob streams on alice's", async () => {
      const events: string[] = [];
      for await (const e of bob.runs.stream(tid, "notes", { input: { note: "three" } })) events.push(e.event);
      return events;
    });
    await s.step("bob's state of alice's", () => bob.threads.getState(tid));
    await s.step("bob's history of alice's", () => bob.threads.getHistory(tid));
    await s.step("bob updates alice's state", () => bob.threads.updateState(tid, { values: { note: "x" } }));
    await s.step("bob patches alice's", () => bob.threads.update(tid, { metadata: { owner: "bob" } }));
    await s.step("bob copies alice's", () => bob.threads.copy(tid));
    await s.step("bob lists alice's runs", () => bob.runs.list(tid));
    await s.step("bob deletes alice's", () => bob.threads.delete(tid));
    const copy = await s.must("alice copies hers", () => alice.threads.copy(tid));
    await s.step("alice's state of the copy", () => alice.threads.getState(copy.thread_id));
    await s.step("alice's state", () => alice.threads.getState(tid));
    await s.step("alice searches again", () =>
      alice.threads.search({ ...mine, sortBy: "created_at", sortOrder: "asc" }),
    );
    await s.step("stateless run by bob", () => bob.runs.wait(null, "notes", { input: { note: "free" } }));
  },
};

const store: Scenario = {
  name: "auth store",
  async run(s) {
    const [alice, bob] = [s.as(ALICE), s.as(BOB)];
    const ns = ["shared", s.nonce];
    await s.step("alice puts hers", () => alice.store.putItem(ns, "a", { owner: "alice", text: "hers" }));
    await s.step("bob puts his", () => bob.store.putItem(ns, "b", { owner: "bob", text: "his" }));
    await s.step("alice puts one for bob", () =>
      alice.store.putItem(ns, "c", { owner: "bob", text: "gift" }),
    );
    await s.step("alice gets hers", () => alice.store.getItem(ns, "a"));
    await s.step("bob gets alice's", () => bob.store.getItem(ns, "a"));
    await s.step("alice searches", () => alice.store.searchItems(ns));
    await s.step("bob searches", () => bob.store.searchItems(ns));
    await s.step("bob overwrites alice's", () =>
      bob.store.putItem(ns, "a", { owner: "bob", text: "mine now" }),
    );
    await s.step("alice's item after", () => alice.store.getItem(ns, "a"));
    await s.step("bob deletes alice's", () => bob.store.deleteItem(ns, "a"));
    await s.step("alice's item at the end", () => alice.store.getItem(ns, "a"));
    await s.step("alice lists namespaces", () => alice.store.listNamespaces({ prefix: ns }));
    await s.step("no credentials", () => s.client.store.searchItems(ns));
  },
};

export const AUTH_SCENARIOS: readonly Scenario[] = [threads, store];
