// The web console against another server that speaks the API: Hangar serves the console's files, and the console
// (`?api=`) talks to the official dev server (`langgraphjs dev` of @langchain/langgraph-cli, on a copy of the
// example project) across origins: its assistants, a graph with its subgraph, a run streamed with its tokens,
// the thread's history, an interrupt answered. Only public API calls, so nothing of it is Hangar's own. Embedded
// project only: the other server has its own storage.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDir, ROOT, tempDir, useHangar } from "../helpers/server.ts";
import { OFFICIAL_BIN } from "../helpers/cli.ts";
import { waitFor } from "../helpers/wait.ts";
import { launchChromium, watchedPage } from "./harness.ts";

const WAIT = { timeout: 90_000 };

const hangar = useHangar({ env: { HANGAR_CONSOLE: "true" } });
const base = tempDir("hangar-peer-console-");
let peer: ChildProcess | undefined;
let peerUrl = "";
let output = "";
let browser: Awaited<ReturnType<typeof launchChromium>>;

/** A port free on 127.0.0.1 now (the official CLI takes a port number, not 0). */
const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  const project = join(base, "examples");
  cpSync(join(ROOT, "examples"), project, {
    recursive: true,
    filter: (src) => !/[\\/](\.langgraph_api|\.hangar|node_modules)$/.test(src),
  });
  symlinkSync(join(ROOT, "node_modules"), join(base, "node_modules"), "dir");
  // The CLI adds its data folder to the project's .gitignore when it is missing: there already.
  writeFileSync(join(project, ".gitignore"), ".langgraph_api\n");
  const port = await freePort();
  peerUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LANGGRAPH_CLI_NO_ANALYTICS: "1",
    BROWSER: "none",
    LANGSMITH_TRACING: "false",
    LANGCHAIN_TRACING_V2: "false",
  };
  delete env.PORT;
  for (const k of ["DATABASE_URL", "REDIS_URL", "HANGAR_API_KEYS"]) delete env[k];
  const args = ["dev", "--port", String(port), "--host", "127.0.0.1", "--no-browser", "--no-reload"];
  peer = spawn(process.execPath, [OFFICIAL_BIN, ...args, "--config", join(project, "langgraph.json")], {
    cwd: project,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  peer.stdout!.on("data", (d) => (output += d));
  peer.stderr!.on("data", (d) => (output += d));
  await waitFor(
    () => `the official dev server to answer at ${peerUrl}; its output:\n${output}`,
    async () => {
      if (peer!.exitCode !== null) throw new Error(`it exited with ${peer!.exitCode}`);
      return /Server running at/.test(output) && (await fetch(`${peerUrl}/ok`)).ok;
    },
  );
  // Its graphs' schemas are extracted on first use (it compiles the project's TypeScript, tens of seconds of CPU
  // on a busy machine): asked here once, so the pages find them ready.
  const client = new Client({ apiUrl: peerUrl, apiKey: null });
  for (const graphId of ["chat", "research", "approval"]) {
    const [assistant] = await client.assistants.search({ graphId });
    await client.assistants.getSchemas(assistant.assistant_id);
  }
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  if (peer?.pid && peer.exitCode === null) {
    const exited = new Promise((res) => peer!.once("exit", res));
    process.kill(-peer.pid, "SIGTERM");
    await exited;
  }
  cleanupDir(base);
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

    const thread = await client.threads.create();
    await page.goto(consoleUrl(`#/threads/${thread.thread_id}`));
    await page.getByRole("heading", { name: new RegExp(thread.thread_id) }).waitFor(WAIT);
    await page.getByLabel("Assistant").selectOption({ label: "chat (chat)" }, WAIT);
    await page.getByLabel("messages (a user message)").fill("hello from another server's console", WAIT);
    await page.getByRole("button", { name: "Start run" }).click();
    await expect.poll(() => page.getByTestId("run-phase").textContent(), WAIT).toBe("done");
    const line = page.locator('[data-testid="event"][data-event="messages"]');
    expect(Number(await line.getAttribute("data-chunks"))).toBeGreaterThan(1);
    const state = await client.threads.getState<{ messages: { content: string }[] }>(thread.thread_id);
    const answer = state.values.messages[state.values.messages.length - 1].content;
    expect(await page.getByTestId("reply").first().textContent()).toBe(answer);
    const history = await client.threads.getHistory(thread.thread_id, { limit: 50 });
    await expect.poll(() => page.getByTestId("checkpoint").count(), WAIT).toBe(history.length);

    // Every API call went to the official server; Hangar only served the files.
    const origins = new Set(seen);
    expect(origins).toEqual(new Set([hangar.server.url, peerUrl]));
    expect(problems).toEqual([]);
    await page.close();
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
