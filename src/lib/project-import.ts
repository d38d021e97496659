// How a project's own modules (graphs, auth handler, http app, store embeddings) are imported: one place, so the
// CLI can route these imports through tsx's loader (src/cli/typescript.ts) without loading Hangar through it.
import { pathToFileURL } from "node:url";

type Importer = (url: string) => Promise<unknown>;

let importer: Importer = (url) => import(url);

/** Imports the project module at `file` (an absolute path) with the importer in use. */
export async function importProjectModule(file: string): Promise<Record<string, unknown>> {
  return (await importer(pathToFileURL(file).href)) as Record<string, unknown>;
}

/** Installs the importer (the CLI's, once tsx's loader is registered). */
export function useProjectImporter(fn: Importer): void {
  importer = fn;
}
