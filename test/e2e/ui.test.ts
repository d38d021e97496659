// End-to-end: generative UI (`ui` of langgraph.json): components bundled at start, `POST /ui/{agent}` answering
// the HTML the SDK's LoadExternalComponent inserts, assets served, the script evaluating to a `render` that hands
// the real component to the loader's store; typedUi messages streamed as `custom` events and kept in state.
import { createRequire } from "node:module";
import { join } from "node:path";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { httpError } from "../helpers/http.ts";
import { ROOT, runHangar, useHangar } from "../helpers/server.ts";

// React (a devDependency, without type declarations here) plays the page's React.
const require = createRequire(import.meta.url);
const React = require("react");
const JsxRuntime = require("react/jsx-runtime");
const { renderToStaticMarkup } = require("react-dom/server");

const hangar = useHangar({ config: join(ROOT, "test/fixtures/ui-project/langgraph.json") });

/** The SDK's UI client, as LoadExternalComponent uses it (`stream.client["~ui"]`). */
const uiClient = () =>
  (hangar.client as any)["~ui"] as { getComponent(ns: string, name: string): Promise<string> };

/** Loads the served script as a page would after `bootstrapUiContext()`, renders `name`, returns the component. */
async function loadComponent(js: string, globalName: string, name: string) {
  const responded: { id: string; comp: unknown; target: unknown }[] = [];
  const shared: Record<string, unknown> = { react: React, "react/jsx-runtime": JsxRuntime };
  const appended: unknown[] = [];
  const page = {
    document: {
      getElementById: (id: string) =>
        id === "shadow-1" ? { shadowRoot: { appendChild: (el: unknown) => appended.push(el) } } : null,
      createElement: (tag: string) => ({ tag }),
    },
    [Symbol.for("LGUI_REQUIRE")]: (mod: string) => {
      if (!(mod in shared)) throw new Error(`Unknown module...: ${mod}`);
      return shared[mod];
    },
    [Symbol.for("LGUI_EXT_STORE")]: {
      respond: (id: string, comp: unknown, target: unknown) => responded.push({ id, comp, target }),
    },
  };
  const lgui = runInNewContext(`${js}\n;${globalName}`, page) as { render(name: string, id: string): void };
  lgui.render(name, "shadow-1");
  expect(responded).toHaveLength(1);
  expect(responded[0].id).toBe("shadow-1");
  expect(responded[0].target).toBe(appended[0]);
  return responded[0].comp as (props: { city: string }) => unknown;
}

describe("generative UI", () => {
  it("answers the loader's HTML and serves the assets it names", async () => {
    const html = await uiClient().getComponent("agent", "weather");
    const base = `${hangar.server.url}/ui/agent`;
    expect(html).toBe(
      [
        `<link rel="stylesheet" href="${base}/entrypoint.css" />`,
        `<script src="${base}/entrypoint.js" onload='__LGUI_agent.render("weather", "{{shadowRootId}}")'></script>`,
      ].join("\n"),
    );
    const css = await fetch(`${base}/entrypoint.css`);
    expect(css.status).toBe(200);
    expect(css.headers.get("content-type")).toMatch(/^text\/css/);
    expect(await css.text()).toContain("rebeccapurple");
    const js = await fetch(`${base}/entrypoint.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
  });

  it("bundles a script that renders the real component with the page's React", async () => {
    const html = await uiClient().getComponent("agent", "weather");
    const src = /src="([^"]+)"/.exec(html)![1];
    const js = await (await fetch(src)).text();
    const Weather = await loadComponent(js, "__LGUI_agent", "weather");
    expect(typeof Weather).toBe("function");
    expect(renderToStaticMarkup(React.createElement(Weather, { city: "Paris" }))).toBe(
      '<div class="weather">Weather for Paris in °C</div>',
    );
  });

  it("finds the UI by the id of an assistant of the graph too", async () => {
    const assistant = await hangar.client.assistants.create({ graphId: "agent" });
    const html = await uiClient().getComponent(assistant.assistant_id, "weather");
    expect(html).toContain(`${hangar.server.url}/ui/agent/entrypoint.js`);
  });

  it("answers 404 for an agent without UI or a missing asset, 422 without a name", async () => {
    const url = hangar.server.url;
    const none = await fetch(`${url}/ui/other`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "x" }),
    });
    expect(none.status).toBe(404);
    expect(await none.json()).toEqual({ detail: 'UI not found for agent "other"' });
    expect((await fetch(`${url}/ui/agent/missing.js`)).status).toBe(404);
    const bad = await fetch(`${url}/ui/agent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    expect(bad.status).toBe(422);
    expect((await bad.json()).detail).toMatch(/name/);
    await expect(httpError(uiClient().getComponent("other", "x"))).resolves.toMatchObject({ status: 404 });
  });

  it("streams typedUi messages as custom events and keeps them in the state", async () => {
    const thread = await hangar.client.threads.create();
    const custom: any[] = [];
    for await (const ev of hangar.client.runs.stream(thread.thread_id, "agent", {
      input: { city: "Oslo" },
      streamMode: ["custom", "values"],
    })) {
      if (ev.event === "custom") custom.push(ev.data);
    }
    expect(custom).toEqual([
      {
        type: "ui",
        id: expect.any(String),
        name: "weather",
        props: { city: "Oslo" },
        metadata: expect.objectContaining({ run_id: expect.any(String) }),
      },
    ]);
    const state = await hangar.client.threads.getState<{ ui: any[] }>(thread.thread_id);
    expect(state.values.ui).toEqual(custom);
  });

  it("refuses a UI that cannot be bundled, naming the agent and the problem (hangar check too)", async () => {
    const config = join(ROOT, "test/fixtures/ui-project/langgraph.broken.json");
    const check = await runHangar(["check", "--config", config]);
    expect(check.code).toBe(1);
    expect(check.output).toContain(
      'ui.agent: cannot bundle ./src/broken-ui.tsx: Could not resolve "./no-such-component"',
    );
    const good = await runHangar([
      "check",
      "--config",
      join(ROOT, "test/fixtures/ui-project/langgraph.json"),
    ]);
    expect(good.code).toBe(0);
    expect(good.output).toContain("ui ok: agent");
  });
});
