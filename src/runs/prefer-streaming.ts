// A callback handler that asks chat models to stream, as the official server's runs always do: it runs every graph
// through `streamEvents`, whose handler prefers streaming, so a model's message as a node returns it is the
// aggregate of its chunks (an id `run-<model run id>`, `tool_call_chunks`), whatever the stream modes asked for.
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";

/**
 * Does nothing but say it prefers streaming (`lc_prefer_streaming`, which `BaseChatModel` looks for among the
 * handlers of its run). It ignores every callback, so a run that streams neither `messages` nor `events` pays for
 * the model's chunks and their aggregation (as the official server does), and for the callback managers LangGraph
 * makes once a run has a handler, but not for a call to this one.
 */
export class PreferStreaming extends BaseCallbackHandler {
  name = "hangar_prefer_streaming";
  lc_prefer_streaming = true;

  constructor() {
    super({
      _awaitHandler: true,
      ignoreLLM: true,
      ignoreChain: true,
      ignoreAgent: true,
      ignoreRetriever: true,
      ignoreCustomEvent: true,
    });
  }
}
