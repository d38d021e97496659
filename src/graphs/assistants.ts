// System assistants (one per graph, with a stable id derived from the graph id) and assistant lookup.
import { v5 as uuidv5, validate as isUuid } from "uuid";
import type { Assistant, Storage } from "../storage/types.js";
import type { GraphRegistry } from "./registry.js";

// The namespace the official server derives system assistant ids from, so the same graph gets the same id.
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

export const systemAssistantId = (graphId: string): string => uuidv5(graphId, NAMESPACE_GRAPH);

/** Ensures a system assistant exists for every loaded graph. */
export async function ensureSystemAssistants(storage: Storage, graphs: GraphRegistry): Promise<void> {
  for (const graphId of graphs.ids()) {
    const id = systemAssistantId(graphId);
    if (await storage.assistants.get(id)) continue;
    await storage.assistants.create({
      assistant_id: id,
      graph_id: graphId,
      config: {},
      context: {},
      metadata: { created_by: "system" },
      name: graphId,
      description: graphs.description(graphId) ?? null,
    });
  }
}

/** Finds an assistant by UUID, or the system assistant of a graph id. */
export async function findAssistant(storage: Storage, idOrGraph: string): Promise<Assistant | null> {
  const id = isUuid(idOrGraph) ? idOrGraph : systemAssistantId(idOrGraph);
  return storage.assistants.get(id);
}
