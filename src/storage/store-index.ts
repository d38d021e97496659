// Semantic index of the store (store.index in langgraph.json): the project's embedding function, which
// fields of a value to embed, and cosine similarity for search.
import { existsSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { getTextAtPath } from "@langchain/langgraph-checkpoint";
import { ConfigError, parseGraphSpec } from "../lib/settings/project.js";
import type { StoreConfig } from "../lib/settings/sections.js";

export interface StoreIndex {
  embed: (texts: string[]) => Promise<number[][]>;
  dims: number;
  fields: string[];
}

/** The texts of a value to embed: "$" is the whole value, other fields are paths into it. */
export function textsOf(value: Record<string, unknown>, fields: string[]): string[] {
  return fields.flatMap((f) => (f === "$" ? [JSON.stringify(value)] : getTextAtPath(value, f)));
}

export function cosine(a: number[], b: number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}

/**
 * Loads store.index (its shape checked with langgraph.json): `embed` is `./file.ts:export`, a function
 * (texts) => vectors, or a LangChain Embeddings object (embedDocuments).
 */
export async function loadStoreIndex(
  projectDir: string,
  store: StoreConfig | null | undefined,
): Promise<StoreIndex | undefined> {
  const index = store?.index;
  if (!index) return undefined;
  const entry = parseGraphSpec(projectDir, "store.index.embed", index.embed);
  if (!existsSync(entry.file)) throw new ConfigError(`store.index.embed: file ${entry.file} not found`);
  const mod = (await import(pathToFileURL(entry.file).href)) as Record<string, unknown>;
  const fn = mod[entry.exportName ?? "default"] as
    | ((texts: string[]) => Promise<number[][]> | number[][])
    | { embedDocuments: (texts: string[]) => Promise<number[][]> }
    | undefined;
  let embed: StoreIndex["embed"];
  if (typeof fn === "function") embed = async (t) => fn(t);
  else if (fn && typeof fn.embedDocuments === "function") embed = (t) => fn.embedDocuments(t);
  else throw new ConfigError(`store.index.embed "${index.embed}": not a function or an Embeddings object`);
  const fields = index.fields ?? ["$"];
  return { embed, dims: index.dims, fields };
}
