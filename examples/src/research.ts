// Example multi-node graph with a subgraph: plan -> research (subgraph: two searches in parallel, then collect) -> write.
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";

const ResearchState = Annotation.Root({
  topic: Annotation<string>,
  notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  summary: Annotation<string>,
});

function search(source: string) {
  return async (state: typeof ResearchState.State, config: LangGraphRunnableConfig) => {
    config.writer?.({ source, status: "searching", topic: state.topic });
    return { notes: [`${source}: facts about ${state.topic}`] };
  };
}

const research = new StateGraph(ResearchState)
  .addNode("search_web", search("web"))
  .addNode("search_docs", search("docs"))
  .addNode("collect", (state: typeof ResearchState.State) => ({
    notes: [`collected ${state.notes.length} notes`],
  }))
  .addEdge(START, "search_web")
  .addEdge(START, "search_docs")
  .addEdge("search_web", "collect")
  .addEdge("search_docs", "collect")
  .addEdge("collect", END)
  .compile();

export const graph = new StateGraph(ResearchState)
  .addNode("plan", (state: typeof ResearchState.State) => ({ notes: [`plan for ${state.topic}`] }))
  .addNode("research", research)
  .addNode("write", (state: typeof ResearchState.State) => ({
    summary: `${state.topic}: ${state.notes.length} notes`,
  }))
  .addEdge(START, "plan")
  .addEdge("plan", "research")
  .addEdge("research", "write")
  .addEdge("write", END)
  .compile();
