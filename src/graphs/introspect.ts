// Graph introspection for the assistants API: drawable graph JSON, and the JSON schemas of graphs and
// subgraphs as the official server computes them (runtime zod/StateSchema first, then TypeScript types).
import type { AnyGraph } from "./registry.js";
import { runtimeSchemas } from "./schema/runtime.js";
import type { GraphSchema, JsonSchema, StaticGraphSchemas } from "./schema/types.js";
import { extractInWorker } from "./schema/worker.js";
import { rootLogger, type Logger } from "../lib/logger.js";

/** Nodes and edges as the official API returns them. */
export async function drawableGraph(graph: AnyGraph, xray?: boolean | number): Promise<unknown> {
  const drawable = await graph.getGraphAsync((xray !== undefined ? { xray } : {}) as any);
  return drawable.toJSON();
}

const isPublicChannel = (name: string) => !name.startsWith("__") && !name.includes(":");

function channelsSchema(title: string, channels: string | string[] | undefined): JsonSchema {
  const names = (Array.isArray(channels) ? channels : channels ? [channels] : []).filter(isPublicChannel);
  return { title, type: "object", properties: Object.fromEntries(names.map((n) => [n, {}])) };
}

/** What is known without types: the channel names of the graph (when nothing better can be found). */
function channelSchemas(graph: AnyGraph, name: string): Required<GraphSchema> {
  const g = graph as any;
  return {
    input: channelsSchema(`${name}_input`, g.inputChannels),
    output: channelsSchema(`${name}_output`, g.outputChannels),
    state: channelsSchema(`${name}_state`, Object.keys(g.channels ?? {})),
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

/** Where a graph comes from: its module and export. */
export interface GraphSource {
  file: string;
  exportName: string | undefined;
}

/**
 * Schemas of the project's graphs. TypeScript types are extracted lazily, on the first request that needs
 * them, for every graph of the project at once (one compiler program, in a worker thread), and kept; a
 * failed extraction is logged once and answered with the channel names.
 */
export class GraphSchemas {
  private extracted?: Promise<Map<string, StaticGraphSchemas>>;

  constructor(
    private graphs: { ids(): string[]; source(graphId: string): GraphSource | undefined },
    private log: Logger = rootLogger(),
  ) {}

  private async extractAll(): Promise<Map<string, StaticGraphSchemas>> {
    const out = new Map<string, StaticGraphSchemas>();
    const ids = this.graphs.ids().flatMap((id) => {
      const src = this.graphs.source(id);
      return src ? [[id, src] as const] : [];
    });
    try {
      const results = await extractInWorker(ids.map(([, src]) => src));
      results.forEach((r, i) => {
        if ("ok" in r) out.set(ids[i][0], r.ok);
        else
          this.log.warn(
            `schemas of graph "${ids[i][0]}": types not extracted (${r.error}); answering channel names`,
          );
      });
    } catch (e) {
      this.log.warn(
        `schemas: TypeScript extraction failed (${(e as Error)?.message ?? String(e)}); answering channel names`,
      );
    }
    return out;
  }

  private async fromTypes(graphId: string): Promise<StaticGraphSchemas | undefined> {
    this.extracted ??= this.extractAll();
    return (await this.extracted).get(graphId);
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
    if (runtime)
      return toResponse({ ...runtime, state: runtime.state ?? channelSchemas(graph, graphId).state });
    const typed = await this.fromTypes(graphId);
    const fallback = channelSchemas(graph, graphId);
    if (!typed) return toResponse(fallback);
    return toResponse({ ...typed.root, state: typed.root.state ?? fallback.state });
  }

  /** GET /assistants/{id}/subgraphs[/{namespace}]: namespace ("child|grandchild") -> schemas. */
  async subgraphs(
    graphId: string,
    graph: AnyGraph,
    namespace: string | undefined,
    recurse: boolean | undefined,
  ): Promise<Record<string, unknown>> {
    const out: Record<string, unknown> = {};
    for await (const [ns, sub] of graph.getSubgraphsAsync(namespace, recurse ?? false)) {
      const subgraph = sub as AnyGraph;
      let schema = this.runtime(subgraph, graphId);
      if (!schema) schema = (await this.fromTypes(graphId))?.subgraphs[ns];
      const fallback = channelSchemas(subgraph, ns);
      out[ns] = toResponse(
        schema
          ? {
              ...schema,
              state: schema.state ?? fallback.state,
              input: schema.input ?? fallback.input,
              output: schema.output ?? fallback.output,
            }
          : fallback,
      );
    }
    return out;
  }
}
