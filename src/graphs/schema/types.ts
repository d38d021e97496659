// Shapes shared by the schema code: one graph's JSON schemas, as the official server names them.

export type JsonSchema = Record<string, unknown>;

/** The JSON schemas of one graph, each absent when it cannot be determined. */
export interface GraphSchema {
  state?: JsonSchema;
  input?: JsonSchema;
  output?: JsonSchema;
  config?: JsonSchema;
}
