// The web console (console/, served at /console) in Debian's Chromium through playwright-core: the assistants and
// a graph drawn with its nodes, the threads and a thread's history; a run started from the input form with its
// tokens arriving, a subgraph's events under their namespace, a fork from an older checkpoint, the state edited
// as a node, an assistant's config edited through its schema's form, an interrupt answered; with
// HANGAR_API_KEYS set, the console asks for the key, loads nothing without it, refuses a wrong one and works
// with the right one. Each step's screenshot goes to test/browser/screenshots/. On both backends.
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { launchChromium, screenshot, watchedPage, WAIT } from "./harness.ts";

const KEY = "console-test-key-1234";

const open = useHangar({ env: { HANGAR_CONSOLE: "true" } });
const keyed = useHangar({ env: { HANGAR_CONSOLE: "true", HANGAR_API_KEYS: KEY } });
// The run suites' project: its `steps` graph holds a run at a step until a file exists (or the run is cancelled).
const steps = useHangar({
  config: "test/fixtures/runs-project/langgraph.json",
  env: { HANGAR_CONSOLE: "true" },
});

let browser: Awaited<ReturnType<typeof launchChromium>>;
beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});

/** A new page that records console errors, page errors and failed requests (except the `expected` statuses). */
const newPage = (expected: number[] = []) => watchedPage(browser.context, expected);

/** The `chat` graph's assistant in the console's list (its name, then its graph id). */
const chatLink = (page: Page) =>
  page.getByRole("navigation", { name: "assistants" }).getByRole("link", { name: "chat chat" });

type Messages = { messages: { content: string }[] };

/** A new page on a thread of the open server. */
async function openThread(threadId: string) {
  const opened = await newPage();
  await opened.page.goto(`${open.server.url}/console/#/threads/${threadId}`);
  await opened.page.getByRole("heading", { name: new RegExp(threadId) }).waitFor(WAIT);
  return opened;
}

/** Saves the page as test/browser/screenshots/console-<name>-<backend>.png. */
const shot = (page: Page, name: string) => screenshot(page, `console-${name}`);

