// Graph introspection for the assistants API: drawable graph JSON, and the JSON schemas of graphs and subgraphs
// exactly as the official server computes them: runtime zod/StateSchema first, then the graph's TypeScript types
// through the official extraction (@langchain/langgraph-api's parser), run ahead in worker threads and cached.
import { availableParallelism } from "node:os";
import type { AnyGraph } from "./registry.js";
import { SchemaCache } from "./schema/cache.js";
import { runtimeSchemas } from "./schema/runtime.js";
import type { GraphSchema, JsonSchema } from "./schema/types.js";
import {
  extractInWorker,
  PARSER,
  type Extraction,
  type ParserOutput,
  type StaticSchemas,
  type StaticSpec,
} from "./schema/worker.js";
import { rootLogger, type Logger } from "../lib/logger.js";
import { VERSION } from "../lib/version.js";

/** Nodes and edges as the official API returns them. */
export async function drawableGraph(graph: AnyGraph, xray?: boolean | number): Promise<unknown> {
  const drawable = await graph.getGraphAsync((xray !== undefined ? { xray } : {}) as any);
  return drawable.toJSON();
}

/** Bound of one graph's extraction (a type check of its file and of what it imports). */
const TIMEOUT_MS = 300_000;
/** Extractions at once: each is one worker thread busy with the compiler. */
const WORKERS = Math.max(1, Math.min(4, availableParallelism()));

const isPublicChannel = (name: string) => !name.startsWith("__") && !name.includes(":");

function channelsSchema(title: string, channels: string | string[] | undefined): JsonSchema {
  const names = (Array.isArray(channels) ? channels : channels ? [channels] : []).filter(isPublicChannel);
  return { title, type: "object", properties: Object.fromEntries(names.map((n) => [n, {}])) };
}

/** What is known without types: the graph's channel names (when its types could not be extracted at all). */
function channelSchemas(graph: AnyGraph, name: string): GraphSchema {
  const g = graph as any;
  // A StateGraph's input and output channel names are its builder's input and output definitions' keys.
  const keys = (def: unknown) => (def && typeof def === "object" ? Object.keys(def) : undefined);
  return {
    state: channelsSchema(`${name}_state`, Object.keys(g.channels ?? {})),
    input: channelsSchema(`${name}_input`, keys(g.builder?._inputDefinition) ?? g.inputChannels),
    output: channelsSchema(`${name}_output`, keys(g.builder?._outputDefinition) ?? g.outputChannels),
    config: { title: `${name}_config`, type: "object", properties: {} },
  };
}

/** The API's field names; config doubles as context (in JS the two are one schema, as in the official server). */
function toResponse(s: GraphSchema): Record<string, unknown> {
  return {
    input_schema: s.input,
    output_schema: s.output,
    state_schema: s.state,
    config_schema: s.config,
    context_schema: s.config,
  };
}

/** The exported graph's name among the extracted ones (the others are `name|node|...`). */
const rootOf = (s: StaticSchemas) => Object.keys(s).find((k) => !k.includes("|"));

/** What GraphSchemas needs of the registry. */
export interface SchemaGraphs {
  ids(): string[];
  source(graphId: string): { file: string; exportName: string | undefined } | undefined;
  get(graphId: string): Promise<AnyGraph>;
}

interface Job {
  graphId: string;
  resolve: (s: StaticSchemas | undefined) => void;
  /** A request waits for it. */
  urgent?: boolean;
}

/**
 * Schemas of the project's graphs. A graph's types are extracted once (in a worker thread of its own, a few at a
 * time), on the first request that needs them or ahead of it (`warm`), and kept, also in a cache file across
 * restarts; a request for a graph in the queue moves it ahead of the background's. A failed extraction is logged
 * and answered with the channel names (where the official server answers 500).
 */
export class GraphSchemas {
  private statics = new Map<string, Promise<StaticSchemas | undefined>>();
  private queue: Job[] = [];
  private running = new Set<Extraction>();
  /** Extractions under way or waiting for another process's (at most WORKERS). */
  private slots = 0;
  private cache?: SchemaCache;
  /** Graphs a request waits for (their extraction, once queued, goes ahead of the background's). */
  private asked = new Set<string>();
  private warming = false;
  private closed = false;

  constructor(
    private graphs: SchemaGraphs,
    private log: Logger = rootLogger(),
  ) {}

