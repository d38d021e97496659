// Example multi-node graph with a subgraph: plan -> research (subgraph: two searches in parallel, then collect) -> write.
import { Annotation, END, START, StateGraph, type LangGraphRunnableConfig } from "@langchain/langgraph";

const concat = { reducer: (a: string[], b: string[]) => a.concat(b), default: (): string[] => [] };

const ResearchState = Annotation.Root({
  topic: Annotation<string>,
  outline: Annotation<string>,
  findings: Annotation<string[]>(concat),
  summary: Annotation<string>,
});

// The subgraph has its own state: only `findings` flows back to the parent, so nothing is counted twice.
const SearchState = Annotation.Root({
  topic: Annotation<string>,
  findings: Annotation<string[]>(concat),
});

function search(source: string) {
  return async (state: typeof SearchState.State, config: LangGraphRunnableConfig) => {
    config.writer?.({ source, status: "searching", topic: state.topic });
    return { findings: [`${source}: facts about ${state.topic}`] };
  };
}

const research = new StateGraph(SearchState)
  .addNode("search_web", search("web"))
  .addNode("search_docs", search("docs"))
  .addNode("collect", (state: typeof SearchState.State) => ({
    findings: [`collected ${state.findings.length} sources`],
  }))
  .addEdge(START, "search_web")
  .addEdge(START, "search_docs")
  .addEdge("search_web", "collect")
  .addEdge("search_docs", "collect")
  .addEdge("collect", END)
  .compile();

export const graph = new StateGraph(ResearchState)
  .addNode("plan", (state: typeof ResearchState.State) => ({
    outline: `search the web and the docs for ${state.topic}`,
  }))
  .addNode("research", research)
  .addNode("write", (state: typeof ResearchState.State) => ({
    summary: `${state.topic}: ${state.findings.length} findings`,
  }))
  .addEdge(START, "plan")
  .addEdge("plan", "research")
  .addEdge("research", "write")
  .addEdge("write", END)
  .compile();
