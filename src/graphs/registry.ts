// Loads the project's graphs (TypeScript or JavaScript, ESM or CommonJS; exports as the official CLI takes
// them) and hands out compiled graphs bound to our checkpointer.
import { existsSync } from "node:fs";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph-checkpoint";
import type { Pregel } from "@langchain/langgraph";
import type { GraphEntry } from "../lib/settings/project.js";
import {
  adaptInput,
  HANGAR_LANGGRAPH_VERSION,
  isForeign,
  langGraphCopyOf,
  outdatedWarning,
  unsupportedVersion,
  type LangGraphCopy,
} from "./langgraph-copy.js";
import { rootLogger, type Logger } from "../lib/logger.js";
import { registerSdkLogger } from "./sdk-logger.js";
import { ConfigError } from "../lib/errors.js";
import { importProjectModule } from "../lib/project-import.js";

// Compiled graphs of any state shape; we only use the Pregel surface.
export type AnyGraph = Pregel<any, any, any, any, any>;
type Factory = (config: Record<string, unknown>) => unknown;

/** A graph of the project cannot be loaded (its file, its export, its factory). */
export class GraphLoadError extends ConfigError {}

interface LoadedGraph {
  entry: GraphEntry;
  /** A compiled graph, when the export is one (or a StateGraph compiled once). */
  compiled?: AnyGraph;
  factory?: Factory;
  /** The project's @langchain/langgraph the graph was built with, when found. */
  copy?: LangGraphCopy;
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

const isThenable = (v: unknown): v is PromiseLike<unknown> =>
  (typeof v === "object" || typeof v === "function") &&
  v !== null &&
  typeof (v as { then?: unknown }).then === "function";

/** What a value is, for a refusal: its type, its class and a few of its keys. */
function describe(v: unknown): string {
  if (v === null) return "null";
  if (typeof v !== "object" && typeof v !== "function")
    return `a ${typeof v} (${JSON.stringify(v)?.slice(0, 40)})`;
  const cls = (Object.getPrototypeOf(v) as { constructor?: { name?: string } } | null)?.constructor?.name;
  const keys = Object.keys(v).slice(0, 8);
  return `${typeof v === "function" ? "a function" : `an object${cls && cls !== "Object" ? ` of class ${cls}` : ""}`}${
    keys.length ? ` with keys ${keys.join(", ")}` : ""
  }`;
}

/**
 * The compiled graph an object stands for: itself when it is one, its compilation when it is a StateGraph, or
 * the compiled graph it exposes as `.graph` (LangChain's `createAgent` and `createDeepAgent` return a ReactAgent
 * that wraps its compiled graph so; a compiled graph that also exposes the real one there is unwrapped too, as the
 * official server does, so streams see the inner graph's transformers).
 */
function asCompiled(v: unknown): AnyGraph | undefined {
  if (typeof v !== "object" || v === null) return undefined;
  let inner: unknown;
  try {
    inner = (v as { graph?: unknown }).graph;
  } catch {
    inner = undefined;
  }
  if (isCompiled(inner) && "builder" in inner) return inner;
  if (isCompiled(v)) return v;
  if (isUncompiled(v)) return v.compile();
  return isCompiled(inner) ? inner : undefined;
}

/**
 * A compiled graph from an export's value (or a factory's result): awaited when a Promise, compiled when a
 * StateGraph, and unwrapped when it wraps the compiled graph in `.graph`.
 */
async function resolveExport(value: unknown, where: string): Promise<AnyGraph> {
  const v = isThenable(value) ? await value : value;
  const graph = asCompiled(v);
  if (!graph) {
    throw new GraphLoadError(
      `${where}: the export is ${describe(v)}, not a graph. Accepted: a compiled graph (StateGraph.compile(), ` +
        "createReactAgent), a StateGraph, an agent exposing its compiled graph as .graph (createAgent, " +
        "createDeepAgent), a Promise of one of these, or a function returning one",
    );
  }
  return graph;
}

/**
 * Shallow copy of a compiled graph bound to a checkpointer and store, leaving the shared instance untouched.
 * A graph of another copy of @langchain/langgraph than Hangar's gets Hangar's Commands rebuilt with its own
 * classes when it runs.
 */
function bind(
  graph: AnyGraph,
  checkpointer: BaseCheckpointSaver | undefined,
  store: BaseStore | undefined,
  lib: LangGraphCopy | undefined,
): AnyGraph {
  const proto = Object.getPrototypeOf(graph) as AnyGraph;
  const copy = Object.assign(Object.create(proto), graph) as AnyGraph;
  copy.checkpointer = checkpointer;
  copy.store = store;
  if (lib && isForeign(lib)) {
    const run = copy as unknown as Record<string, (input: unknown, ...rest: unknown[]) => unknown>;
    for (const method of ["invoke", "stream", "streamEvents"] as const) {
      const original = (proto as unknown as Record<string, (...a: unknown[]) => unknown>)[method];
      run[method] = (input, ...rest) => original.call(copy, adaptInput(input, lib), ...rest);
    }
  }
  return copy;
}

export class GraphRegistry {
  private graphs = new Map<string, LoadedGraph>();
  /** Start-up warnings (outdated LangGraph.js packages of the project), each once. */
  readonly warnings: string[] = [];

