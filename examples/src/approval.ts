// Example human-in-the-loop graph: "write_draft" writes a proposal, "review" pauses with interrupt() for an answer.
// The export is a factory taking the run's config, as langgraph.json allows.
import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";

const ApprovalState = Annotation.Root({
  request: Annotation<string>,
  draft: Annotation<string>,
  decision: Annotation<string>,
});

export function makeGraph() {
  return new StateGraph(ApprovalState)
    .addNode("write_draft", (state: typeof ApprovalState.State) => ({ draft: `Proposal: ${state.request}` }))
    .addNode("review", (state: typeof ApprovalState.State) => {
      const answer = interrupt({ question: "Approve this draft?", draft: state.draft });
      return { decision: typeof answer === "string" ? answer : JSON.stringify(answer) };
    })
    .addEdge(START, "write_draft")
    .addEdge("write_draft", "review")
    .addEdge("review", END)
    .compile();
}
