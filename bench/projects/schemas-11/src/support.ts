// Benchmark project: a support desk whose teams are subgraphs built from StateGraphs compiled in addNode.
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { model } from "./model.js";

const TeamState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ticket: Annotation<{ id: string; subject: string; tags: string[] }>,
  resolved: Annotation<boolean>,
});

const billing = new StateGraph(TeamState).addNode("refund", async (s) => ({
  messages: [await model.invoke(s.messages)],
  resolved: true,
}));
billing.addEdge(START, "refund");

const tech = new StateGraph(TeamState).addNode("debug", () => ({ resolved: false }));
tech.addEdge(START, "debug");

export const graph = new StateGraph(TeamState)
  .addNode("billing", billing.compile())
  .addNode("tech", tech.compile())
  .addConditionalEdges(START, (s) => (s.ticket.tags.includes("billing") ? "billing" : "tech"))
  .addEdge("billing", END)
  .addEdge("tech", END)
  .compile();
