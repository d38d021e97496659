// Benchmark project: human in the loop (interrupt), exported as a factory taking the run's config.
import { Annotation, END, interrupt, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  request: Annotation<string>,
  approved: Annotation<boolean>,
  reviewer: Annotation<string | null>,
  decidedAt: Annotation<Date>,
});

export function makeGraph() {
  return new StateGraph(State)
    .addNode("review", (s) => {
      const answer = interrupt<{ question: string }, { approved: boolean; reviewer: string }>({
        question: `approve ${s.request}?`,
      });
      return { approved: answer.approved, reviewer: answer.reviewer, decidedAt: new Date() };
    })
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile();
}
