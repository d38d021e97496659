// Browser acceptance of protocol v2: the official SDK's ThreadStream (`client.threads.stream` of
// @langchain/langgraph-sdk) running in Chromium, on a page (test/browser/page/protocol.ts, built with Vite) served
// from another origin than the Agent Server, so CORS and the browser's WebSocket upgrade are really exercised.
// Over the browser's own WebSocket and over SSE: a run of the approval graph starts, its values, lifecycle and
// `input.requested` reach the page, the page answers the interrupt with `thread.input.respond`, and the resumed
// run completes with the expected values; the page logs no error and no request fails.
import { join } from "node:path";
import type { Page, Request } from "playwright-core";
import { describe, expect, it } from "vitest";
import { ROOT, useHangar } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";
import { usePage, WAIT } from "./harness.ts";
import type { ProtocolPage, Report, SeenEvent, Transport } from "./page/protocol.ts";

// As in use-stream.test.ts: a busy machine may be slow, a failing page fails at once (the waits below return
// as soon as the page reports an error).
const TEST_TIMEOUT = 240_000;

// The protocol fixture project; its `approval` graph (the examples'): write_draft, then an interrupt in review.
const hangar = useHangar({ config: join(ROOT, "test/fixtures/protocol-project/langgraph.json") });
const env = usePage(["protocol.html"]);

/** A WebSocket the page opened, as the browser's network saw it. */
interface SeenSocket {
  url: string;
  sent: any[];
  received: any[];
}

/** What the browser's network and console showed while the page ran. */
interface Watch {
  /** Console errors, page errors, failed requests and error responses. */
  problems: string[];
  /** Requests to the API: method and path. */
  requests: string[];
  /** The Access-Control-Allow-Origin of each API response (CORS). */
  allowOrigins: (string | undefined)[];
  /**
   * Event streams the SDK itself ended after the server had answered them (net::ERR_ABORTED): over SSE it opens
   * a new stream whenever a subscription is added (run.start adds its own), then aborts the one it replaces, and
   * close() aborts the last one.
   */
  abortedStreams: string[];
  sockets: SeenSocket[];
}

const parse = (payload: string | Buffer) => {
  try {
    return JSON.parse(String(payload));
  } catch {
    return String(payload);
  }
};

/** Opens the protocol page (the API on another origin), watching its console and network. */
async function openPage(): Promise<{ page: Page; watch: Watch }> {
  const page = await env.browser.context.newPage();
  const api = new URL(hangar.server.url).origin;
  const watch: Watch = { problems: [], requests: [], allowOrigins: [], abortedStreams: [], sockets: [] };
  const answered = new WeakSet<Request>();
  page.on("console", (m) => {
    if (m.type() === "error") watch.problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => watch.problems.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    const url = new URL(r.url());
    if (url.origin === api) watch.requests.push(`${r.method()} ${url.pathname}`);
  });
  page.on("response", (r) => {
    if (r.status() >= 400) watch.problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
    if (new URL(r.url()).origin !== api) return;
    watch.allowOrigins.push(r.headers()["access-control-allow-origin"]);
    if (r.ok()) answered.add(r.request());
  });
  page.on("requestfailed", (r) => {
    const error = r.failure()?.errorText;
    const { pathname } = new URL(r.url());
    if (error === "net::ERR_ABORTED" && answered.has(r) && pathname.endsWith("/stream/events")) {
      watch.abortedStreams.push(`${r.method()} ${pathname}`);
    } else watch.problems.push(`request failed: ${r.method()} ${r.url()}: ${error}`);
  });
  page.on("websocket", (ws) => {
    const seen: SeenSocket = { url: ws.url(), sent: [], received: [] };
    watch.sockets.push(seen);
    ws.on("framesent", (f) => seen.sent.push(parse(f.payload)));
    ws.on("framereceived", (f) => seen.received.push(parse(f.payload)));
    ws.on("socketerror", (e) => watch.problems.push(`WebSocket error: ${ws.url()}: ${e}`));
  });
  const q = new URLSearchParams({ api: hangar.server.url });
  await page.goto(`${env.site.url}/protocol.html?${q}`);
  await page.waitForFunction(() => document.body.dataset.ready === "true", undefined, WAIT);
  return { page, watch };
}

/** Calls `protocolPage[method](...args)` in the page. */
function call<K extends keyof ProtocolPage>(
  page: Page,
  method: K,
  ...args: Parameters<ProtocolPage[K]>
): Promise<Awaited<ReturnType<ProtocolPage[K]>>> {
  return page.evaluate(
    ([method, args]) => {
      const p = (window as unknown as { protocolPage: any }).protocolPage;
      return p[method](...args);
    },
    [method, args] as const,
  ) as any;
}

/** The page's last report, for the message of a wait that ran out. */
let lastReport: Report | undefined;

/**
 * Waits until the page's report satisfies `pred`, or shows an SDK error (then fails with it), or the page or
 * its network shows a problem (then fails with that).
 */
