// The `http` section of langgraph.json: switching off groups of routes, and loading the project's own app
// (a Hono app, or any object with a web-standard `fetch(Request): Response`; mounted by user-app.ts).
import { existsSync } from "node:fs";
import { ConfigError, parseGraphSpec } from "../lib/settings/project.js";
import { importProjectModule } from "../lib/project-import.js";

/** The `http` section, as langgraph.json's schema types it (src/lib/settings/sections.ts). */
export type { HttpConfig } from "../lib/settings/sections.js";

export interface UserApp {
  /** Called as @hono/node-server calls an app: the request, and an environment (`incoming`, `outgoing`). */
  fetch: (req: Request, env?: unknown) => Response | Promise<Response>;
}

/** Loads `http.app` (`./file.ts:export`), which must have a `fetch(Request)` method. */
export async function loadUserApp(
  projectDir: string,
  spec: string | undefined,
): Promise<UserApp | undefined> {
  if (!spec) return undefined;
  const entry = parseGraphSpec(projectDir, "http.app", spec);
  if (!existsSync(entry.file)) throw new ConfigError(`http.app "${spec}": file ${entry.file} not found`);
  let mod: Record<string, unknown>;
  try {
    mod = await importProjectModule(entry.file);
  } catch (e) {
    throw new ConfigError(`http.app "${spec}": failed to import: ${(e as Error).message}`);
  }
  const app = mod[entry.exportName ?? "default"] as UserApp | undefined;
  if (!app || typeof app.fetch !== "function") {
    throw new ConfigError(`http.app "${spec}": the export has no fetch(request) method (a Hono app has one)`);
  }
  return app;
}
