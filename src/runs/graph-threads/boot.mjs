// Entry of a graph thread (plain JS): loads the host (host.ts, or host.js once built) and runs it. tsx's loader, which
// the project's TypeScript modules need (graphs, store embeddings, custom encryption), is registered only once Hangar's
// own modules and its packages are loaded, before the first module of the project: what loads through the loader's
// hooks costs several times the CPU of a native load (as src/cli/typescript.ts does on the API thread). Run from its
// sources, Hangar itself needs the loader first.
import { URL } from "node:url";
import { workerData } from "node:worker_threads";

const fromSources = workerData.ext === ".ts";
let registered = false;
async function registerTsx() {
  if (registered) return;
  registered = true;
  const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
  esm.register();
  cjs.register();
}
const here = (rel) => new URL(`${rel}${workerData.ext}`, import.meta.url).href;

if (fromSources) await registerTsx();
const [{ main }, { useProjectImporter }] = await Promise.all([
  import(here("./host")),
  import(here("../../lib/project-import")),
]);
await main(async () => {
  await registerTsx();
  // Loaded after the registration, so through tsx (see src/cli/typescript-import.ts).
  const { importThroughTsx } = await import(here("../../cli/typescript-import"));
  useProjectImporter(importThroughTsx);
});
