// Benchmark project: LangGraph's prebuilt createReactAgent with a typed tool.
import { tool } from "@langchain/core/tools";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { model } from "./model.js";

const weather = tool(async ({ city }) => `sunny in ${city}`, {
  name: "weather",
  description: "The weather in a city",
  schema: z.object({ city: z.string() }),
});

export const graph = createReactAgent({ llm: model, tools: [weather] });
