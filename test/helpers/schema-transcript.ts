// What a server answers about a project's graph schemas, as one JSON document: for every graph its /schemas,
// its /subgraphs (plain and recursive) and /subgraphs/{namespace} for each namespace the recursive answer names.
// The same walk is done on the official dev server (test/fixtures/schemas-expected/regenerate.ts) and on Hangar;
// and a copy of a fixture project that type-checks as it does in the repository.
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * Copies the repository's project at `rel` (e.g. "examples") into a new temporary directory laid out as the
 * repository: the project at the same relative path, the repository's tsconfig.json and package.json at its root
 * and a node_modules symlink to the repository's, so that the TypeScript extraction sees the same compiler
 * options and packages. Returns the copy's root (`base`, to remove) and the project's directory in it.
 */
export function copyProject(rel: string, prefix = "hangar-schemas-"): { base: string; project: string } {
  const base = mkdtempSync(join(tmpdir(), prefix));
  const project = join(base, rel);
  mkdirSync(dirname(project), { recursive: true });
  cpSync(join(ROOT, rel), project, {
    recursive: true,
    filter: (src) => !/[\\/](\.langgraph_api|\.hangar|node_modules)$/.test(src),
  });
  for (const f of ["tsconfig.json", "package.json"]) copyFileSync(join(ROOT, f), join(base, f));
  symlinkSync(join(ROOT, "node_modules"), join(base, "node_modules"), "dir");
  return { base, project };
}

/** One answer: the body of a 200, or the status of anything else (its body varies between servers). */
export type Answer = { body: unknown } | { status: number };

export interface GraphTranscript {
  schemas: Answer;
  subgraphs: Answer;
  subgraphs_recurse: Answer;
  /** `/subgraphs/{ns}` and `/subgraphs/{ns}?recurse=true` by namespace. */
  namespaces: Record<string, { plain: Answer; recurse: Answer }>;
}

export type SchemaTranscript = Record<string, GraphTranscript>;

async function get(url: string, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(url, { headers });
  if (res.status !== 200) {
    await res.body?.cancel();
    return { status: res.status };
  }
  return { body: (await res.json()) as unknown };
}

/**
 * Walks the schema endpoints of `graphIds` (by graph id: both servers take it as the id of the graph's system
 * assistant) one request at a time; `namespaces` gives the namespaces to ask for instead of reading them from
 * the recursive answer (so that both servers are asked the same paths).
 */
export async function schemaTranscript(
  baseUrl: string,
  graphIds: string[],
  opts: { headers?: Record<string, string>; namespaces?: (graphId: string) => string[] | undefined } = {},
): Promise<SchemaTranscript> {
  const headers = opts.headers ?? {};
  const out: SchemaTranscript = {};
  for (const id of graphIds) {
    const base = `${baseUrl}/assistants/${encodeURIComponent(id)}`;
    const schemas = await get(`${base}/schemas`, headers);
    const subgraphs = await get(`${base}/subgraphs`, headers);
    const subgraphsRecurse = await get(`${base}/subgraphs?recurse=true`, headers);
    const named =
      opts.namespaces?.(id) ??
      ("body" in subgraphsRecurse ? Object.keys(subgraphsRecurse.body as object).sort() : []);
    const namespaces: GraphTranscript["namespaces"] = {};
    for (const ns of named) {
      const path = `${base}/subgraphs/${encodeURIComponent(ns)}`;
      namespaces[ns] = {
        plain: await get(path, headers),
        recurse: await get(`${path}?recurse=true`, headers),
      };
    }
    out[id] = { schemas, subgraphs, subgraphs_recurse: subgraphsRecurse, namespaces };
  }
  return out;
}
