// Benchmark project: a chat graph over MessagesAnnotation.
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { model } from "./model.js";

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", async (state) => ({ messages: [await model.invoke(state.messages)] }))
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();
