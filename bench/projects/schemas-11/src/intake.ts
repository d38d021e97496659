// Benchmark project: a zod v4 state with messages (its schemas come from zod at run time, not from its types).
import { MessagesZodMeta, START, StateGraph } from "@langchain/langgraph";
import { registry } from "@langchain/langgraph/zod";
import type { BaseMessage } from "@langchain/core/messages";
import { z } from "zod";
import { model } from "./model.js";

const State = z.object({
  messages: z.custom<BaseMessage[]>().register(registry, MessagesZodMeta),
  customer: z.object({
    name: z.string(),
    email: z.string().email(),
    tier: z.enum(["free", "pro", "enterprise"]),
  }),
  priority: z.number().int().min(1).max(5),
});

export const graph = new StateGraph(State)
  .addNode("triage", async (s) => ({ messages: [await model.invoke(s.messages)], priority: 3 }))
  .addEdge(START, "triage")
  .compile();
