// The control plane's web console (console/control-plane.html, served at the control plane's root) in Debian's
// Chromium through playwright-core, against a real `hangar control-plane` with its local reconciler: the console
// asks for the key (the API got nothing but the probe), refuses a wrong one; a deployment of a copy of examples/
// made through the form, its build log followed live and its revision reaching DEPLOYED on the page; the
// deployment's URL opens its own Agent Server's console (the `chat` assistant listed); Redeploy makes a revision
// that takes over; the deployments list and the listeners page; the console's files served without a key, nothing
// else; the deployment deleted through the page. No page error, console error or failed request. Each step's
// screenshot goes to test/browser/screenshots/. On both backends (the control plane's store on PostgreSQL in the
// postgres project).
import { cpSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpClient, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { cleanupDir, ROOT, tempDir } from "../helpers/server.ts";
import { launchChromium, pageProblems, screenshot } from "./harness.ts";

const WAIT = { timeout: 150_000 };
const KEY = "cp-console-test-key-1234";
const NAME = "console-walk";

/** The folder deployments may come from (HANGAR_CP_SOURCE_ROOTS), with the copy of examples/ in it. */
const sources = realpathSync(tempDir("hangar-cp-console-"));
const project = join(sources, "project");

let cp: CpProcess;
let api: CpClient;
let browser: Awaited<ReturnType<typeof launchChromium>>;

beforeAll(async () => {
  cpSync(join(ROOT, "examples"), project, { recursive: true });
  cp = await startCp({
    reconcile: true,
    env: {
      HANGAR_CP_BOOTSTRAP_API_KEY: KEY,
      // Listeners are for organizations on this plan only (the listeners page lists one).
      HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise",
      HANGAR_CP_SOURCE_ROOTS: sources,
    },
  });
  api = cpClient(cp.url, { "x-api-key": KEY });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await cp?.stop();
  cleanupDir(sources);
  if (cp) cleanupDir(cp.dataDir);
});

/** Saves the page as test/browser/screenshots/console-cp-<name>-<backend>.png. */
const shot = (page: Page, name: string) => screenshot(page, `console-cp-${name}`, true);

describe("control plane web console", () => {
  let page: Page;
  /** Problems from the key being given on (the probe and the wrong key are the expected 401s before). */
  const problems: string[] = [];
  /** The API calls of the page: method and path. */
  const calls: string[] = [];
  let deploymentId: string;

  it("asks for the key, loads nothing without it, refuses a wrong one, goes in with the right one", async () => {
    page = await browser.context.newPage();
    const before: string[] = [];
    await pageProblems(browser.context, page, [401], before);
    let refusals = 0;
    page.on("response", (r) => {
      if (r.status() === 401 && new URL(r.url()).pathname === "/v2/deployments") refusals++;
    });
    page.on("request", (r) => {
      const path = new URL(r.url()).pathname;
      if (path !== "/" && !path.startsWith("/assets/")) calls.push(`${r.method()} ${path}`);
    });
    await page.goto(`${cp.url}/`);
    const form = page.getByRole("form", { name: "credential" });
    await form.waitFor(WAIT);
    await shot(page, "credential");
    // Nothing but the probe was asked of the API, and nothing of it is shown.
    expect(calls).toEqual(["GET /v2/deployments"]);
    expect(await page.getByRole("region", { name: "deployments" }).count()).toBe(0);

    await page.getByLabel("Key", { exact: true }).fill("not-the-key");
    await page.getByRole("button", { name: "Use it" }).click();
    await page.getByText("The server refused it").waitFor(WAIT);
    // The refusal's response event can reach the test after the page showed it: the watcher of what follows
    // starts once both 401s (the probe, the wrong key) have (it saw the second on a loaded machine otherwise).
    await expect.poll(() => refusals, WAIT).toBe(2);
    expect(before).toEqual([]);

    await pageProblems(browser.context, page, [], problems);
    await page.getByLabel("Key", { exact: true }).fill(KEY);
    await page.getByRole("button", { name: "Use it" }).click();
    await page.getByText("No deployments yet").waitFor(WAIT);
    // Kept: a reload goes straight in.
    await page.reload();
    await page.getByText("No deployments yet").waitFor(WAIT);
    await shot(page, "empty");
    expect(problems).toEqual([]);
  });

  it("creates a deployment through the form and follows its build log live to DEPLOYED", async () => {
    await page
      .getByRole("navigation", { name: "pages" })
      .getByRole("link", { name: "New deployment" })
      .click();
    const form = page.getByRole("form", { name: "new deployment" });
    await form.waitFor(WAIT);
    await form.getByLabel("Name", { exact: true }).fill(NAME);
    await form.getByLabel("Deployment type", { exact: true }).selectOption("dev");
    await form.getByLabel("A directory on the control plane's machine").check();
    await form.getByLabel("Directory", { exact: true }).fill(project);
    await form.getByRole("button", { name: "Add a secret" }).click();
    await form.getByLabel("Secret 1 name").fill("CONSOLE_SECRET");
    await form.getByLabel("Secret 1 value").fill("s3cret-value");
    await shot(page, "form");
    const logReads = () => calls.filter((c) => /^POST \/v1\/projects\/.+\/build_logs$/.test(c)).length;
    await form.getByRole("button", { name: "Create deployment" }).click();

    // On to the deployment's page, its revision followed.
    await page.waitForURL(/#\/deployments\/[0-9a-f-]{36}$/, WAIT);
    deploymentId = decodeURIComponent(new URL(page.url()).hash.split("/")[2]);
    const created = await api.get(`/v2/deployments/${deploymentId}`);
    expect(created.status).toBe(200);
    expect(created.body.name).toBe(NAME);
    expect(created.body.source_config.repo_url).toBe(project);
    expect(created.body.secrets.map((s: { name: string }) => s.name)).toEqual(["CONSOLE_SECRET"]);

    const buildLines = page.getByTestId("build-log-line");
    await buildLines.first().waitFor(WAIT);
    await shot(page, "build-log");
    const revisions = page.getByRole("table", { name: "revisions" });
    await revisions.getByText("DEPLOYED", { exact: true }).waitFor(WAIT);
    // Once there, the logs are no longer followed (each offers to load new lines instead).
    await expect.poll(() => page.getByRole("button", { name: "Load new lines" }).count(), WAIT).toBe(2);
    // The log was read more than once while the revision was on its way, and the page has every line of it.
    expect(logReads()).toBeGreaterThan(1);
    const revisionId = created.body.latest_revision_id;
    const log = await api.post(`/v1/projects/${deploymentId}/revisions/${revisionId}/build_logs`, {
      limit: 1000,
    });
    expect(log.status).toBe(200);
    expect(log.body.logs.length).toBeGreaterThan(0);
    expect(await buildLines.count()).toBe(log.body.logs.length);
    await expect
      .poll(() => page.getByRole("log", { name: "build log" }).textContent(), WAIT)
      .toContain(log.body.logs.at(-1).message);
    expect(await page.getByTestId("deploy-log-line").count()).toBeGreaterThan(0);
    const revision = await api.get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    expect(revision.body.status).toBe("DEPLOYED");
    await shot(page, "deployed");
    expect(problems).toEqual([]);
  });

  it("the deployment's URL opens its Agent Server's console", async () => {
    const url = `${cp.url}/deployments/${deploymentId}`;
    const link = page.getByRole("region", { name: "deployment" }).getByRole("link", { name: url });
    expect(await link.getAttribute("href")).toBe(`${url}/console/`);
    const [agent] = await Promise.all([browser.context.waitForEvent("page"), link.click()]);
    await pageProblems(browser.context, agent, [], problems);
    await agent
      .getByRole("navigation", { name: "assistants" })
      .getByRole("link", { name: "chat chat" })
      .waitFor(WAIT);
    expect(new URL(agent.url()).pathname).toBe(`/deployments/${deploymentId}/console/`);
    await shot(agent, "agent-console");
    await agent.close();
    expect(problems).toEqual([]);
  });

  it("Redeploy makes a new revision, followed to DEPLOYED, which then serves", async () => {
    const view = page.getByRole("region", { name: "deployment" });
    const first = (await api.get(`/v2/deployments/${deploymentId}`)).body.latest_revision_id;
    await view.getByRole("button", { name: "Redeploy" }).click();
    const rows = page.getByRole("table", { name: "revisions" }).getByRole("row");
    // The header and two revisions, the new one first.
    await expect.poll(() => rows.count(), WAIT).toBe(3);
    await rows.nth(1).getByText("DEPLOYED", { exact: true }).waitFor(WAIT);
    await rows.nth(1).getByText("(serving)").waitFor(WAIT);
    const d = (await api.get(`/v2/deployments/${deploymentId}`)).body;
    expect(d.latest_revision_id).not.toBe(first);
    expect(d.active_revision_id).toBe(d.latest_revision_id);
    expect(calls).toContain(`PATCH /v2/deployments/${deploymentId}`);
    // The logs shown are the new revision's.
    await page
      .getByRole("heading", { name: `Build log of revision ${d.latest_revision_id.slice(0, 8)}` })
      .waitFor(WAIT);
    await expect.poll(() => page.getByRole("button", { name: "Load new lines" }).count(), WAIT).toBe(2);
    await shot(page, "redeployed");
    expect(problems).toEqual([]);
  });

  it("lists the deployment with its type, latest revision's status and URL", async () => {
    await page.getByRole("link", { name: "← Deployments" }).click();
    const row = page.getByTestId("deployment-row");
    await expect.poll(() => row.count(), WAIT).toBe(1);
    await row.getByText("DEPLOYED", { exact: true }).waitFor(WAIT);
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells).toEqual([NAME, "dev", "DEPLOYED", `${cp.url}/deployments/${deploymentId}`]);
    await shot(page, "deployments");
    expect(problems).toEqual([]);
  });

  it("shows the listeners", async () => {
    const made = await api.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: "console-cluster",
      compute_config: { k8s_namespaces: ["agents"] },
    });
    expect(made.status).toBe(201);
    await page.getByRole("navigation", { name: "pages" }).getByRole("link", { name: "Listeners" }).click();
    const row = page.getByTestId("listener-row");
    await row.first().waitFor(WAIT);
    expect(await row.count()).toBe(1);
    const cells = await row.getByRole("cell").allTextContents();
    expect(cells.slice(0, 5)).toEqual([made.body.id, "k8s", "console-cluster", "agents", ""]);
    await shot(page, "listeners");
    expect(problems).toEqual([]);
  });

  it("serves the console without a key, and nothing else new: unknown paths are still 404", async () => {
    const root = await fetch(`${cp.url}/`);
    expect(root.status).toBe(200);
    expect(root.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await root.text();
    const asset = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(asset).toBeDefined();
    const js = await fetch(`${cp.url}/${asset}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    for (const path of ["/assets/nothing.js", "/nothing", "/index.html", "/control-plane.html"]) {
      const res = await fetch(`${cp.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(await res.json()).toEqual({ detail: "Not Found" });
    }
    // The API still wants the key.
    expect((await fetch(`${cp.url}/v2/deployments`)).status).toBe(401);
  });

  it("deletes the deployment after a confirmation", async () => {
    await page.goto(`${cp.url}/#/deployments/${deploymentId}`);
    const view = page.getByRole("region", { name: "deployment" });
    await view.getByRole("heading", { name: new RegExp(NAME) }).waitFor(WAIT);
    await view.getByRole("button", { name: "Delete", exact: true }).click();
    const confirm = page.getByRole("form", { name: "confirm delete" });
    await confirm.waitFor(WAIT);
    await shot(page, "confirm-delete");
    await confirm.getByRole("button", { name: "Delete it" }).click();
    await page.getByText("No deployments yet").waitFor(WAIT);
    expect(new URL(page.url()).hash).toBe("#/deployments");
    expect((await api.get(`/v2/deployments/${deploymentId}`)).status).toBe(404);
    await shot(page, "deleted");
    expect(calls).toContain(`DELETE /v2/deployments/${deploymentId}`);
    expect(problems).toEqual([]);
    await page.close();
  });
});