  private spec(graphId: string): StaticSpec | undefined {
    const src = this.graphs.source(graphId);
    return src && { sourceFile: src.file, exportSymbol: src.exportName ?? "default" };
  }

  /**
   * Keeps extracted schemas in `dir` (see SchemaCache) and answers from it while the sources are unchanged. Call
   * before the first request.
   */
  useCache(dir: string): void {
    if (!this.cache) this.cache = new SchemaCache(dir, { ...PARSER.versions, hangar: VERSION });
  }

  /**
   * Starts extracting, in the background, the types of every graph whose schemas (or a subgraph's) its runtime
   * schemas do not give (from the cache first). Returns at once.
   */
  warm(): void {
    if (this.warming || this.closed) return;
    this.warming = true;
    void this.prefetch();
  }

  private async prefetch(): Promise<void> {
    const t0 = performance.now();
    const queued: string[] = [];
    for (const id of this.graphs.ids()) {
      if (this.closed) return;
      if (await this.coveredAtRuntime(id)) continue;
      queued.push(id);
      void this.staticFor(id, false);
    }
    const ms = Math.round(performance.now() - t0);
    this.log.debug(
      `schemas: types of ${queued.join(", ") || "no graph"} asked for in the background (${ms} ms)`,
    );
  }

  /** The graph's schemas from the cache, if it has them for its unchanged sources. */
  private async fromCache(graphId: string): Promise<StaticSchemas | undefined> {
    const spec = this.spec(graphId);
    if (!this.cache || !spec) return undefined;
    const t0 = performance.now();
    const hit = await this.cache.lookup(spec).catch(() => undefined);
    if (hit) {
      const ms = Math.round(performance.now() - t0);
      this.log.debug(
        `schemas of graph "${graphId}" from the cache in ${this.cache.dir} (checked in ${ms} ms)`,
      );
    }
    return hit;
  }

  /** Whether the runtime schemas of a graph and of all its subgraphs answer every schema request for it. */
  private async coveredAtRuntime(graphId: string): Promise<boolean> {
    try {
      const graph = await this.graphs.get(graphId);
      if (!this.runtime(graph, graphId)) return false;
      for await (const [, sub] of graph.getSubgraphsAsync(undefined, true)) {
        if (!this.runtime(sub as AnyGraph, graphId)) return false;
      }
      return true;
    } catch {
      return false;
    }
  }

  /** The extracted schemas of a graph: cached, under way, or queued now (ahead of the background's for a request). */
  private staticFor(graphId: string, urgent: boolean): Promise<StaticSchemas | undefined> {
    if (urgent) this.asked.add(graphId);
    const known = this.statics.get(graphId);
    if (known) {
      const at = this.queue.findIndex((j) => j.graphId === graphId);
      if (urgent && at >= 0 && !this.queue[at].urgent) this.enqueue(this.queue.splice(at, 1)[0], true);
      return known;
    }
    // The cache is read before the queue: a kept graph never waits behind extractions under way.
    const promise = this.fromCache(graphId).then(
      (hit) =>
        hit ??
        new Promise<StaticSchemas | undefined>((resolve) => {
          if (this.closed) return resolve(undefined);
          this.enqueue({ graphId, resolve }, this.asked.has(graphId));
          this.pump();
        }),
    );
    this.statics.set(graphId, promise);
    return promise;
  }

  /** Requested graphs come first, in the order asked; then the background's, in the project's order. */
  private enqueue(job: Job, urgent: boolean): void {
    job.urgent = urgent;
    if (!urgent) this.queue.push(job);
    else {
      const firstBackground = this.queue.findIndex((j) => !j.urgent);
      this.queue.splice(firstBackground < 0 ? this.queue.length : firstBackground, 0, job);
    }
  }

  private pump(): void {
    while (!this.closed && this.slots < WORKERS && this.queue.length) {
      this.slots++;
      void this.extract(this.queue.shift()!).finally(() => {
        this.slots--;
        this.pump();
      });
    }
  }

