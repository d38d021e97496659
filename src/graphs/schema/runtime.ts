// JSON schemas of graphs whose state is declared with runtime schemas: LangGraph's StateSchema, or zod (v3
// or v4) objects with `withLangGraph` / `registry` metadata (`jsonSchemaExtra` such as langgraph_type).
import { toJsonSchema } from "@langchain/core/utils/json_schema";
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

const isZod = (v: unknown): boolean =>
  typeof v === "object" && v !== null && ("_zod" in v || ("_def" in v && "parse" in v));

/** Turns `description: "lg:{...}"` back into the JSON schema keys it carries, everywhere in a schema. */
function applyExtras(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(applyExtras);
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = applyExtras(v);
  if (typeof out.description === "string" && out.description.startsWith(EXTRAS_PREFIX)) {
    const extras = JSON.parse(out.description.slice(EXTRAS_PREFIX.length)) as Record<string, unknown>;
    delete out.description;
    Object.assign(out, extras);
  }
  return out;
}

/** A zod schema as JSON schema; zod v4 types JSON schema cannot express (z.custom) become `{}`. */
function zodToJson(schema: unknown): JsonSchema {
  try {
    return toJsonSchema(schema as never) as JsonSchema;
  } catch {
    return toJsonSchema(schema as never, { unrepresentable: "any" } as never) as JsonSchema;
  }
}

function fromZod(
  def: unknown,
  registry: MetaRegistry | undefined,
  effects: Record<string, boolean>,
): JsonSchema | undefined {
  if (!isZod(def)) return undefined;
  const extended = registry ? registry.getExtendedChannelSchemas(def, effects) : def;
  return applyExtras(zodToJson(extended)) as JsonSchema;
}

/**
 * Schemas from the graph's runtime schemas, as the official server derives them: StateSchema first, then zod
 * (state and input as partial updates with reducer schemas, output and config as declared). Undefined when
 * the graph has none (Annotation state), so the TypeScript types decide.
 */
export function runtimeSchemas(graph: unknown): GraphSchema | undefined {
  const builder = (graph as { builder?: Builder } | null)?.builder;
  if (!builder || typeof builder !== "object") return undefined;
  const stateDef = builder._schemaRuntimeDefinition;
  const inputDef =
    builder._inputRuntimeDefinition === PARTIAL_STATE ? stateDef : builder._inputRuntimeDefinition;
  const outputDef = builder._outputRuntimeDefinition;

  if (isStateSchema(stateDef) || isStateSchema(inputDef) || isStateSchema(outputDef)) {
    const out: GraphSchema = {
      state: isStateSchema(stateDef) ? stateDef.getJsonSchema() : undefined,
      input: isStateSchema(inputDef) ? inputDef.getInputJsonSchema() : undefined,
      output: isStateSchema(outputDef) ? outputDef.getJsonSchema() : undefined,
    };
    return out.state || out.input || out.output ? out : undefined;
  }

  const registry = builder._metaRegistry;
  const update = { withReducerSchema: true, withJsonSchemaExtrasAsDescription: true, asPartial: true };
  const plain = { withJsonSchemaExtrasAsDescription: true };
  const out: GraphSchema = {
    state: fromZod(stateDef, registry, update),
    input: fromZod(inputDef, registry, update),
    output: fromZod(outputDef, registry, plain),
    config: fromZod(builder._configRuntimeSchema, registry, plain),
  };
  return Object.values(out).some((v) => v !== undefined) ? out : undefined;
}
