// System assistants (one per graph, with a stable id derived from the graph id) and assistant lookup.
import { isDeepStrictEqual } from "node:util";
import { v5 as uuidv5 } from "uuid";
import type { AssistantDefaults } from "../lib/settings/project.js";
import type { Assistant, Json, Storage } from "../storage/types.js";
import type { GraphRegistry } from "./registry.js";
import { isUuid } from "../lib/uuid.js";

// The namespace the official server derives system assistant ids from, so the same graph gets the same id.
const NAMESPACE_GRAPH = "6ba7b821-9dad-11d1-80b4-00c04fd430c8";

/** The id of a graph's system assistant (derived once per graph id). */
const systemIds = new Map<string, string>();
export const systemAssistantId = (graphId: string): string => {
  let id = systemIds.get(graphId);
  if (id === undefined) {
    id = uuidv5(graphId, NAMESPACE_GRAPH);
    if (systemIds.size < 10_000) systemIds.set(graphId, id);
  }
  return id;
};

/**
 * Ensures a system assistant exists for every loaded graph, with the config and context LANGGRAPH_CONFIG
 * gives its graph id (`defaults`). An existing one whose graph LANGGRAPH_CONFIG names gets a new version
 * when they differ, so a changed variable takes effect at the next start.
 */
export async function ensureSystemAssistants(
  storage: Storage,
  graphs: GraphRegistry,
  defaults: Record<string, AssistantDefaults> = {},
): Promise<void> {
  for (const graphId of graphs.ids()) {
    const id = systemAssistantId(graphId);
    const wanted = defaults[graphId];
    const config = (wanted?.config ?? {}) as Json;
    const context = (wanted?.context ?? {}) as Json;
    const existing = await storage.assistants.get(id);
    if (existing) {
      const differs =
        !isDeepStrictEqual(existing.config, config) || !isDeepStrictEqual(existing.context ?? {}, context);
      if (wanted && differs) await storage.assistants.patch(id, { config, context });
      continue;
    }
    await storage.assistants.create({
      assistant_id: id,
      graph_id: graphId,
      config,
      context,
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
