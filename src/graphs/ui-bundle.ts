// Generative UI (`ui` of langgraph.json): bundles each agent's components file for the browser, in the shape
// the SDK's `LoadExternalComponent` loads (a script defining `__LGUI_<agent>.render(name, shadowRootId)`).
import { existsSync } from "node:fs";
import { basename, dirname, extname, relative, resolve } from "node:path";
import type { Plugin } from "esbuild";
import { ConfigError } from "../lib/settings/project.js";

export interface UiFile {
  basename: string;
  contents: Uint8Array;
}

/** Each agent's bundle: `entrypoint.js`, and `entrypoint.css` when the components import CSS. */
export type UiBundles = Map<string, UiFile[]>;

/**
 * Packages the page that shows the component already has: the SDK's `bootstrapUiContext()` hands them out
 * through `globalThis[Symbol.for("LGUI_REQUIRE")]` (React, the SDK's React hooks), plus `ui_config.shared`.
 */
const PROVIDED = ["react", "react-dom", "@langchain/langgraph-sdk"];

const ENTRY = "hangar-ui-entry";

/** The global the script defines; the loader's `onload` calls its `render`. */
export const uiGlobalName = (agent: string): string => `__LGUI_${agent.replace(/[^a-zA-Z0-9]/g, "_")}`;

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");

/** Resolves packages the host page provides to a module reading them from the page. */
function providedPlugin(shared: string[]): Plugin {
  const filter = new RegExp(`^(${[...PROVIDED, ...shared].map(escapeRe).join("|")})(/.*)?$`);
  return {
    name: "hangar-ui-provided",
    setup(build) {
      build.onResolve({ filter }, (args) => ({ path: args.path, namespace: "hangar-ui-provided" }));
      build.onLoad({ filter: /.*/, namespace: "hangar-ui-provided" }, (args) => ({
        contents: `module.exports = globalThis[Symbol.for("LGUI_REQUIRE")](${JSON.stringify(args.path)});`,
        loader: "js",
      }));
    },
  };
}

/** The entry: the user's components (default export, or the module's named exports) and `render`. */
function entryPlugin(file: string): Plugin {
  return {
    name: "hangar-ui-entry",
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${ENTRY}$`) }, () => ({ path: ENTRY, namespace: ENTRY }));
      build.onLoad({ filter: /.*/, namespace: ENTRY }, () => ({
        resolveDir: dirname(file),
        loader: "js",
        contents: [
          `import * as mod from ${JSON.stringify(`./${basename(file)}`)};`,
          `const components = mod.default ?? mod;`,
          `export function render(name, shadowRootId) {`,
          `  const root = document.getElementById(shadowRootId)?.shadowRoot;`,
          `  if (!root) throw new Error("LoadExternalComponent: no shadow root " + shadowRootId);`,
          `  const target = document.createElement("div");`,
          `  root.appendChild(target);`,
          `  globalThis[Symbol.for("LGUI_EXT_STORE")].respond(shadowRootId, components[name], target);`,
          `}`,
        ].join("\n"),
      }));
    },
  };
}

function parseUiSection(ui: unknown, uiConfig: unknown): { defs: [string, string][]; shared: string[] } {
  if (typeof ui !== "object" || ui === null || Array.isArray(ui)) {
    throw new ConfigError(`langgraph.json ui: must map agent names to component files ("./src/ui.tsx")`);
  }
  const defs = Object.entries(ui as Record<string, unknown>).map(([agent, path]): [string, string] => {
    if (typeof path !== "string" || !path)
      throw new ConfigError(`langgraph.json ui.${agent}: must be a file path`);
    return [agent, path];
  });
  let shared: string[] = [];
  if (uiConfig !== undefined) {
    const s = (uiConfig as { shared?: unknown } | null)?.shared;
    if (s !== undefined && (!Array.isArray(s) || s.some((x) => typeof x !== "string"))) {
      throw new ConfigError("langgraph.json ui_config.shared: must be a list of package names");
    }
    shared = (s as string[] | undefined) ?? [];
  }
  return { defs, shared };
}

/**
 * Bundles every agent of the `ui` section (none: undefined). A missing file or a build error is a ConfigError
 * naming the agent, so the server refuses to start as it does for a broken graph.
 */
export async function bundleUi(
  projectDir: string,
  ui: unknown,
  uiConfig?: unknown,
): Promise<UiBundles | undefined> {
  if (ui === undefined || ui === null) return undefined;
  const { defs, shared } = parseUiSection(ui, uiConfig);
  if (!defs.length) return undefined;
  // esbuild comes with tsx (a dependency); loaded only for projects with a `ui` section.
  const esbuild = await import("esbuild");
  const bundles: UiBundles = new Map();
  for (const [agent, spec] of defs) {
    const file = resolve(projectDir, spec);
    if (relative(projectDir, file).startsWith("..")) {
      throw new ConfigError(`langgraph.json ui.${agent}: "${spec}" is outside the project directory`);
    }
    if (!existsSync(file)) throw new ConfigError(`langgraph.json ui.${agent}: file ${file} not found`);
    let result;
    try {
      result = await esbuild.build({
        entryPoints: [{ in: ENTRY, out: "entrypoint" }],
        absWorkingDir: projectDir,
        outdir: resolve(projectDir, ".hangar-ui", agent),
        write: false,
        bundle: true,
        platform: "browser",
        format: "iife",
        target: "es2020",
        jsx: "automatic",
        globalName: uiGlobalName(agent),
        plugins: [entryPlugin(file), providedPlugin(shared)],
        logLevel: "silent",
      });
    } catch (e) {
      const errors = (e as { errors?: { text: string; location?: { file: string; line: number } | null }[] })
        .errors;
      const first = errors?.[0];
      const where = first?.location ? ` (${first.location.file}:${first.location.line})` : "";
      throw new ConfigError(
        `langgraph.json ui.${agent}: cannot bundle ${spec}: ${first ? first.text + where : (e as Error).message}`,
      );
    }
    bundles.set(
      agent,
      result.outputFiles
        .filter((f) => [".js", ".css"].includes(extname(f.path)))
        .map((f) => ({ basename: basename(f.path), contents: f.contents })),
    );
  }
  return bundles;
}
