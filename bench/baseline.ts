/**
 * In-process baseline ("distance from no server"): imports the example `chat` graph, gives the compiled graph
 * a checkpointer (MemorySaver for `npm run bench`; bench/cpu.ts gives it a SQLite file) and runs
 * `graph.invoke` on a new thread id with the run-wait input, using the same load generator as the HTTP
 * scenarios.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { EXAMPLES_DIR } from "./servers.ts";
import { INPUT } from "./scenarios.ts";

export type Invoke = (threadId: string) => Promise<unknown>;

let invoker: Invoke | undefined;

/**
 * Loads the graph (once: the module is cached; after applying the config's `env`, as both servers do) and
 * gives it `checkpointer`. The graph is a module singleton: the last call's checkpointer wins in this process.
 */
export async function loadInvoker(checkpointer: BaseCheckpointSaver): Promise<Invoke> {
  const config = JSON.parse(readFileSync(join(EXAMPLES_DIR, "langgraph.json"), "utf-8")) as {
    env?: Record<string, string> | string;
  };
  if (config.env && typeof config.env === "object") {
    for (const [k, v] of Object.entries(config.env)) process.env[k] ??= v;
  }
  const { graph } = await import("../examples/src/chat.ts");
  graph.checkpointer = checkpointer;
  return (threadId) => graph.invoke(INPUT, { configurable: { thread_id: threadId } });
}

/**
 * graph.invoke as `loadInvoker`'s, with the chat model made to stream its tokens (a handler that prefers streaming,
 * as the official server's runs and Hangar's have: the message is then the aggregate of its chunks): the same graph
 * invoked as any wire-compatible server must run it, without a server. `input` as the run's (default: the run-wait
 * input).
 */
export async function loadStreamingInvoker(
  checkpointer: BaseCheckpointSaver,
): Promise<(threadId: string, input?: unknown) => Promise<unknown>> {
  await loadInvoker(checkpointer);
  const { graph } = await import("../examples/src/chat.ts");
  const { PreferStreaming } = await import("../src/runs/prefer-streaming.ts");
  return (threadId, input = INPUT) =>
    graph.invoke(input as typeof INPUT, {
      configurable: { thread_id: threadId },
      callbacks: [new PreferStreaming()],
    });
}

/** The baseline's invoker: the graph with a MemorySaver. */
export async function loadBaseline(): Promise<Invoke> {
  invoker ??= await loadInvoker(new MemorySaver());
  return invoker;
}

/** One in-process run on a fresh thread; checks that it answered. */
export async function invokeOnNewThread(invoke: Invoke): Promise<void> {
  const values = (await invoke(randomUUID())) as { messages?: { getType?: () => string; type?: string }[] };
  const last = values.messages?.[values.messages.length - 1];
  // A message object, or its plain dict (Hangar's runner gives the values as JSON).
  if ((last?.getType?.() ?? last?.type) !== "ai")
    throw new Error("baseline: last message is not an AI message");
}

/** One timed in-process run on a fresh thread. */
export async function baselineOp(): Promise<Record<string, number>> {
  const invoke = await loadBaseline();
  const t0 = performance.now();
  await invokeOnNewThread(invoke);
  return { latency: performance.now() - t0 };
}
