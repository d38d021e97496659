// Benchmark project: retrieval-augmented answers over typed documents, with a config annotation.
import { Annotation, END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { model } from "./model.js";

/** A retrieved passage. */
interface Doc {
  id: string;
  text: string;
  /** Relevance, 0 to 1. */
  score: number;
  metadata: { source: "web" | "wiki" | "notes"; url?: string };
}

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  question: Annotation<string>,
  docs: Annotation<Doc[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  grade: Annotation<"relevant" | "irrelevant" | "unsure">,
});

const Config = Annotation.Root({
  topK: Annotation<number>,
  index: Annotation<string>,
});

export const graph = new StateGraph(State, Config)
  .addNode("retrieve", (s) => ({
    docs: [{ id: "1", text: `about ${s.question}`, score: 0.9, metadata: { source: "notes" as const } }],
  }))
  .addNode("grader", (s) => ({ grade: s.docs.length ? ("relevant" as const) : ("irrelevant" as const) }))
  .addNode("answer", async (s) => ({ messages: [await model.invoke(s.messages)] }))
  .addEdge(START, "retrieve")
  .addEdge("retrieve", "grader")
  .addEdge("grader", "answer")
  .addEdge("answer", END)
  .compile();
