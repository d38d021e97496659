// End-to-end: crons (a seconds field makes them fire every second): stateless and thread crons, enable,
// end_time, search/count/get/patch/delete, and clear errors.
import { describe, expect, it } from "vitest";
import { httpError, postJson } from "../helpers/http.ts";
import { useHangar } from "../helpers/server.ts";
import { waitFor as eventually } from "../helpers/wait.ts";

const hangar = useHangar();
const EVERY_SECOND = "* * * * * *";

const threadsOf = (cronId: string) =>
  hangar.client.threads.search({ metadata: { cron_id: cronId }, limit: 100 });

describe("crons", () => {
  it("a stateless cron makes a new thread per execution, each with cron_id in its metadata", async () => {
    const { client } = hangar;
    const cron = await client.crons.create("research", {
      schedule: EVERY_SECOND,
      input: { topic: "cron" },
      onRunCompleted: "keep",
    } as any);
    expect(cron.next_run_date).toBeTruthy();
    const threads = await eventually("two executions", async () => {
      const t = await threadsOf(cron.cron_id);
      return t.length >= 2 ? t : undefined;
    });
    expect(new Set(threads.map((t) => t.thread_id)).size).toBe(threads.length);
    for (const t of threads.slice(0, 2)) {
      const runs = await eventually("the run to finish", async () => {
        const r = await client.runs.list(t.thread_id);
        return r.length > 0 && r.every((x) => x.status === "success") ? r : undefined;
      });
      expect(runs).toHaveLength(1);
      expect(runs[0].metadata?.cron_id).toBe(cron.cron_id);
      expect((t.metadata as Record<string, unknown>).cron_id).toBe(cron.cron_id);
    }
    // Disabled, it stops firing. An execution whose date was claimed just before the update may still make its
    // thread after it (seen on a loaded machine): at most that one; then, seconds later, no new thread at all.
    await client.crons.update(cron.cron_id, { enabled: false } as any);
    const before = (await threadsOf(cron.cron_id)).length;
    await new Promise((r) => setTimeout(r, 2_500));
    const settled = (await threadsOf(cron.cron_id)).length;
    expect(settled - before).toBeLessThanOrEqual(1);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await threadsOf(cron.cron_id)).length).toBe(settled);
    await client.crons.delete(cron.cron_id);
  });

  it("a thread cron runs on its thread, and end_time stops it", async () => {
    const { client } = hangar;
    const thread = await client.threads.create();
    const endTime = new Date(Date.now() + 2_500).toISOString();
    const cron = await client.crons.createForThread(thread.thread_id, "research", {
      schedule: EVERY_SECOND,
      input: { topic: "thread cron" },
      endTime,
    } as any);
    expect(cron.thread_id).toBe(thread.thread_id);
    const ended = await eventually("the cron to pass its end_time", async () => {
      const c = await client.crons.search({ threadId: thread.thread_id } as any);
      return c[0] && c[0].next_run_date === null ? c[0] : undefined;
    });
    expect(ended.cron_id).toBe(cron.cron_id);
    const runs = await eventually("its runs to finish", async () => {
      const r = await client.runs.list(thread.thread_id, { limit: 100 });
      return r.length > 0 && r.every((x) => x.status === "success") ? r : undefined;
    });
    expect(runs.length).toBeGreaterThanOrEqual(1);
    for (const r of runs) expect(r.metadata?.cron_id).toBe(cron.cron_id);
    expect((await client.threads.get(thread.thread_id)).metadata?.cron_id).toBe(cron.cron_id);
    const count = runs.length;
    await new Promise((r) => setTimeout(r, 1_500));
    expect(await client.runs.list(thread.thread_id, { limit: 100 })).toHaveLength(count);
  });

  it("search, count, get, patch and delete", async () => {
    const { client, server } = hangar;
    const tag = `crud-${Date.now()}`;
    const a = await client.crons.create("chat", { schedule: "0 9 * * *", metadata: { tag } } as any);
    const b = await client.crons.create("chat", {
      schedule: "0 10 * * *",
      metadata: { tag },
      enabled: false,
    } as any);
    const found = await client.crons.search({
      metadata: { tag },
      sortBy: "created_at",
      sortOrder: "asc",
    } as any);
    expect(found.map((c) => c.cron_id)).toEqual([a.cron_id, b.cron_id]);
    const count = await postJson(server.url, "/runs/crons/count", { metadata: { tag } });
    expect(count.body).toBe(2);
    const got = await postJson(server.url, `/runs/crons/search`, { metadata: { tag }, enabled: false });
    expect(got.body.map((c: { cron_id: string }) => c.cron_id)).toEqual([b.cron_id]);
    const patched = await fetch(`${server.url}/runs/crons/${a.cron_id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ schedule: "30 9 * * *", timezone: "Europe/Paris" }),
    }).then((r) => r.json());
    expect(patched.schedule).toBe("30 9 * * *");
    expect(new Date(patched.next_run_date).getUTCMinutes()).toBe(30);
    const one = await fetch(`${server.url}/runs/crons/${a.cron_id}`).then((r) => r.json());
    expect(one.schedule).toBe("30 9 * * *");
    await client.crons.delete(a.cron_id);
    expect((await fetch(`${server.url}/runs/crons/${a.cron_id}`)).status).toBe(404);
    await client.crons.delete(b.cron_id);
  });

  it("a bad schedule (or time zone) is 422 naming it; an unknown assistant or thread is 404; nothing is stored", async () => {
    const { client, server } = hangar;
    const bad = await postJson(server.url, "/runs/crons", {
      assistant_id: "chat",
      schedule: "every tuesday",
    });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/schedule/);
    // A valid schedule in an unknown time zone: the timezone is named, not the schedule.
    const zone = await postJson(server.url, "/runs/crons", {
      assistant_id: "chat",
      schedule: "*/5 * * * *",
      timezone: "Mars/Olympus",
    });
    expect(zone.status).toBe(422);
    expect(zone.body.detail).toMatch(/^timezone: "Mars\/Olympus" is not a known IANA time zone/);
    expect((await httpError(client.crons.create("nope", { schedule: "0 9 * * *" } as any))).status).toBe(404);
    const missing = await postJson(server.url, "/threads/00000000-0000-4000-8000-000000000000/runs/crons", {
      assistant_id: "chat",
      schedule: "0 9 * * *",
    });
    expect(missing.status).toBe(404);
    const all = await postJson(server.url, "/runs/crons/search", { limit: 1000 });
    expect(all.body.every((c: { schedule: string }) => c.schedule !== "every tuesday")).toBe(true);
  });
});
