// JSON schemas of graphs whose state is declared with runtime schemas, tier by tier as the official server derives
// them (@langchain/langgraph-api's getRuntimeGraphSchema): LangGraph's StateSchema, then zod through LangGraph's
// schema registry (withLangGraph / registry metadata such as langgraph_type), then zod converted directly. The
// registry is the graph's own (`builder._metaRegistry`), so a graph of the project's own copy of
// @langchain/langgraph keeps its metadata.
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { isZodSchemaV3, isZodSchemaV4 } from "@langchain/core/utils/types";
import type { GraphSchema, JsonSchema } from "./types.js";

/** The builder fields LangGraph keeps for runtime schemas (present from @langchain/langgraph 1.0 on). */
interface Builder {
  _schemaRuntimeDefinition?: unknown;
  _inputRuntimeDefinition?: unknown;
  _outputRuntimeDefinition?: unknown;
  _configRuntimeSchema?: unknown;
  _metaRegistry?: MetaRegistry;
}

interface MetaRegistry {
  getExtendedChannelSchemas(schema: unknown, effects: Record<string, boolean>): unknown;
}

interface StateSchemaLike {
  getJsonSchema(): JsonSchema;
  getInputJsonSchema(): JsonSchema;
}

/** Marks an input that is the state schema made partial (LangGraph's own symbol). */
const PARTIAL_STATE = Symbol.for("langgraph.state.partial");
/** How `withLangGraph` carries `jsonSchemaExtra` through zod: a description starting with this prefix. */
const EXTRAS_PREFIX = "lg:";

const isStateSchema = (v: unknown): v is StateSchemaLike =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as StateSchemaLike).getJsonSchema === "function" &&
  typeof (v as StateSchemaLike).getInputJsonSchema === "function";

/** Tier 1: StateSchema instances (their own JSON schemas, extras included); no config schema. */
function fromStateSchema(b: Builder): GraphSchema | undefined {
  const stateDef = b._schemaRuntimeDefinition;
  if (
    !isStateSchema(stateDef) &&
    !isStateSchema(b._inputRuntimeDefinition) &&
    !isStateSchema(b._outputRuntimeDefinition)
  )
    return undefined;
  const inputDef = b._inputRuntimeDefinition;
  const state = isStateSchema(stateDef) ? stateDef.getJsonSchema() : undefined;
  const input = isStateSchema(inputDef)
    ? inputDef.getInputJsonSchema()
    : inputDef === PARTIAL_STATE && isStateSchema(stateDef)
      ? stateDef.getInputJsonSchema()
      : undefined;
  const output = isStateSchema(b._outputRuntimeDefinition)
    ? b._outputRuntimeDefinition.getJsonSchema()
    : undefined;
  if (!state && !input && !output) return undefined;
  return { state, input, output, config: undefined };
}

/** Turns `description: "lg:{...}"` back into the JSON schema keys it carries, everywhere in a schema. */
function applyExtras(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(applyExtras);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, applyExtras(v)]),
  );
  if (typeof out.description === "string" && out.description.startsWith(EXTRAS_PREFIX)) {
    const extras = JSON.parse(out.description.slice(EXTRAS_PREFIX.length)) as Record<string, unknown>;
    delete out.description;
    Object.assign(out, extras);
  }
  return out;
}

const UPDATE = { withReducerSchema: true, withJsonSchemaExtrasAsDescription: true, asPartial: true };
const PLAIN = { withJsonSchemaExtrasAsDescription: true };

/** Tier 2: zod through the registry (state and input as partial updates with reducer schemas). Throws on failure. */
function fromRegistry(b: Builder, registry: MetaRegistry): GraphSchema | undefined {
  const convert = (def: unknown, effects: Record<string, boolean>): JsonSchema | undefined =>
    def
      ? (applyExtras(toJsonSchema(registry.getExtendedChannelSchemas(def, effects) as never)) as JsonSchema)
      : undefined;
  const inputDef =
    b._inputRuntimeDefinition === PARTIAL_STATE ? b._schemaRuntimeDefinition : b._inputRuntimeDefinition;
  const out: GraphSchema = {
    state: convert(b._schemaRuntimeDefinition, UPDATE),
    input: convert(inputDef, UPDATE),
    output: convert(b._outputRuntimeDefinition, PLAIN),
    config: convert(b._configRuntimeSchema, PLAIN),
  };
  return Object.values(out).every((v) => v == null) ? undefined : out;
}

/** Tier 3: zod converted as it is (no extras); the input defaults to the state without `required`. */
function fromZod(b: Builder): GraphSchema | undefined {
  const convert = (def: unknown): JsonSchema | undefined => {
    if (!def || !(isZodSchemaV4(def) || isZodSchemaV3(def))) return undefined;
    try {
      return toJsonSchema(def as never) as JsonSchema;
    } catch {
      return undefined;
    }
  };
  const state = convert(b._schemaRuntimeDefinition);
  const input = convert(b._inputRuntimeDefinition) ?? (state ? { ...state, required: undefined } : undefined);
  const output = convert(b._outputRuntimeDefinition);
  const config = convert(b._configRuntimeSchema);
  if (!state && !input && !output && !config) return undefined;
  return { state, input, output, config };
}

/**
 * Schemas from the graph's runtime schemas, or undefined when it has none that convert (an Annotation state, a
 * zod type JSON schema cannot express), so that its TypeScript types decide.
 */
export function runtimeSchemas(graph: unknown): GraphSchema | undefined {
  const builder = (graph as { builder?: Builder } | null)?.builder;
  if (!builder || typeof builder !== "object") return undefined;
  const tier1 = fromStateSchema(builder);
  if (tier1) return tier1;
  if (builder._metaRegistry) {
    try {
      const tier2 = fromRegistry(builder, builder._metaRegistry);
      if (tier2) return tier2;
    } catch {
      // as officially: the next tier
    }
  }
  return fromZod(builder);
}
