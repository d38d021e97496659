// Registers tsx's loader, so a project's TypeScript (graphs, auth, http app) can be imported; once per
// process, and not at all when bin/hangar.js already runs the CLI from its TypeScript sources through tsx.

/** Set by bin/hangar.js when it registered tsx itself. */
const REGISTERED = Symbol.for("hangar.tsx-registered");

export async function registerTypeScript(): Promise<void> {
  const g = globalThis as { [REGISTERED]?: boolean };
  if (g[REGISTERED]) return;
  g[REGISTERED] = true;
  const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
  esm.register();
  cjs.register();
}