  /**
   * Extracts a graph's types, once among the processes sharing the cache: while another holds the graph's lock,
   * its result is awaited instead (the test suite's servers, several `serve` processes of one project).
   */
  private async extract(job: Job): Promise<void> {
    const spec = this.spec(job.graphId);
    if (!spec) return job.resolve(undefined);
    if (!this.cache) return this.extractHere(job, spec);
    for (let round = 0; round < 3 && !this.closed; round++) {
      const release = await this.cache.claim(spec, TIMEOUT_MS * 2);
      if (release) {
        try {
          return await this.extractHere(job, spec);
        } finally {
          await release();
        }
      }
      this.log.debug(
        `schemas of graph "${job.graphId}": another process extracts them; waiting for its result`,
      );
      const theirs = await this.cache.waitForOther(spec, () => this.closed);
      if (theirs) {
        this.log.debug(
          `schemas of graph "${job.graphId}": another process's extraction, taken from the cache`,
        );
        return job.resolve(theirs);
      }
    }
    return this.closed ? job.resolve(undefined) : this.extractHere(job, spec);
  }

  private async extractHere(job: Job, spec: StaticSpec): Promise<void> {
    const t0 = performance.now();
    const extraction = extractInWorker(spec, TIMEOUT_MS);
    this.running.add(extraction);
    try {
      const { extracted, output } = await extraction.done;
      for (const line of output) this.log.debug(`schemas of graph "${job.graphId}": ${line.text.trim()}`);
      const s = ((performance.now() - t0) / 1000).toFixed(1);
      this.log.debug(`schemas of graph "${job.graphId}" extracted from its types in ${s} s`);
      job.resolve(extracted.result);
      await this.cache
        ?.record(spec, extracted)
        .catch((e: Error) => this.log.debug(`schemas: cache entry not written: ${e.message}`));
    } catch (e) {
      if (!this.closed) {
        // What the parser printed, and where it failed, for whoever looks closer (LOG_LEVEL=debug).
        for (const line of (e as { output?: ParserOutput[] }).output ?? [])
          this.log.debug(`schemas of graph "${job.graphId}": ${line.text.trim()}`);
        this.log.warn(
          `schemas of graph "${job.graphId}": types not extracted (${(e as Error).message}); answering its channel names`,
        );
      }
      job.resolve(undefined);
    } finally {
      this.running.delete(extraction);
    }
  }

  private runtime(graph: AnyGraph, graphId: string): GraphSchema | undefined {
    try {
      return runtimeSchemas(graph);
    } catch (e) {
      this.log.warn(
        `schemas of graph "${graphId}": zod schema conversion failed: ${(e as Error)?.message ?? String(e)}`,
      );
      return undefined;
    }
  }

  /** GET /assistants/{id}/schemas without graph_id. */
  async graph(graphId: string, graph: AnyGraph): Promise<Record<string, unknown>> {
    const runtime = this.runtime(graph, graphId);
    if (runtime) return toResponse(runtime);
    const typed = await this.staticFor(graphId, true);
    const root = typed && rootOf(typed);
    return toResponse(root ? typed[root] : channelSchemas(graph, graphId));
  }

  /** GET /assistants/{id}/subgraphs[/{namespace}]: namespace ("child|grandchild") -> {state, input, output, config}. */
  async subgraphs(
    graphId: string,
    graph: AnyGraph,
    namespace: string | undefined,
    recurse: boolean | undefined,
  ): Promise<Record<string, GraphSchema>> {
    const out: Record<string, GraphSchema> = {};
    let typed: Promise<StaticSchemas | undefined> | undefined;
    for await (const [ns, sub] of graph.getSubgraphsAsync(namespace, recurse ?? false)) {
      const subgraph = sub as AnyGraph;
      let schema = this.runtime(subgraph, graphId);
      if (!schema) {
        // As officially: the subgraph's extracted schemas, else the exported graph's.
        const found = await (typed ??= this.staticFor(graphId, true));
        const root = found && rootOf(found);
        schema = root ? (found[`${root}|${ns}`] ?? found[root]) : channelSchemas(subgraph, ns);
      }
      out[ns] = schema;
    }
    return out;
  }

  /** Stops the extractions under way and waits for the cache file's last write. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(undefined);
    for (const extraction of this.running) extraction.stop();
    await this.cache?.flush();
  }
}

const shared = new WeakMap<object, GraphSchemas>();

/** The one GraphSchemas of a registry (what the routes answer from and what the server warms at start). */
export function schemasOf(graphs: SchemaGraphs & { log?: Logger }): GraphSchemas {
  let s = shared.get(graphs);
  if (!s) {
    s = new GraphSchemas(graphs, graphs.log);
    shared.set(graphs, s);
  }
  return s;
}
