// The web console (console/, served at /console) in Debian's Chromium through playwright-core: the assistants and
// a graph drawn with its nodes, the threads and a thread's history; with HANGAR_API_KEYS set, the console asks
// for the key, loads nothing without it, refuses a wrong one and works with the right one. Each step's
// screenshot goes to test/browser/screenshots/. On both backends.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";
import { launchChromium } from "./harness.ts";

const SHOTS = join(ROOT, "test/browser/screenshots");
const WAIT = { timeout: 90_000 };
const KEY = "console-test-key-1234";

const open = useHangar({ env: { HANGAR_CONSOLE: "true" } });
const keyed = useHangar({ env: { HANGAR_CONSOLE: "true", HANGAR_API_KEYS: KEY } });

let browser: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A new page that records console errors, page errors and failed requests (except the `expected` statuses). */
async function newPage(expected: number[] = []): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    // The browser reports each refused request on the console too: counted through the responses below.
    if (m.type() === "error" && !/Failed to load resource/.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("requestfailed", (r) => problems.push(`failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on("response", (r) => {
    if (r.status() >= 400 && !expected.includes(r.status())) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
  return { page, problems };
}

/** The `chat` graph's assistant in the console's list (its name, then its graph id). */
const chatLink = (page: Page) =>
  page.getByRole("navigation", { name: "assistants" }).getByRole("link", { name: "chat chat" });

/** Saves the page as test/browser/screenshots/console-<name>-<backend>.png. */
const BACKEND = process.env.HANGAR_TEST_BACKEND ?? "embedded";
const shot = (page: Page, name: string) =>
  page.screenshot({ path: join(SHOTS, `console-${name}-${BACKEND}.png`) });

describe("web console", () => {
  it("shows the assistants and draws a graph with its nodes", async () => {
    const { page, problems } = await newPage();
    // /console redirects to the folder the console's assets are relative to.
    await page.goto(`${open.server.url}/console`);
    expect(new URL(page.url()).pathname).toBe("/console/");
    await chatLink(page).click(WAIT);
    const nodes = page.getByTestId("graph-node");
    await nodes.first().waitFor(WAIT);
    const ids = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute("data-node")));
    expect(ids.sort()).toEqual(["__end__", "__start__", "agent"]);
    await shot(page, "graph");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("lists threads and shows a thread's values and history", async () => {
    const { client } = open;
    const thread = await client.threads.create({ metadata: { console_test: "history" } });
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    const { page, problems } = await newPage();
    await page.goto(`${open.server.url}/console/#/threads`);
    await page.getByLabel("Metadata").fill('{"console_test": "history"}');
    const row = page.getByRole("navigation", { name: "threads" }).getByRole("link");
    await expect.poll(() => row.count(), WAIT).toBe(1);
    await row.first().click();
    await page.getByRole("heading", { name: new RegExp(thread.thread_id) }).waitFor(WAIT);
    const checkpoints = page.getByTestId("checkpoint");
    await checkpoints.first().waitFor(WAIT);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    expect(await checkpoints.count()).toBe(history.length);
    // The values as the API has them (the fake model's answer depends on the runs before: its replies cycle).
    const { values } = await client.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
    const answer = values.messages[values.messages.length - 1].content;
    await expect.poll(() => page.locator("pre").first().textContent(), WAIT).toContain(answer);
    await shot(page, "thread");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("with HANGAR_API_KEYS: asks for the key, loads nothing without it, refuses a wrong one", async () => {
    const { page, problems } = await newPage([401, 403]);
    const api: string[] = [];
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (!path.startsWith("/console")) api.push(`${r.method()} ${path}`);
    });
    await page.goto(`${keyed.server.url}/console/`);
    const form = page.getByRole("form", { name: "credential" });
    await form.waitFor(WAIT);
    await shot(page, "credential");
    // Nothing but the probe was asked of the API, and nothing of it is shown.
    expect(api).toEqual(["POST /assistants/search"]);
    expect(await page.getByRole("navigation", { name: "assistants" }).count()).toBe(0);

    await page.getByLabel("Value").fill("not-the-key");
    await page.getByRole("button", { name: "Use it" }).click();
    await page.getByText("The server refused it").waitFor(WAIT);

    await page.getByLabel("Value").fill(KEY);
    await page.getByRole("button", { name: "Use it" }).click();
    await chatLink(page).waitFor(WAIT);
    // Kept: a reload goes straight in.
    await page.reload();
    await chatLink(page).waitFor(WAIT);
    expect(problems).toEqual([]);
    await page.close();
  });
});