  constructor(
    private checkpointer: BaseCheckpointSaver,
    private store?: BaseStore,
    readonly log: Logger = rootLogger(),
  ) {}

  /**
   * Imports every graph; throws GraphLoadError naming the graph and its file on the first failure. The
   * SDK's logger is registered first, as graph modules may call `getLogger()` when imported.
   */
  async loadAll(entries: GraphEntry[]): Promise<void> {
    registerSdkLogger(this.log);
    for (const entry of entries) {
      const where = `graph "${entry.graphId}" (${entry.file}${entry.exportName ? `:${entry.exportName}` : ""})`;
      if (!existsSync(entry.file)) throw new GraphLoadError(`${where}: file not found`);
      const unsupported = unsupportedVersion(entry.file);
      if (unsupported) throw new GraphLoadError(`${where}: ${unsupported}`);
      let mod: Record<string, unknown>;
      try {
        mod = await importProjectModule(entry.file);
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
      let sample: AnyGraph;
      if (typeof value === "function" && !isCompiled(value)) {
        loaded.factory = value as Factory;
        try {
          // Validate the factory once so a broken graph fails at start-up, not at the first run.
          sample = await resolveExport(await loaded.factory({ configurable: {} }), where);
        } catch (e) {
          if (e instanceof GraphLoadError) throw e;
          throw new GraphLoadError(`${where}: factory failed: ${(e as Error)?.stack ?? String(e)}`);
        }
      } else {
        try {
          sample = loaded.compiled = await resolveExport(value, where);
        } catch (e) {
          if (e instanceof GraphLoadError) throw e;
          throw new GraphLoadError(
            `${where}: the exported Promise failed: ${(e as Error)?.stack ?? String(e)}`,
          );
        }
      }
      loaded.copy = await langGraphCopyOf(sample, entry.file);
      const warning = outdatedWarning(entry.file);
      if (warning && !this.warnings.includes(warning)) this.warnings.push(warning);
      this.graphs.set(entry.graphId, loaded);
    }
  }

  /** The version of the project's @langchain/langgraph (its first graph's), or Hangar's own when it has none. */
  langgraphVersion(): string {
    for (const g of this.graphs.values()) if (g.copy) return g.copy.version;
    return HANGAR_LANGGRAPH_VERSION;
  }

  ids(): string[] {
    return [...this.graphs.keys()];
  }

  has(graphId: string): boolean {
    return this.graphs.has(graphId);
  }

  /** The module and export a graph is loaded from (for schema extraction from its types). */
  source(graphId: string): { file: string; exportName: string | undefined } | undefined {
    const entry = this.graphs.get(graphId)?.entry;
    return entry && { file: entry.file, exportName: entry.exportName };
  }

  description(graphId: string): string | undefined {
    return this.graphs.get(graphId)?.entry.description;
  }

  private loaded(graphId: string): LoadedGraph {
    const g = this.graphs.get(graphId);
    if (!g) throw new GraphLoadError(`graph "${graphId}" not found`);
    return g;
  }

  private async base(graphId: string, config: Record<string, unknown>): Promise<AnyGraph> {
    const g = this.loaded(graphId);
    if (g.compiled) return g.compiled;
    return resolveExport(await g.factory!(config), `graph "${graphId}"`);
  }

  /** The graph bound to the durable checkpointer (threads). */
  async get(graphId: string, config: Record<string, unknown> = {}): Promise<AnyGraph> {
    return bind(await this.base(graphId, config), this.checkpointer, this.store, this.loaded(graphId).copy);
  }

  /** The graph bound to a caller-provided checkpointer (stateless runs use an in-memory one). */
  async getWith(
    graphId: string,
    config: Record<string, unknown>,
    checkpointer: BaseCheckpointSaver | undefined,
  ): Promise<AnyGraph> {
    return bind(await this.base(graphId, config), checkpointer, this.store, this.loaded(graphId).copy);
  }
}
