// Shapes shared by the schema extractors: one graph's JSON schemas, and a graph with its subgraphs.

export type JsonSchema = Record<string, unknown>;

/** The JSON schemas of one graph, each absent when it cannot be determined. */
export interface GraphSchema {
  state?: JsonSchema;
  input?: JsonSchema;
  output?: JsonSchema;
  config?: JsonSchema;
}

/** What the TypeScript extractor finds for an exported graph: its schemas and its subgraphs' by namespace. */
export interface StaticGraphSchemas {
  root: GraphSchema;
  subgraphs: Record<string, GraphSchema>;
}
