// Registers tsx's loader, so a project's TypeScript (graphs, auth, http app) can be imported; once per
// process, and not at all when bin/hangar.js already runs the CLI from its TypeScript sources through tsx.
//
// Commands register it after loading their own modules: Hangar's compiled modules and its packages then load
// natively, not through the loader's hooks (which cost an Agent Server ~2.5 s of CPU at each start). A project's
// modules are imported through typescript-import.ts, loaded after the registration, so through tsx.
import { useProjectImporter } from "../lib/project-import.js";

/** Set by bin/hangar.js when it registered tsx itself. */
const REGISTERED = Symbol.for("hangar.tsx-registered");

export async function registerTypeScript(): Promise<void> {
  const g = globalThis as { [REGISTERED]?: boolean };
  if (!g[REGISTERED]) {
    g[REGISTERED] = true;
    const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
    esm.register();
    cjs.register();
  }
  useProjectImporter((await import("./typescript-import.js")).importThroughTsx);
}
