// The web console's store, crons and metrics pages in Debian's Chromium through playwright-core: the store's
// namespaces, items and one item's value, an item put through the form (invalid JSON refused before it is sent)
// and one deleted; a cron created through the form (stateless, then on a thread), edited (schedule, time zone,
// end time), paused, resumed and one deleted; the metrics charts filling with samples and showing a run that
// finished. Each change is checked with the SDK. Each step's
// screenshot goes to test/browser/screenshots/. On both backends.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { launchChromium, screenshot, watchedPage, WAIT } from "./harness.ts";

const hangar = useHangar({ env: { HANGAR_CONSOLE: "true" } });

let browser: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A new page that records console errors, page errors and failed requests. */
async function newPage(): Promise<{ page: Page; problems: string[] }> {
  const watched = await watchedPage(browser.context);
  await watched.page.setViewportSize({ width: 1366, height: 900 });
  return watched;
}

const shot = (page: Page, name: string) => screenshot(page, `console-${name}`, true);

describe("web console: store, crons and metrics pages", () => {
  it("store: finds a namespace, shows its items and a value, puts an item and deletes one", async () => {
    const { client } = hangar;
    const alice = ["pages", "alice"];
    await client.store.putItem(alice, "prefs", { theme: "dark", size: 3 });
    await client.store.putItem(alice, "todo", { items: ["milk", "bread"] });
    await client.store.putItem(["pages", "bob"], "note", { text: "hi" });
    await client.store.putItem(["elsewhere"], "other", { x: 1 });

    const { page, problems } = await newPage();
    await page.goto(`${hangar.server.url}/console/#/store`);
    await page.getByLabel("Prefix").fill("pages");
    const namespaces = page.getByRole("navigation", { name: "namespaces" }).getByRole("link");
    await expect.poll(() => namespaces.allTextContents(), WAIT).toEqual(["pages.alice", "pages.bob"]);
    await namespaces.filter({ hasText: "pages.alice" }).click();
    expect(new URL(page.url()).hash).toBe("#/store/pages.alice");

    const items = page.getByTestId("store-item");
    await expect.poll(() => items.count(), WAIT).toBe(2);
    await items.getByRole("button", { name: "prefs", exact: true }).click();
    const item = page.getByRole("region", { name: "item", exact: true });
    // The value shown, parsed (PostgreSQL's jsonb keeps its keys in its own order).
    const shownValue = async () => {
      const text = await item.getByLabel("value", { exact: true }).textContent({ timeout: 1000 });
      return text ? (JSON.parse(text) as unknown) : undefined;
    };
    await expect.poll(shownValue, WAIT).toEqual({ theme: "dark", size: 3 });
    await item.getByText("Created").waitFor(WAIT);
    await shot(page, "store");

    // Put through the form: the namespace is the one open; invalid JSON is named and not sent.
    const form = page.getByRole("form", { name: "put item" });
    expect(await form.getByLabel("Namespace", { exact: true }).inputValue()).toBe("pages.alice");
    await form.getByLabel("Key", { exact: true }).fill("fresh");
    await form.getByLabel("Value (JSON object)").fill("{not json");
    await form.getByRole("button", { name: "Put item" }).click();
    await form
      .getByRole("alert")
      .getByText(/^Value: not valid JSON/)
      .waitFor(WAIT);
    expect(await client.store.getItem(alice, "fresh")).toBeNull();
    await form.getByLabel("Value (JSON object)").fill('{"color": "blue", "n": [1, 2]}');
    await form.getByRole("button", { name: "Put item" }).click();
    await form.getByRole("status").getByText("Stored fresh in pages.alice.").waitFor(WAIT);
    expect((await client.store.getItem(alice, "fresh"))?.value).toEqual({ color: "blue", n: [1, 2] });
    await expect.poll(() => items.count(), WAIT).toBe(3);
    await expect.poll(shownValue, WAIT).toEqual({ color: "blue", n: [1, 2] });

    // Delete through the UI: asked first.
    await items.getByRole("button", { name: "todo", exact: true }).click();
    await item.getByRole("heading", { name: /Item todo/ }).waitFor(WAIT);
    await item.getByRole("button", { name: "Delete item todo" }).click();
    await item.getByRole("button", { name: "Yes, delete" }).click();
    await expect.poll(() => items.count(), WAIT).toBe(2);
    expect(await client.store.getItem(alice, "todo")).toBeNull();
    expect((await client.store.searchItems(alice)).items.map((i) => i.key).sort()).toEqual([
      "fresh",
      "prefs",
    ]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("crons: creates one through the form (stateless, then on a thread), lists them, edits, pauses and deletes one", async () => {
    const { client } = hangar;
    const [chat] = await client.assistants.search({ graphId: "chat", limit: 1 });
    const thread = await client.threads.create();
    const { page, problems } = await newPage();
    await page.goto(`${hangar.server.url}/console/#/crons`);
    const form = page.getByRole("form", { name: "create cron" });
    await form.waitFor(WAIT);
    await form.getByLabel("Assistant").selectOption(chat.assistant_id);
    await form.getByLabel("Schedule").fill("0 0 1 1 *");
    // Invalid input JSON: named, and nothing sent.
    await form.getByLabel("Input (JSON, optional)").fill("{oops");
    await form.getByRole("button", { name: "Create cron" }).click();
    await form
      .getByRole("alert")
      .getByText(/^Input: not valid JSON/)
      .waitFor(WAIT);
    expect(await client.crons.search({ assistantId: chat.assistant_id })).toEqual([]);

    const input = { messages: [{ role: "user", content: "from a cron" }] };
    await form.getByLabel("Input (JSON, optional)").fill(JSON.stringify(input));
    await form.getByRole("button", { name: "Create cron" }).click();
    await form
      .getByRole("status")
      .getByText(/^Created cron /)
      .waitFor(WAIT);
    const [stateless] = await client.crons.search({ assistantId: chat.assistant_id });
    expect(stateless).toMatchObject({
      schedule: "0 0 1 1 *",
      thread_id: null,
      assistant_id: chat.assistant_id,
    });
    expect(stateless.payload.input).toEqual(input);

    const rows = page.getByTestId("cron");
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    expect(await rows.first().textContent()).toContain("0 0 1 1 *");

    // On a thread: createForThread.
    await form.getByLabel("Schedule").fill("30 6 * * 1");
    await form.getByLabel(/^Thread id/).fill(thread.thread_id);
    await form.getByRole("button", { name: "Create cron" }).click();
    const onThread = () => client.crons.search({ threadId: thread.thread_id });
    await expect.poll(async () => (await onThread()).map((c) => c.schedule), WAIT).toEqual(["30 6 * * 1"]);
    await expect.poll(() => rows.count(), WAIT).toBe(2);
    await rows
      .filter({ hasText: "30 6 * * 1" })
      .getByRole("link", { name: thread.thread_id.slice(0, 8) })
      .waitFor();
    await shot(page, "crons");

    // Edit the thread's cron in place: a schedule the API refuses is shown and changes nothing; then a new
    // schedule, time zone and end time are saved.
    const [threadCron] = await onThread();
    const editRow = page.locator(`[data-cron-id="${threadCron.cron_id}"]`);
    await editRow.getByRole("button", { name: /^Edit cron/ }).click();
    const edit = editRow.getByRole("form", { name: /^edit cron/ });
    await edit.getByLabel("Schedule").fill("every tuesday");
    await edit.getByRole("button", { name: "Save" }).click();
    await edit
      .getByRole("alert")
      .getByText(/schedule/i)
      .waitFor(WAIT);
    expect((await onThread())[0].schedule).toBe("30 6 * * 1");
    await edit.getByLabel("Schedule").fill("15 7 * * 2");
    await edit.getByLabel("Timezone").fill("Europe/Paris");
    await edit.getByLabel("Ends").fill("2099-01-02T03:04");
    await edit.getByRole("button", { name: "Save" }).click();
    await editRow.getByText("15 7 * * 2").waitFor(WAIT);
    const [edited] = await onThread();
    expect(edited).toMatchObject({
      cron_id: threadCron.cron_id,
      schedule: "15 7 * * 2",
      timezone: "Europe/Paris",
    });
    expect(new Date(edited.end_time!).getFullYear()).toBe(2099);
    // The next run is a Tuesday at 7:15 in Paris.
    const next = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Paris",
      weekday: "short",
      hour: "2-digit",
      minute: "2-digit",
    }).format(new Date(edited.next_run_date!));
    expect(next).toBe("Tue 07:15");

    // Paused, then resumed.
    await editRow.getByRole("button", { name: /^Disable cron/ }).click();
    await editRow.getByRole("button", { name: /^Enable cron/ }).waitFor(WAIT);
    expect((await onThread())[0].enabled).toBe(false);
    await editRow.getByRole("button", { name: /^Enable cron/ }).click();
    await editRow.getByRole("button", { name: /^Disable cron/ }).waitFor(WAIT);
    expect((await onThread())[0].enabled).toBe(true);

    // Delete the stateless one: asked first.
    const row = rows.filter({ hasText: "0 0 1 1 *" });
    await row.getByRole("button", { name: /^Delete cron/ }).click();
    await row.getByRole("button", { name: "Yes, delete" }).click();
    await expect.poll(() => rows.count(), WAIT).toBe(1);
    const left = await client.crons.search({ assistantId: chat.assistant_id });
    expect(left.map((c) => c.cron_id)).toEqual((await onThread()).map((c) => c.cron_id));
    expect(left.map((c) => c.cron_id)).not.toContain(stateless.cron_id);
    // The one error answer: the refused schedule.
    expect(problems).toEqual([`HTTP 422 ${hangar.server.url}/runs/crons/${threadCron.cron_id}`]);
    await page.close();
  });

  it("metrics: the charts fill with samples and show a finished run", async () => {
    const { client } = hangar;
    const { page, problems } = await newPage();
    await page.goto(`${hangar.server.url}/console/#/metrics`);
    const charts = page.getByTestId("metric-chart");
    await expect.poll(() => charts.count(), WAIT).toBeGreaterThanOrEqual(5);
    const labels = await charts.evaluateAll((els) => els.map((e) => e.getAttribute("aria-label")));
    for (const metric of [
      "hangar_runs_running",
      "hangar_runs_pending",
      "hangar_runs_finished_total",
      "hangar_stream_clients",
      "hangar_http_request_duration_seconds",
    ])
      expect(labels.some((l) => l?.includes(metric))).toBe(true);
    const samples = async () => Number(await charts.first().getAttribute("data-samples"));
    await expect.poll(samples, WAIT).toBeGreaterThanOrEqual(1);
    const before = await samples();

    await client.runs.wait(null, "chat", { input: { messages: [{ role: "user", content: "metrics" }] } });
    const finished = page.locator('[data-testid="metric-chart"][data-metric="hangar_runs_finished_total"]');
    await expect.poll(() => finished.locator(".legend").textContent(), WAIT).toMatch(/success: \d+/);
    await expect.poll(samples, WAIT).toBeGreaterThan(before);
    // Drawn: a line per status, and its latest value as a dot.
    expect(await finished.locator("path.line").count()).toBeGreaterThanOrEqual(1);
    await expect.poll(() => finished.locator("path.line").first().getAttribute("d"), WAIT).toMatch(/^M.*L/);
    await shot(page, "metrics");
    expect(problems).toEqual([]);
    await page.close();
  });
});
