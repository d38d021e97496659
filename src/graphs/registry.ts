// Loads the project's graphs (TypeScript or JavaScript) and hands out compiled graphs bound to our checkpointer.
import { pathToFileURL } from "node:url";
import { existsSync } from "node:fs";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { Pregel } from "@langchain/langgraph";
import type { GraphEntry } from "../config/config.js";

// Compiled graphs of any state shape; we only use the Pregel surface.
export type AnyGraph = Pregel<any, any, any, any, any>;
type Factory = (config: Record<string, unknown>) => unknown;

export class GraphLoadError extends Error {}

interface LoadedGraph {
  entry: GraphEntry;
  /** A compiled graph, when the export is one (or a StateGraph compiled once). */
  compiled?: AnyGraph;
  factory?: Factory;
}

function isCompiled(v: unknown): v is AnyGraph {
  return (
    typeof v === "object" &&
    v !== null &&
    typeof (v as AnyGraph).invoke === "function" &&
    typeof (v as AnyGraph).getState === "function" &&
    "nodes" in v
  );
}

function isUncompiled(v: unknown): v is { compile: () => AnyGraph } {
  return typeof v === "object" && v !== null && typeof (v as { compile?: unknown }).compile === "function";
}

async function resolveExport(value: unknown, where: string): Promise<AnyGraph> {
  if (isCompiled(value)) return value;
  if (isUncompiled(value)) return value.compile();
  throw new GraphLoadError(
    `${where}: the export is not a compiled graph, a StateGraph, or a factory returning one`,
  );
}

/** Shallow copy of a compiled graph bound to a checkpointer and store, leaving the shared instance untouched. */
function bind(
  graph: AnyGraph,
  checkpointer: BaseCheckpointSaver | undefined,
  store: BaseStore | undefined,
): AnyGraph {
  const copy = Object.assign(Object.create(Object.getPrototypeOf(graph)), graph) as AnyGraph;
  copy.checkpointer = checkpointer;
  copy.store = store;
  return copy;
}

export class GraphRegistry {
  private graphs = new Map<string, LoadedGraph>();

  constructor(
    private checkpointer: BaseCheckpointSaver,
    private store?: BaseStore,
  ) {}

  /** Imports every graph; throws GraphLoadError naming the graph and its file on the first failure. */
  async loadAll(entries: GraphEntry[]): Promise<void> {
    for (const entry of entries) {
      const where = `graph "${entry.graphId}" (${entry.file}${entry.exportName ? `:${entry.exportName}` : ""})`;
      if (!existsSync(entry.file)) throw new GraphLoadError(`${where}: file not found`);
      let mod: Record<string, unknown>;
      try {
        mod = (await import(pathToFileURL(entry.file).href)) as Record<string, unknown>;
      } catch (e) {
        const err = e as Error;
        throw new GraphLoadError(`${where}: failed to import: ${err?.stack ?? String(e)}`);
      }
      const name = entry.exportName ?? "default";
      const value = mod[name];
      if (value === undefined) {
        const available = Object.keys(mod).join(", ") || "none";
        throw new GraphLoadError(`${where}: no export named "${name}" (exports: ${available})`);
      }
      const loaded: LoadedGraph = { entry };
      if (typeof value === "function" && !isCompiled(value)) {
        loaded.factory = value as Factory;
        try {
          // Validate the factory once so a broken graph fails at start-up, not at the first run.
          await resolveExport(await loaded.factory({ configurable: {} }), where);
        } catch (e) {
          if (e instanceof GraphLoadError) throw e;
          throw new GraphLoadError(`${where}: factory failed: ${(e as Error)?.stack ?? String(e)}`);
        }
      } else {
        loaded.compiled = await resolveExport(value, where);
      }
      this.graphs.set(entry.graphId, loaded);
    }
  }

  ids(): string[] {
    return [...this.graphs.keys()];
  }

  has(graphId: string): boolean {
    return this.graphs.has(graphId);
  }

  description(graphId: string): string | undefined {
    return this.graphs.get(graphId)?.entry.description;
  }

  private async base(graphId: string, config: Record<string, unknown>): Promise<AnyGraph> {
    const g = this.graphs.get(graphId);
    if (!g) throw new GraphLoadError(`graph "${graphId}" not found`);
    if (g.compiled) return g.compiled;
    return resolveExport(await g.factory!(config), `graph "${graphId}"`);
  }

  /** The graph bound to the durable checkpointer (threads). */
  async get(graphId: string, config: Record<string, unknown> = {}): Promise<AnyGraph> {
    return bind(await this.base(graphId, config), this.checkpointer, this.store);
  }

  /** The graph bound to a caller-provided checkpointer (stateless runs use an in-memory one). */
  async getWith(
    graphId: string,
    config: Record<string, unknown>,
    checkpointer: BaseCheckpointSaver | undefined,
  ): Promise<AnyGraph> {
    return bind(await this.base(graphId, config), checkpointer, this.store);
  }
}
