// Browser test harness: builds the test page with Vite, serves it from its own origin (a small static server
// on a free loopback port), and drives Debian's Chromium (/usr/bin/chromium) through playwright-core.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { afterAll, beforeAll } from "vitest";

export const PAGE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), "page");
/** Where browser walks save each step's screenshot (git-ignored). */
export const SHOTS = resolve(dirname(fileURLToPath(import.meta.url)), "screenshots");
export const CHROMIUM = "/usr/bin/chromium";

/**
 * The bound of a test's polls on a page (expect.poll): only a guard against a page that never gets there, far
 * beyond what a loaded machine takes (a clean-clone CI run at load 18 took 154 s where a quiet one takes 44).
 */
export const WAIT = { timeout: 600_000 };

/**
 * Builds test/browser/page into a fresh temporary directory and returns it: its `pages` (HTML files of that
 * folder, each with the scripts it loads), index.html by default.
 */
export async function buildPage(pages: string[] = ["index.html"]): Promise<string> {
  const { build } = await import("vite");
  const outDir = mkdtempSync(join(tmpdir(), "hangar-page-"));
  await build({
    root: PAGE_DIR,
    configFile: false,
    envFile: false,
    publicDir: false,
    cacheDir: join(outDir, ".vite-cache"),
    mode: "production",
    logLevel: "warn",
    // JSX through Vite's own esbuild step: the React 17+ automatic runtime, no plugin needed.
    esbuild: { jsx: "automatic" },
    build: {
      outDir: join(outDir, "dist"),
      emptyOutDir: true,
      minify: false,
      rollupOptions: {
        input: pages.map((p) => join(PAGE_DIR, p)),
        // The SDK's "use client" directives and zod's comments are harmless in a bundle: no noise in the output.
        onwarn(warning, warn) {
          if (warning.code === "MODULE_LEVEL_DIRECTIVE" || warning.code === "INVALID_ANNOTATION") return;
          warn(warning);
        },
      },
    },
  });
  return outDir;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json",
};

/** Serves a built page on a free loopback port; every unknown path answers index.html (a single-page app). */
export async function servePage(dir: string): Promise<{ url: string; close: () => Promise<void> }> {
  const root = join(dir, "dist");
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://page").pathname));
    let file = join(root, path);
    if (!file.startsWith(root) || !existsSync(file) || statSync(file).isDirectory())
      file = join(root, "index.html");
    res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
    res.end(readFileSync(file));
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}

/** Debian's Chromium, headless, with a fresh profile; `close` also removes the profile. */
export async function launchChromium(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's Chromium (apt-get install -y chromium)`);
  }
  const profile = mkdtempSync(join(tmpdir(), "hangar-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    timeout: 120_000,
  });
  // Actions and waits bounded only against a hang (Playwright's default is 30 s): on a loaded machine a page's first
  // load of a graph's schemas can take minutes; a test only fails at the bound if the page never gets there.
  context.setDefaultTimeout(600_000);
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/**
 * For a test file: builds `pages`, serves them and starts Chromium before its tests, and stops and removes
 * them after. The returned object's `site` and `browser` are set once the file's `beforeAll` has run.
 */
export function usePage(pages?: string[]) {
  const env = {} as {
    site: Awaited<ReturnType<typeof servePage>>;
    browser: Awaited<ReturnType<typeof launchChromium>>;
  };
  let dir: string | undefined;
  beforeAll(async () => {
    dir = await buildPage(pages);
    env.site = await servePage(dir);
    env.browser = await launchChromium();
  });
  afterAll(async () => {
    await env.browser?.close();
    await env.site?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  return env;
}

/**
 * What goes wrong on a page, as it happens: console errors, page errors, requests that failed in the network
 * (reset, refused, cut short), and responses with an HTTP error status (but the `expected` ones). Failures are
 * taken from Chromium's own network events (CDP `Network.loadingFailed`), leaving out the ones the page itself
 * cancelled (`canceled`): an event stream the SDK has read to its end is sometimes reported cancelled when the
 * page lets go of the response before the loader's completion arrives (seen with no script cancelling
 * anything, and a clean end in Chromium's net log); Playwright's `requestfailed` reports every such stream as
 * `net::ERR_ABORTED`. A stream cut short still shows: the page reports the run failed. Returns `problems`, which
 * it adds to.
 */
export async function pageProblems(
  context: BrowserContext,
  page: Page,
  expected: number[] = [],
  problems: string[] = [],
): Promise<string[]> {
  page.on("console", (m) => {
    // The browser reports each refused request on the console too: counted through the responses below.
    if (m.type() === "error" && !/Failed to load resource/.test(m.text())) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("response", (r) => {
    if (r.status() >= 400 && !expected.includes(r.status())) problems.push(`HTTP ${r.status()} ${r.url()}`);
  });
  const cdp = await context.newCDPSession(page);
  const urls = new Map<string, string>();
  cdp.on("Network.requestWillBeSent", (e) => urls.set(e.requestId, e.request.url));
  cdp.on("Network.loadingFailed", (e) => {
    if (!e.canceled) problems.push(`failed: ${urls.get(e.requestId) ?? e.requestId} ${e.errorText}`);
  });
  await cdp.send("Network.enable");
  return problems;
}

/** A new page of `context`, with the problems it records as it goes (see `pageProblems`). */
export async function watchedPage(
  context: BrowserContext,
  expected: number[] = [],
): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  return { page, problems: await pageProblems(context, page, expected) };
}

/** Saves the page as test/browser/screenshots/<name>-<backend>.png (the backend of this test run). */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const backend = process.env.HANGAR_TEST_BACKEND ?? "embedded";
  await page.screenshot({ path: join(SHOTS, `${name}-${backend}.png`), fullPage });
}
