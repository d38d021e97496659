// Benchmark project: a text-to-SQL graph with a zod context schema and an Annotation state.
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { z } from "zod";
import { model } from "./model.js";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  query: Annotation<string>,
  rows: Annotation<Array<Record<string, string | number | null>>>,
  error: Annotation<string | undefined>,
});

const Context = z.object({ dialect: z.enum(["sqlite", "postgres"]), readOnly: z.boolean() });

export const graph = new StateGraph(State, Context)
  .addNode("write_query", async (s) => ({ messages: [await model.invoke(s.messages)], query: "select 1" }))
  .addNode("run_query", () => ({ rows: [{ one: 1 }] }))
  .addEdge(START, "write_query")
  .addEdge("write_query", "run_query")
  .addEdge("run_query", END)
  .compile();
