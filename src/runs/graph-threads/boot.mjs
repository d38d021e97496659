// Entry of a graph thread (plain JS): registers tsx's loader, so the project's TypeScript graphs (and, when Hangar
// runs from its sources, Hangar's own modules) can be imported, then runs the host (host.ts, or host.js once built).
import { URL } from "node:url";
import { workerData } from "node:worker_threads";

const [esm, cjs] = await Promise.all([import("tsx/esm/api"), import("tsx/cjs/api")]);
esm.register();
cjs.register();
const { useProjectImporter } = await import(
  new URL(`../../lib/project-import${workerData.ext}`, import.meta.url).href
);
const { importThroughTsx } = await import(
  new URL(`../../cli/typescript-import${workerData.ext}`, import.meta.url).href
);
useProjectImporter(importThroughTsx);
await import(new URL(`./host${workerData.ext}`, import.meta.url).href);