describe("web console", () => {
  it("shows the assistants and draws a graph with its nodes", async () => {
    const { page, problems } = await newPage();
    // /console redirects to the folder the console's assets are relative to.
    await page.goto(`${open.server.url}/console`);
    expect(new URL(page.url()).pathname).toBe("/console/");
    // The control plane's page, built into the same folder, is not this server's.
    expect((await fetch(`${open.server.url}/console/control-plane.html`)).status).toBe(404);
    await chatLink(page).click(WAIT);
    const nodes = page.getByTestId("graph-node");
    await nodes.first().waitFor(WAIT);
    const ids = await nodes.evaluateAll((els) => els.map((e) => e.getAttribute("data-node")));
    expect(ids.sort()).toEqual(["__end__", "__start__", "agent"]);
    await shot(page, "graph");

    // A graph with a subgraph (xray): the subgraph's nodes in a box named after it.
    await page
      .getByRole("navigation", { name: "assistants" })
      .getByRole("link", { name: "research research" })
      .click(WAIT);
    const box = page.getByTestId("graph-subgraph");
    await box.waitFor(WAIT);
    expect(await box.getAttribute("data-subgraph")).toBe("research");
    const inner = await nodes.evaluateAll((els) =>
      els.map((e) => e.getAttribute("data-node") ?? "").filter((id) => id.startsWith("research:")),
    );
    expect(inner.sort()).toEqual([
      "research:__start__",
      "research:collect",
      "research:search_docs",
      "research:search_web",
    ]);
    // Each of them drawn inside the box.
    const within = await page.evaluate(() => {
      const b = document.querySelector('[data-testid="graph-subgraph"] rect')!.getBoundingClientRect();
      return [...document.querySelectorAll('[data-node^="research:"] rect')].every((r) => {
        const n = r.getBoundingClientRect();
        return n.left >= b.left && n.right <= b.right && n.top >= b.top && n.bottom <= b.bottom;
      });
    });
    expect(within).toBe(true);
    await shot(page, "subgraph");
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
    await expect.poll(() => page.getByTestId("values").textContent(), WAIT).toContain(answer);
    await shot(page, "thread");

    // A new thread: opened, and listed at once.
    await page.getByLabel("Metadata").fill("");
    const before = new URL(page.url()).hash;
    await page.getByRole("button", { name: "New thread" }).click();
    await expect.poll(() => new URL(page.url()).hash, WAIT).not.toBe(before);
    expect(new URL(page.url()).hash).toMatch(/^#\/threads\/[0-9a-f-]{36}$/);
    const created = new URL(page.url()).hash.split("/")[2];
    await page
      .getByRole("navigation", { name: "threads" })
      .getByRole("link", { name: created.slice(0, 8) })
      .waitFor(WAIT);

    // Deleted through the page after a confirmation: gone from the list and from the API.
    await page.getByRole("button", { name: "Delete this thread" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await expect.poll(() => new URL(page.url()).hash, WAIT).toBe("#/threads");
    await expect
      .poll(
        () =>
          page
            .getByRole("navigation", { name: "threads" })
            .getByRole("link", { name: created.slice(0, 8) })
            .count(),
        WAIT,
      )
      .toBe(0);
    expect((await fetch(`${open.server.url}/threads/${created}`)).status).toBe(404);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("starts a run from the input form and shows its tokens as they arrive; lists the run", async () => {
    const { client } = open;
    const thread = await client.threads.create({ metadata: { console_test: "run" } });
    const { page, problems } = await openThread(thread.thread_id);
    await page.getByLabel("Assistant").selectOption({ label: "chat (chat)" });
    await page.getByLabel("messages (a user message)").fill("hello console");
    await page.getByRole("button", { name: "Start run" }).click();
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    // The answer came as several `messages` events (tokens): one line for the message, its chunks counted and
    // joined into the reply shown.
    const line = page.locator('[data-testid="event"][data-event="messages"]');
    expect(await line.count()).toBe(1);
    expect(Number(await line.getAttribute("data-chunks"))).toBeGreaterThan(1);
    const { values } = await client.threads.getState<Messages>(thread.thread_id);
    expect(values.messages.map((m) => m.content)[0]).toBe("hello console");
    const answer = values.messages[values.messages.length - 1].content;
    expect(await page.getByTestId("reply").first().textContent()).toBe(answer);
    // The runs list: the run, finished.
    const [run] = await client.runs.list(thread.thread_id);
    const row = page.getByTestId("run-row");
    await expect.poll(() => row.first().getAttribute("data-status"), WAIT).toBe("success");
    expect(await row.first().textContent()).toContain(run.run_id.slice(0, 8));
    await shot(page, "run");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("shows a subgraph's events under their namespace, custom events included", async () => {
    const thread = await open.client.threads.create();
    const { page, problems } = await openThread(thread.thread_id);
    await page.getByLabel("Assistant").selectOption({ label: "research (research)" });
    await page.getByLabel("topic", { exact: true }).fill("owls");
    await page.getByRole("button", { name: "Start run" }).click();
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    const names = await page
      .getByTestId("event")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-event") ?? ""));
    expect(names.filter((n) => /^updates\|research:/.test(n)).length).toBeGreaterThan(0);
    expect(names.filter((n) => /^custom\|research:/.test(n)).length).toBe(2);
    expect(names).toContain("values");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("forks from an older checkpoint and edits the state as a node", async () => {
    const { client } = open;
    const thread = await client.threads.create();
    for (const content of ["first", "second"])
      await client.runs.wait(thread.thread_id, "chat", { input: { messages: [{ role: "user", content }] } });
    const { page, problems } = await openThread(thread.thread_id);
    // The checkpoint that ended the first turn (step 1: its two messages), forked with another message.
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    const older = history.find((s) => s.metadata?.step === 1)!;
    const item = page.locator(`[data-checkpoint="${older.checkpoint.checkpoint_id}"]`);
    await item.getByRole("button", { name: "Fork from here" }).click();
    await page.getByText("(a fork)").waitFor(WAIT);
    // The run form (at the top of the page) has the focus: its message box.
    await expect
      .poll(
        () => page.getByLabel("messages (a user message)").evaluate((el) => el === document.activeElement),
        WAIT,
      )
      .toBe(true);
    await page.getByLabel("Assistant").selectOption({ label: "chat (chat)" });
    await page.getByLabel("messages (a user message)").fill("instead");
    await page.getByRole("button", { name: "Start run" }).click();
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    const forked = await client.threads.getState<Messages>(thread.thread_id);
    // The first turn, then the fork's: the second turn is not in this branch.
    expect(forked.values.messages.map((m) => m.content).slice(0, 1)).toEqual(["first"]);
    expect(forked.values.messages.map((m) => m.content)[2]).toBe("instead");
    expect(forked.values.messages).toHaveLength(4);
    // The history marks where the fork's branch starts: its first checkpoint's parent is the one forked from.
    const branch = page.locator('[data-testid="checkpoint"].branch');
    await expect.poll(() => branch.count(), WAIT).toBe(1);
    expect(await branch.textContent()).toContain(`from ${older.checkpoint.checkpoint_id!.slice(0, 8)}`);
    await shot(page, "fork");

    // Edit the state as the agent node: a message appended through the reducer, a checkpoint of source update.
    await page.getByRole("button", { name: "Edit state", exact: true }).click();
    const editor = page.getByRole("form", { name: "edit state" });
    await editor.getByLabel("Values").fill('{"messages": [{"role": "ai", "content": "edited by hand"}]}');
    await editor.getByLabel("As node").fill("agent");
    await editor.getByRole("button", { name: "Save state" }).click();
    await expect.poll(() => page.getByTestId("values").textContent(), WAIT).toContain("edited by hand");
    const edited = await client.threads.getState<Messages>(thread.thread_id);
    expect(edited.values.messages).toHaveLength(5);
    expect(edited.values.messages[4].content).toBe("edited by hand");
    expect(edited.metadata?.source).toBe("update");
    expect(Object.keys((edited.metadata?.writes ?? {}) as object)).toEqual(["agent"]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("edits an assistant's config through its schema's form, and answers an interrupt", async () => {
    const { client } = open;
    const [approval] = await client.assistants.search({ graphId: "approval" });
    const { page, problems } = await newPage();
    await page.goto(`${open.server.url}/console/#/assistants/${approval.assistant_id}`);
    const form = page.getByRole("form", { name: "config" });
    await form.getByLabel("reviewer").fill("Ada");
    await form.getByRole("button", { name: "Save config" }).click();
    await page.getByText(`Saved as version ${approval.version + 1}`).waitFor(WAIT);
    const updated = await client.assistants.get(approval.assistant_id);
    expect(updated.version).toBe(approval.version + 1);
    expect(updated.config.configurable).toMatchObject({ reviewer: "Ada" });
    await expect.poll(() => page.getByTestId("version").count(), WAIT).toBe(2);
    await shot(page, "config");

    // A new assistant from this one: same graph and config, opened and listed.
    await page.getByLabel("New assistant from this one, named").fill("approval by Ada");
    await page.getByRole("button", { name: "Create", exact: true }).click();
    await page.getByRole("heading", { name: "approval by Ada" }).waitFor(WAIT);
    await page
      .getByRole("navigation", { name: "assistants" })
      .getByRole("link", { name: "approval by Ada approval" })
      .waitFor(WAIT);
    const copies = await client.assistants.search({ graphId: "approval" });
    const copy = copies.find((x) => x.name === "approval by Ada")!;
    expect(copy.config.configurable).toMatchObject({ reviewer: "Ada" });
    expect(new URL(page.url()).hash).toBe(`#/assistants/${copy.assistant_id}`);

    // A run of it stops at its interrupt, which names the reviewer from the config; answered in the console.
    const thread = await client.threads.create();
    await page.goto(`${open.server.url}/console/#/threads/${thread.thread_id}`);
    await page.getByLabel("Assistant").selectOption({ label: "approval (approval)" });
    await page.getByLabel("request", { exact: true }).fill("a new roof");
    await page.getByRole("button", { name: "Start run" }).click();
    const asked = page.getByTestId("interrupt");
    await asked.waitFor(WAIT);
    expect(await page.getByTestId("run-phase").textContent()).toBe("interrupted");
    expect(JSON.parse((await asked.textContent()) ?? "")).toEqual({
      question: "Approve this draft?",
      draft: "Proposal: a new roof",
      reviewer: "Ada",
    });
    await shot(page, "interrupt");
    await page.getByRole("form", { name: "interrupt" }).getByLabel("Answer").fill("approved");
    await page.getByRole("button", { name: "Resume" }).click();
    // (The phase shown was already "done", from the run that stopped at the interrupt: the state tells.)
    await expect
      .poll(
        async () => (await client.threads.getState<{ decision?: string }>(thread.thread_id)).values.decision,
        WAIT,
      )
      .toBe("approved");
    await expect.poll(() => asked.count(), WAIT).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("works from the keyboard: runs started and an interrupt answered without the mouse", async () => {
    const { client } = open;
    const thread = await client.threads.create();
    const { page, problems } = await openThread(thread.thread_id);
    /** Presses Tab until `target` has the focus (at most 100 times). */
    const tabTo = async (target: ReturnType<Page["getByLabel"]>) => {
      for (let i = 0; i < 100; i++) {
        if (await target.evaluate((el) => el === document.activeElement)) return;
        await page.keyboard.press("Tab");
      }
      throw new Error(`Tab never reached ${target}`);
    };
    // A chat run: the assistant picked by typing its name, the message sent with Ctrl+Enter.
    await tabTo(page.getByLabel("Assistant"));
    await page.keyboard.type("chat");
    await expect.poll(() => page.getByLabel("Assistant").inputValue(), WAIT).not.toBe("");
    await tabTo(page.getByLabel("messages (a user message)"));
    await page.keyboard.type("typed, not clicked");
    await page.keyboard.press("Control+Enter");
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    const chat = await client.threads.getState<Messages>(thread.thread_id);
    expect(chat.values.messages[0].content).toBe("typed, not clicked");

    // An approval run on another thread: Enter in a field submits; the interrupt's answer field has the focus.
    const other = await client.threads.create();
    await page.goto(`${open.server.url}/console/#/threads/${other.thread_id}`);
    await page.getByRole("heading", { name: new RegExp(other.thread_id) }).waitFor(WAIT);
    await tabTo(page.getByLabel("Assistant"));
    await page.keyboard.type("approval");
    await tabTo(page.getByLabel("request", { exact: true }));
    await page.keyboard.type("a shed");
    await page.keyboard.press("Enter");
    await page.getByTestId("interrupt").waitFor(WAIT);
    await expect
      .poll(() => page.getByLabel("Answer").evaluate((el) => el === document.activeElement), WAIT)
      .toBe(true);
    await page.keyboard.type("yes");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    await expect
      .poll(
        async () => (await client.threads.getState<{ decision?: string }>(other.thread_id)).values.decision,
        WAIT,
      )
      .toBe("yes");
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

    // Kept for this server only: this console pointed at another API (`?api=`) sends that one no credential.
    const sent: Record<string, string>[] = [];
    page.on("request", (r) => {
      if (r.url().startsWith(open.server.url)) sent.push(r.headers());
    });
    await page.goto(`${keyed.server.url}/console/?api=${encodeURIComponent(open.server.url)}`);
    await chatLink(page).waitFor(WAIT);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((h) => "x-api-key" in h || "authorization" in h)).toEqual([]);

    // Forgotten: the form again, and nothing but the probe asked of the API meanwhile.
    await page.goto(`${keyed.server.url}/console/`);
    await chatLink(page).waitFor(WAIT);
    api.length = 0;
    await page.getByRole("button", { name: "Forget credential" }).click();
    await form.waitFor(WAIT);
    expect(api).toEqual(["POST /assistants/search"]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("cancels a running run", async () => {
    const { client } = steps;
    const thread = await client.threads.create();
    const { page, problems } = await newPage();
    await page.goto(`${steps.server.url}/console/#/threads/${thread.thread_id}`);
    await page.getByLabel("Assistant").selectOption({ label: "steps (steps)" });
    // Held at its second step until a file that is never created appears.
    const gate = join(tmpdir(), `hangar-console-never-${process.pid}`);
    const job = { label: "c", steps: 3, hold_at: 1, gate_file: gate };
    await page.getByLabel("job (JSON)").fill(JSON.stringify(job));
    await page.getByRole("button", { name: "Start run" }).click();
    // Running: the first step's update has arrived.
    await page.locator('[data-testid="event"][data-event="updates"]').first().waitFor(WAIT);
    expect(await page.getByTestId("run-phase").textContent()).toBe("running");
    const [running] = await client.runs.list(thread.thread_id);
    expect(running.status).toBe("running");
    await page.getByRole("button", { name: "Cancel run" }).click();
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("cancelled");
    await expect
      .poll(async () => (await client.runs.get(thread.thread_id, running.run_id)).status, WAIT)
      .toBe("interrupted");
    await expect
      .poll(() => page.getByTestId("run-row").first().getAttribute("data-status"), WAIT)
      .toBe("interrupted");
    await shot(page, "cancel");
    expect(problems).toEqual([]);
    await page.close();
  });
});
