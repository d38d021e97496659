/**
 * In-process baseline ("distance from no server"): imports the example `chat` graph, gives the compiled graph
 * a MemorySaver checkpointer and times `graph.invoke` on a new thread id with the run-wait input, using the
 * same load generator as the HTTP scenarios.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { EXAMPLES_DIR } from "./servers.ts";
import { INPUT } from "./scenarios.ts";

type Invoke = (threadId: string) => Promise<unknown>;

let invoker: Invoke | undefined;

/** Loads the graph once (after applying the config's `env`, as both servers do). */
export async function loadBaseline(): Promise<Invoke> {
  if (invoker) return invoker;
  const config = JSON.parse(readFileSync(join(EXAMPLES_DIR, "langgraph.json"), "utf-8")) as {
    env?: Record<string, string> | string;
  };
  if (config.env && typeof config.env === "object") {
    for (const [k, v] of Object.entries(config.env)) process.env[k] ??= v;
  }
  const { graph } = await import("../examples/src/chat.ts");
  graph.checkpointer = new MemorySaver();
  invoker = (threadId) => graph.invoke(INPUT, { configurable: { thread_id: threadId } });
  return invoker;
}

/** One timed in-process run on a fresh thread. */
export async function baselineOp(): Promise<Record<string, number>> {
  const invoke = await loadBaseline();
  const t0 = performance.now();
  const values = (await invoke(randomUUID())) as { messages?: { getType?: () => string }[] };
  const latency = performance.now() - t0;
  const last = values.messages?.[values.messages.length - 1];
  if (last?.getType?.() !== "ai") throw new Error("baseline: last message is not an AI message");
  return { latency };
}
