// Benchmark project: a running summary over messages, with reducers.
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { model } from "./model.js";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  summary: Annotation<string>({ reducer: (_a, b) => b, default: () => "" }),
  turns: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  keywords: Annotation<Set<string>>,
});

export const graph = new StateGraph(State)
  .addNode("summarize", async (s) => ({
    messages: [await model.invoke(s.messages)],
    summary: `${s.messages.length} messages`,
    turns: 1,
  }))
  .addEdge(START, "summarize")
  .addEdge("summarize", END)
  .compile();
