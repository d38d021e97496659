// Benchmark project: a planner keeping typed steps with a status enum, separate input and output.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

type Status = "todo" | "doing" | "done" | "blocked";

interface Step {
  title: string;
  status: Status;
  owner?: string;
  estimate: { hours: number; confidence: "low" | "medium" | "high" };
}

const State = Annotation.Root({
  goal: Annotation<string>,
  steps: Annotation<Step[]>,
  progress: Annotation<number>,
  notes: Annotation<Record<string, string>>,
});

const Input = Annotation.Root({ goal: Annotation<string> });
const Output = Annotation.Root({ steps: Annotation<Step[]>, progress: Annotation<number> });

export const graph = new StateGraph({ stateSchema: State, input: Input, output: Output })
  .addNode("plan", (s) => ({
    steps: [{ title: s.goal, status: "todo" as const, estimate: { hours: 1, confidence: "low" as const } }],
  }))
  .addNode("track", (s) => ({ progress: s.steps.filter((x) => x.status === "done").length / s.steps.length }))
  .addEdge(START, "plan")
  .addEdge("plan", "track")
  .addEdge("track", END)
  .compile();