async function until(page: Page, watch: Watch, what: string, pred: (r: Report) => boolean): Promise<Report> {
  const report = await waitFor(
    () => `${what} (page saw: ${JSON.stringify(lastReport?.events.map(brief))})`,
    async () => {
      const r = (lastReport = await call(page, "report"));
      return (r.errors.length > 0 || watch.problems.length > 0 || pred(r)) && r;
    },
    WAIT.timeout,
  );
  expect(report.errors, "errors the SDK reported in the page").toEqual([]);
  expect(watch.problems, "console errors and failed requests").toEqual([]);
  return report;
}

const brief = (e: SeenEvent) =>
  e.method === "lifecycle" ? `lifecycle:${e.data?.event}@${e.namespace.join("/")}` : e.method;
const root = (events: SeenEvent[]) => events.filter((e) => e.namespace.length === 0);
const lifecycle = (events: SeenEvent[]) =>
  root(events)
    .filter((e) => e.method === "lifecycle")
    .map((e) => e.data.event as string);
const values = (events: SeenEvent[]) =>
  root(events)
    .filter((e) => e.method === "values")
    .map((e) => e.data);

describe("protocol v2: the SDK's ThreadStream in Chromium, page on another origin", () => {
  for (const transport of ["websocket", "sse"] as const satisfies readonly Transport[]) {
    it(
      `over ${transport === "websocket" ? "the browser's WebSocket" : "SSE"}: starts a run, sees its values and interrupt, answers it, sees it complete`,
      async () => {
        expect(new URL(env.site.url).origin).not.toBe(new URL(hangar.server.url).origin);
        const { page, watch } = await openPage();
        const request = `a ${transport} roof`;
        const draft = `Proposal: ${request}`;

        const threadId = await call(page, "open", transport, "approval");
        expect(threadId).toMatch(/^[0-9a-f-]{36}$/);
        const runId = await call(page, "start", { request });
        expect(runId).toMatch(/^[0-9a-f-]{36}$/);

        // The run stops on its interrupt: the page saw the draft's values, the input request and the lifecycle.
        const asked = await until(
          page,
          watch,
          "the run to stop on its interrupt",
          (r) =>
            lifecycle(r.events).includes("interrupted") &&
            r.events.some((e) => e.method === "input.requested") &&
            r.interrupted,
        );
        expect(lifecycle(asked.events).at(-1)).toBe("interrupted");
        expect(values(asked.events).at(-1)).toEqual({ request, draft });
        for (const v of values(asked.events)) expect(v).not.toHaveProperty("__interrupt__");
        const requested = asked.events.find((e) => e.method === "input.requested")!;
        expect(requested.data.payload).toEqual({ question: "Approve this draft?", draft });
        expect(asked.interrupts).toEqual([
          { interruptId: requested.data.interrupt_id, payload: requested.data.payload, namespace: [] },
        ]);
        const seqs = asked.events.map((e) => e.seq);
        expect(new Set(seqs).size, "each event once").toBe(seqs.length);

        // The page answers with thread.input.respond; the resumed run completes with the decision.
        await call(page, "respond", "approved");
        const done = await until(
          page,
          watch,
          "the resumed run to complete",
          (r) => lifecycle(r.events).at(-1) === "completed",
        );
        const final = { request, draft, decision: "approved" };
        expect(lifecycle(done.events)).toEqual(["running", "interrupted", "running", "completed"]);
        expect(values(done.events).at(-1)).toEqual(final);
        expect(done.interrupted).toBe(false);
        expect(done.interrupts).toEqual([]);
        expect(await call(page, "state")).toEqual(final);

        const streamPath = `/threads/${threadId}/stream/events`;
        if (transport === "websocket") {
          // One native WebSocket to the thread's stream, from the page's origin, carried the commands and the
          // events: no HTTP request to the API at all.
          expect(watch.sockets.map((s) => s.url)).toEqual([
            `${hangar.server.url.replace(/^http/, "ws")}${streamPath}`,
          ]);
          const [socket] = watch.sockets;
          expect(new Set(socket.sent.map((m) => m.method))).toEqual(
            new Set(["subscription.subscribe", "run.start", "input.respond", "state.get"]),
          );
          const answers = socket.received.filter((m) => m.type !== "event");
          expect(answers.map((m) => m.type)).toEqual(socket.sent.map(() => "success"));
          expect(socket.received.filter((m) => m.type === "event").map((m) => m.method)).toEqual(
            expect.arrayContaining(["lifecycle", "values", "input.requested"]),
          );
          expect(watch.requests).toEqual([]);
        } else {
          // Commands as POSTs, events as POSTed SSE streams (preflighted: JSON bodies), the responses allowing
          // the page's origin; no WebSocket.
          expect(watch.sockets).toEqual([]);
          const commands = `POST /threads/${threadId}/commands`;
          expect(watch.requests.filter((r) => r === commands)).toHaveLength(3); // run.start, input.respond, state.get
          expect(watch.requests).toContain(`POST ${streamPath}`);
          expect(new Set(watch.requests)).toEqual(new Set([commands, `POST ${streamPath}`]));
          expect(new Set(watch.allowOrigins)).toEqual(new Set([new URL(env.site.url).origin]));
        }
        expect(watch.problems, "console errors and failed requests").toEqual([]);

        await call(page, "close");
        expect(watch.problems, "console errors and failed requests").toEqual([]);
        await page.close();
      },
      TEST_TIMEOUT,
    );
  }
});
