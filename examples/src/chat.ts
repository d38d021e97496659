// Example chat graph: one "agent" node answering over MessagesAnnotation with a fake chat model (no key).
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

const model = new FakeListChatModel({
  responses: [
    `${process.env.HANGAR_EXAMPLE_GREETING ?? "Hello"}! I am a fake model, so I say the same few things.`,
    "Streaming works token by token, and every turn is saved in the thread.",
  ],
}).withConfig({ tags: ["chat_model"] });

async function agent(state: typeof MessagesAnnotation.State) {
  const reply = await model.invoke(state.messages);
  return { messages: [reply] };
}

export const graph = new StateGraph(MessagesAnnotation)
  .addNode("agent", agent)
  .addEdge(START, "agent")
  .addEdge("agent", END)
  .compile();
