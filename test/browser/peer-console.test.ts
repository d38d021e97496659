// The web console against another server that speaks the API: Hangar serves the console's files, and the console
// (`?api=`) talks to the official dev server (`langgraphjs dev` of @langchain/langgraph-cli, the peer the run shares:
// test/helpers/official-peer-setup.ts, on a copy of test/fixtures/differential, whose chat, research and approval
// graphs are the example project's) across origins: its assistants, a graph with its subgraph, a run streamed with
// its tokens, the thread's history, an interrupt answered. Only public API calls, so nothing of it is Hangar's own.
// Embedded project only: the other server has its own storage.
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { officialPeer } from "../helpers/official-peer.ts";
import { launchChromium, watchedPage, WAIT } from "./harness.ts";

const hangar = useHangar({ env: { HANGAR_CONSOLE: "true" } });
let peerUrl = "";
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  // Up, and its graphs' schemas extracted (tens of seconds of CPU on a busy machine, asked once by the setup), so
  // the pages find them ready.
  peerUrl = await officialPeer("main", { schemas: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** The console's files from Hangar, its API the official server's. */
const consoleUrl = (hash = "") => `${hangar.server.url}/console/?api=${encodeURIComponent(peerUrl)}${hash}`;

const newPage = (expected: number[] = []) => watchedPage(browser.context, expected);

describe("web console against the official dev server", () => {
  it("lists its assistants, draws a graph with its subgraph, streams a run and shows the history", async () => {
    const client = new Client({ apiUrl: peerUrl, apiKey: null });
    const { page, problems } = await newPage();
    const seen: string[] = [];
    page.on("request", (r) => seen.push(new URL(r.url()).origin));

    await page.goto(consoleUrl());
    const assistants = page.getByRole("navigation", { name: "assistants" });
    await assistants.getByRole("link", { name: "research research" }).click(WAIT);
    await page.getByTestId("graph-subgraph").waitFor(WAIT);
    const ids = await page
      .getByTestId("graph-node")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-node") ?? ""));
    expect(ids).toEqual(expect.arrayContaining(["plan", "write", "research:collect", "research:search_web"]));

    // The thread on a page of its own: on the same page only the hash would change, and the first view's
    // requests would stay open beside the new view's (a run of the suite once waited there for the schema).
    expect(problems).toEqual([]);
    await page.close();
    const second = await newPage();
    const threadPage = second.page;
    threadPage.on("request", (r) => seen.push(new URL(r.url()).origin));
    const thread = await client.threads.create();
    await threadPage.goto(consoleUrl(`#/threads/${thread.thread_id}`));
    await threadPage.getByRole("heading", { name: new RegExp(thread.thread_id) }).waitFor(WAIT);
    await threadPage.getByLabel("Assistant").selectOption({ label: "chat (chat)" }, WAIT);
    await threadPage
      .getByLabel("messages (a user message)")
      .fill("hello from another server's console", WAIT);
    await threadPage.getByRole("button", { name: "Start run" }).click();
    await expect.poll(() => threadPage.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    const line = threadPage.locator('[data-testid="event"][data-event="messages"]');
    expect(Number(await line.getAttribute("data-chunks"))).toBeGreaterThan(1);
    const state = await client.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
    const answer = state.values.messages[state.values.messages.length - 1].content;
    expect(await threadPage.getByTestId("reply").first().textContent()).toBe(answer);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    await expect.poll(() => threadPage.getByTestId("checkpoint").count(), WAIT).toBe(history.length);

    // Every API call went to the official server; Hangar only served the files.
    const origins = new Set(seen);
    expect(origins).toEqual(new Set([hangar.server.url, peerUrl]));
    expect(second.problems).toEqual([]);
    await threadPage.close();
  });

  it("answers an interrupt on it", async () => {
    const client = new Client({ apiUrl: peerUrl, apiKey: null });
    const thread = await client.threads.create();
    const { page, problems } = await newPage();
    await page.goto(consoleUrl(`#/threads/${thread.thread_id}`));
    await page.getByRole("heading", { name: new RegExp(thread.thread_id) }).waitFor(WAIT);
    await page.getByLabel("Assistant").selectOption({ label: "approval (approval)" }, WAIT);
    await page.getByLabel("request", { exact: true }).fill("a fence", WAIT);
    await page.getByRole("button", { name: "Start run" }).click();
    const asked = page.getByTestId("interrupt");
    await asked.waitFor(WAIT);
    expect(JSON.parse((await asked.textContent()) ?? "")).toMatchObject({ question: "Approve this draft?" });
    await page.getByRole("form", { name: "interrupt" }).getByLabel("Answer").fill("fine");
    await page.getByRole("button", { name: "Resume" }).click();
    await expect
      .poll(
        async () => (await client.threads.getState<{ decision?: string }>(thread.thread_id)).values.decision,
        WAIT,
      )
      .toBe("fine");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("says so when the server has no /metrics", async () => {
    const { page, problems } = await newPage([404]);
    await page.goto(consoleUrl("#/metrics"));
    await page.getByText("This server serves no /metrics").waitFor(WAIT);
    expect(await page.getByTestId("metric-chart").count()).toBeGreaterThan(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
