// The LangChain fixture project (test/fixtures/langchain-project) as its tests see it: where it is, its graphs, and
// how a conversation reads.
import { join } from "node:path";
import { ROOT } from "./server.ts";

export const PROJECT = join(ROOT, "test/fixtures/langchain-project");
export const CONFIG = join(PROJECT, "langgraph.json");
export const GRAPH_IDS = [
  "agent",
  "agent_1_4",
  "deep",
  "react",
  "supervisor",
  "swarm",
  "summarizing",
  "todos",
  "tool_limit",
  "model_limit",
  "fallback",
  "tool_retry",
  "context_editing",
  "pii",
  "dynamic_prompt",
  "custom_middleware",
  "structured",
];

export interface Message {
  type: string;
  content: unknown;
  name?: string;
  id?: string;
  status?: string;
  tool_calls?: { name: string; args: Record<string, unknown> }[];
  additional_kwargs?: Record<string, unknown>;
  response_metadata?: Record<string, unknown>;
}
export interface AgentValues {
  messages: Message[];
  [key: string]: unknown;
}

export const human = (content: string) => ({ messages: [{ role: "user", content }] });
export const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : JSON.stringify(m.content);
/** A conversation as `type: text` lines (a tool message also names its tool), for whole-transcript comparisons. */
export const lines = (v: { messages?: Message[] }): string[] =>
  (v.messages ?? []).map((m) =>
    m.tool_calls?.length
      ? `${m.type}: calls ${m.tool_calls.map((c) => `${c.name} ${JSON.stringify(c.args)}`).join(", ")}`
      : `${m.type}${m.type === "tool" ? `(${m.name})` : ""}: ${textOf(m)}`,
  );
