// Graph introspection for the assistants API: drawable graph JSON, JSON schemas, subgraphs.
import {
  getConfigTypeSchema,
  getInputTypeSchema,
  getOutputTypeSchema,
  getStateTypeSchema,
} from "@langchain/langgraph/zod/schema";
import type { AnyGraph } from "./registry.js";

/** Nodes and edges as the official API returns them. */
export async function drawableGraph(graph: AnyGraph, xray?: boolean | number): Promise<unknown> {
  const drawable = await graph.getGraphAsync((xray !== undefined ? { xray } : {}) as any);
  return drawable.toJSON();
}

const isPublicChannel = (name: string) => !name.startsWith("__") && !name.includes(":");

function channelsSchema(title: string, channels: string | string[] | undefined): Record<string, unknown> {
  const names = (Array.isArray(channels) ? channels : channels ? [channels] : []).filter(isPublicChannel);
  return { title, type: "object", properties: Object.fromEntries(names.map((n) => [n, {}])) };
}

function safe<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

/**
 * JSON schemas of a graph. Zod-defined state gives full schemas; Annotation state (no runtime types)
 * gives an object schema listing the state keys.
 */
export function graphSchemas(graph: AnyGraph, graphId: string): Record<string, unknown> {
  const g = graph as any;
  const stateKeys = Object.keys(g.channels ?? {});
  return {
    input_schema:
      safe(() => getInputTypeSchema(graph)) ?? channelsSchema(`${graphId}_input`, g.inputChannels),
    output_schema:
      safe(() => getOutputTypeSchema(graph)) ?? channelsSchema(`${graphId}_output`, g.outputChannels),
    state_schema: safe(() => getStateTypeSchema(graph)) ?? channelsSchema(`${graphId}_state`, stateKeys),
    config_schema: safe(() => getConfigTypeSchema(graph)) ?? {
      title: `${graphId}_config`,
      type: "object",
      properties: {},
    },
    context_schema: null,
  };
}

/** Subgraphs by namespace, each with its schemas. */
export async function subgraphSchemas(
  graph: AnyGraph,
  namespace: string | undefined,
  recurse: boolean | undefined,
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for await (const [ns, sub] of graph.getSubgraphsAsync(namespace, recurse ?? false)) {
    out[ns] = graphSchemas(sub as AnyGraph, ns);
  }
  return out;
}
