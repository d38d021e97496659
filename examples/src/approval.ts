// Example human-in-the-loop graph: "write_draft" writes a proposal, "review" pauses with interrupt() for an answer.
// The export is a factory taking the run's config, as langgraph.json allows. Its config schema (an assistant's
// `configurable`) names who reviews: the question then says so.
import {
  Annotation,
  END,
  START,
  StateGraph,
  interrupt,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";

const ApprovalState = Annotation.Root({
  request: Annotation<string>,
  draft: Annotation<string>,
  decision: Annotation<string>,
});

const ApprovalConfig = Annotation.Root({
  reviewer: Annotation<string>,
});

export function makeGraph() {
  return new StateGraph(ApprovalState, ApprovalConfig)
    .addNode("write_draft", (state: typeof ApprovalState.State) => ({ draft: `Proposal: ${state.request}` }))
    .addNode("review", (state: typeof ApprovalState.State, config: LangGraphRunnableConfig) => {
      const reviewer = config.configurable?.reviewer as string | undefined;
      const answer = interrupt({
        question: "Approve this draft?",
        draft: state.draft,
        ...(reviewer ? { reviewer } : {}),
      });
      return { decision: typeof answer === "string" ? answer : JSON.stringify(answer) };
    })
    .addEdge(START, "write_draft")
    .addEdge("write_draft", "review")
    .addEdge("review", END)
    .compile();
}
