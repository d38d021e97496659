// Semantic index of the store (store.index in langgraph.json): the project's embedding function, which
// fields of a value to embed, and cosine similarity for search.
import { existsSync } from "node:fs";
import { ConfigError, parseGraphSpec } from "../lib/settings/project.js";
import type { StoreConfig } from "../lib/settings/sections.js";
import { importProjectModule } from "../lib/project-import.js";

export interface StoreIndex {
  embed: (texts: string[]) => Promise<number[][]>;
  dims: number;
  fields: string[];
}

/**
 * The texts of a value to embed: "$" is the whole value (compact JSON), other fields are paths into it, read as
 * LangGraph's in-memory store reads them (`a.b`, `a[0]`, `a[-1]`, `a[*].b`, `*`, `{a,b.c}`): a string, number or
 * boolean found is its text, an object or array its pretty JSON; nothing is found past a missing or null part.
 */
export function textsOf(value: Record<string, unknown>, fields: string[]): string[] {
  return fields.flatMap((f) => (f === "$" ? [JSON.stringify(value)] : textsAt(value, pathTokens(f), 0)));
}

/** `a.b[*]{c,d}` → `a`, `b`, `[*]`, `{c,d}`. */
const pathTokens = (path: string): string[] => path.match(/\[[^\]]*\]|\{[^}]*\}|[^.[{]+/g) ?? [];

function leafText(v: unknown): string[] {
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return [String(v)];
  return typeof v === "object" && v !== null ? [JSON.stringify(v, null, 2)] : [];
}

function textsAt(v: unknown, tokens: string[], i: number): string[] {
  if (i === tokens.length) return leafText(v);
  if (typeof v !== "object" || v === null) return [];
  const t = tokens[i];
  if (t.startsWith("[")) {
    if (!Array.isArray(v)) return [];
    const index = t.slice(1, -1);
    if (index === "*") return v.flatMap((item) => textsAt(item, tokens, i + 1));
    const at = parseInt(index, 10);
    const n = at < 0 ? v.length + at : at;
    return n >= 0 && n < v.length ? textsAt(v[n], tokens, i + 1) : [];
  }
  // Several fields (each a path) of this object; what follows the braces is not read.
  if (t.startsWith("{"))
    return t
      .slice(1, -1)
      .split(",")
      .flatMap((f) => textsAt(v, pathTokens(f.trim()), 0));
  if (t === "*") return Object.values(v).flatMap((item) => textsAt(item, tokens, i + 1));
  return Object.hasOwn(v, t) ? textsAt((v as Record<string, unknown>)[t], tokens, i + 1) : [];
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
  const mod = await importProjectModule(entry.file);
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
