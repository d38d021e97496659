// Benchmark project: plan -> research (a compiled subgraph with its own subgraph) -> write.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const concat = { reducer: (a: string[], b: string[]) => a.concat(b), default: (): string[] => [] };

const ResearchState = Annotation.Root({
  topic: Annotation<string>,
  outline: Annotation<string>,
  findings: Annotation<string[]>(concat),
  summary: Annotation<string>,
});

const SourceState = Annotation.Root({
  topic: Annotation<string>,
  findings: Annotation<string[]>(concat),
  depth: Annotation<number>,
});

const source = new StateGraph(SourceState)
  .addNode("fetch", (s) => ({ findings: [`fetched ${s.topic}`], depth: (s.depth ?? 0) + 1 }))
  .addEdge(START, "fetch")
  .compile();

const SearchState = Annotation.Root({
  topic: Annotation<string>,
  findings: Annotation<string[]>(concat),
});

const search = new StateGraph(SearchState)
  .addNode("source", source)
  .addNode("collect", (s) => ({ findings: [`collected ${s.findings.length}`] }))
  .addEdge(START, "source")
  .addEdge("source", "collect")
  .compile();

export const graph = new StateGraph(ResearchState)
  .addNode("plan", (s) => ({ outline: `search for ${s.topic}` }))
  .addNode("research", search)
  .addNode("write", (s) => ({ summary: `${s.topic}: ${s.findings.length} findings` }))
  .addEdge(START, "plan")
  .addEdge("plan", "research")
  .addEdge("research", "write")
  .addEdge("write", END)
  .compile();
