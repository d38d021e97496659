// Benchmark project: a router sending work to nodes with Command, over a discriminated union state field.
import { Annotation, Command, END, START, StateGraph } from "@langchain/langgraph";

type Task =
  | { kind: "email"; to: string; body: string }
  | { kind: "calendar"; title: string; start: string; minutes: number }
  | { kind: "note"; text: string };

const State = Annotation.Root({
  task: Annotation<Task>,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

export const graph = new StateGraph(State)
  .addNode(
    "route",
    (s) => new Command({ goto: s.task.kind === "email" ? "send" : "file", update: { log: ["routed"] } }),
    { ends: ["send", "file"] },
  )
  .addNode("send", () => ({ log: ["sent"] }))
  .addNode("file", () => ({ log: ["filed"] }))
  .addEdge(START, "route")
  .addEdge("send", END)
  .addEdge("file", END)
  .compile();
