// Browser acceptance: a React page using `useStream` (@langchain/langgraph-sdk/react), built with Vite and
// served from another origin, talks to `hangar dev` on the example project with no `http.cors`: a message
// streams, the thread is kept across a reload, a second turn works, and an interrupt is resumed.
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";
import { usePage, WAIT } from "./harness.ts";

/** Per test: a busy machine may be slow, a failing page fails at once (see `until`). */
const TEST_TIMEOUT = 240_000;

const hangar = useHangar();
const env = usePage();

/** Opens the page for `graph`, on `thread` if given; fails at once on an error shown by the page. */
async function open(graph: string, thread?: string): Promise<Page> {
  const page = await env.browser.context.newPage();
  const q = new URLSearchParams({ api: hangar.server.url, graph, ...(thread ? { thread } : {}) });
  await page.goto(`${env.site.url}/?${q}`);
  await page.getByTestId("app").waitFor(WAIT);
  return page;
}

/** Waits until `selector` is on the page, or the page shows an error (then fails with it). */
async function until(page: Page, selector: string): Promise<void> {
  await page.locator(`${selector}, [data-testid=error]`).first().waitFor(WAIT);
  await noError(page);
}

/** Waits until the page shows `n` messages, the last an AI one with text, and nothing loads; or an error. */
async function settledMessages(page: Page, n: number): Promise<string[]> {
  await page.waitForFunction(
    (n) => {
      if (document.querySelector("[data-testid=error]")) return true;
      const app = document.querySelector("[data-testid=app]");
      const items = [...document.querySelectorAll("[data-testid=message]")];
      const last = items[items.length - 1];
      return (
        app?.getAttribute("data-loading") === "false" &&
        items.length === n &&
        last?.getAttribute("data-type") === "ai" &&
        (last.textContent ?? "").length > 0
      );
    },
    n,
    WAIT,
  );
  await noError(page);
  return page.getByTestId("message").allTextContents();
}

async function noError(page: Page): Promise<void> {
  const error = page.getByTestId("error");
  expect(await error.count(), (await error.allTextContents()).join("; ")).toBe(0);
}

async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId("prompt").fill(text);
  await page.getByTestId("send").click();
}

const threadOf = (page: Page) => new URL(page.url()).searchParams.get("thread");

describe("useStream in Chromium, page on another origin, no http.cors", () => {
  it(
    "streams a chat, keeps the thread across a reload, and takes a second turn",
    async () => {
      expect(new URL(env.site.url).origin).not.toBe(new URL(hangar.server.url).origin);
      const page = await open("chat");

      await send(page, "hello");
      const first = await settledMessages(page, 2);
      expect(first[0]).toBe("hello");
      // Tokens streamed: the SDK read several `messages` events, and the page saw the AI message grow to its end.
      const counts = await page.evaluate(() => (window as any).__messageEvents as number[]);
      expect(
        counts.some((c) => c > 2),
        `messages events per stream: ${counts}`,
      ).toBe(true);
      const lengths = await page.evaluate(() => (window as any).__aiLengths as number[]);
      expect(lengths[lengths.length - 1]).toBe(first[1].length);

      // The thread id is kept (in the URL, through onThreadId) and the server holds the turn.
      const thread = threadOf(page);
      expect(thread).toMatch(/^[0-9a-f-]{36}$/);
      const state = await hangar.client.threads.getState<{ messages: unknown[] }>(thread!);
      expect(state.values.messages).toHaveLength(2);

      // A reload restores the history from the server.
      await page.reload();
      await page.getByTestId("app").waitFor(WAIT);
      expect(await settledMessages(page, 2)).toEqual(first);
      expect(threadOf(page)).toBe(thread);

      // A second turn on the same thread.
      await send(page, "again");
      const second = await settledMessages(page, 4);
      expect(second.slice(0, 3)).toEqual([...first, "again"]);
      expect(threadOf(page)).toBe(thread);
      expect(
        (await hangar.client.threads.getState<{ messages: unknown[] }>(thread!)).values.messages,
      ).toHaveLength(4);
      await page.close();
    },
    TEST_TIMEOUT,
  );

  for (const [button, sent, decision] of [
    ["resume", undefined, "resumed"],
    ["approve", {}, "approved"],
  ] as const) {
    it(
      `resumes an interrupt from the page (${button}: input ${JSON.stringify(sent)} with the command)`,
      async () => {
        const page = await open("approval");
        await page.getByTestId("start").click();
        await until(page, "[data-testid=interrupt]");
        const interrupt = page.getByTestId("interrupt");
        expect(await interrupt.textContent()).toContain("Approve this draft?");
        expect((await hangar.client.threads.get(threadOf(page)!)).status).toBe("interrupted");

        const bodies: unknown[] = [];
        const onRequest = (r: Request) => {
          if (r.method() === "POST" && r.url().endsWith("/runs/stream")) bodies.push(r.postDataJSON());
        };
        page.on("request", onRequest);
        await page.getByTestId(button).click();
        await until(page, "[data-testid=decision]:not(:empty)");
        expect(await page.getByTestId("decision").textContent()).toBe(decision);
        page.off("request", onRequest);
        expect(bodies).toHaveLength(1);
        const body = bodies[0] as { input?: unknown; command?: unknown };
        expect(body.command).toEqual({ resume: decision });
        if (sent === undefined) expect(body.input ?? null).toBeNull();
        else expect(body.input).toEqual(sent);
        expect((await hangar.client.threads.get(threadOf(page)!)).status).toBe("idle");
        await page.close();
      },
      TEST_TIMEOUT,
    );
  }
});
