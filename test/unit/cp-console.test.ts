// The control plane's console routes (src/control-plane/http/console.ts) on their own: served from a built
// folder (the page at `/`, its bundles under `/assets/`), and without a build a 404 that says to build.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import { cpConsoleRoutes } from "../../src/control-plane/http/console.ts";
import { cpNotFoundRoute, installCpErrorHandler } from "../../src/control-plane/http/errors.ts";
import { createLogger } from "../../src/lib/logger.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function appOn(dir: string) {
  const app = fastify();
  installCpErrorHandler(app, createLogger({ level: "silent" }));
  await app.register(cpConsoleRoutes(dir));
  app.setNotFoundHandler(cpNotFoundRoute);
  return app;
}

describe("control plane console routes", () => {
  it("serves the page at / and its assets, nothing else of the folder", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hangar-cp-console-unit-"));
    dirs.push(dir);
    mkdirSync(join(dir, "assets"));
    writeFileSync(join(dir, "control-plane.html"), "<!doctype html><title>cp</title>");
    writeFileSync(join(dir, "index.html"), "<!doctype html><title>agent server</title>");
    writeFileSync(join(dir, "assets", "a.js"), "export {};");
    const app = await appOn(dir);
    const page = await app.inject({ method: "GET", url: "/" });
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.body).toContain("<title>cp</title>");
    const js = await app.inject({ method: "GET", url: "/assets/a.js" });
    expect(js.statusCode).toBe(200);
    expect(js.body).toBe("export {};");
    for (const url of ["/index.html", "/control-plane.html", "/assets/b.js", "/assets/../index.html"]) {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(404);
    }
    await app.close();
  });

  it("without a build: 404 saying to run `npm run build`", async () => {
    const app = await appOn(join(tmpdir(), "hangar-no-such-console-dir"));
    for (const url of ["/", "/assets/a.js"]) {
      const res = await app.inject({ method: "GET", url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().detail).toMatch(/not built.*run `npm run build`/);
    }
    const other = await app.inject({ method: "GET", url: "/nothing" });
    expect(other.json()).toEqual({ detail: "Not Found" });
    await app.close();
  });
});
