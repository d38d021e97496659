// Builds a run's execution arguments (config, context, metadata, stream options) from the request and assistant.
import type { RunCreateStatefulT, RunCreateStatelessT } from "./schemas.js";
import type { Assistant, Json, Thread } from "../storage/types.js";
import type { RunKwargs } from "./executor.js";
import { isObject } from "../lib/objects.js";

/** The configurable keys that name the run's user (as the API's guard writes them). */
const AUTH_KEYS = ["langgraph_auth_user", "langgraph_auth_user_id", "langgraph_auth_permissions"];

/**
 * A run's metadata as the official server records it: the assistant's metadata, then its thread's (which names
 * the graph and assistant of the run), then the run's own; a later layer wins a key. It is the run record's
 * `metadata` and the graph's `config.metadata` (so checkpoints carry it and history filters find it).
 */
export function runMetadata(
  assistant: Assistant,
  thread: Thread | null,
  body: { metadata?: Json | null },
): Json {
  return {
    ...(assistant.metadata ?? {}),
    ...(thread
      ? { ...thread.metadata, graph_id: assistant.graph_id, assistant_id: assistant.assistant_id }
      : {}),
    ...(body.metadata ?? {}),
  };
}

/** A config's `configurable` without the keys that name a user (langgraph_auth_*). */
function withoutUser(config: Json | undefined): Json {
  const configurable = { ...(isObject(config?.configurable) ? config.configurable : {}) };
  for (const k of AUTH_KEYS) delete configurable[k];
  return configurable;
}

/** Keys of a configurable that place a run (which checkpoint, which run): never carried over from a thread. */
const POSITION_KEYS = ["checkpoint_id", "checkpoint_ns", "checkpoint_map", "thread_id", "run_id"];
function withoutPosition(configurable: Json): Json {
  for (const k of POSITION_KEYS) delete configurable[k];
  return configurable;
}

/**
 * A run's execution arguments, recorded as its `kwargs`. Its configurable is, as on the official server, the
 * assistant's, then the thread's (what earlier runs on it were given: a resume keeps the first run's keys), then
 * the request's, then the run's identifiers; its `config.metadata` is the run's metadata (runMetadata).
 */
export function buildKwargs(
  body: RunCreateStatefulT | RunCreateStatelessT,
  assistant: Assistant,
  runId: string,
  thread: Thread | null,
): RunKwargs {
  const metadata = runMetadata(assistant, thread, body);
  const aConfig = assistant.config as Json;
  const bConfig = (body.config ?? {}) as Json;
  const threadId = thread?.thread_id ?? null;
  // Who runs the graph (langgraph_auth_*) comes only from the request's config, where the API wrote the
  // authenticated user over whatever the client sent; an assistant's or a thread's config cannot name a user.
  const configurable: Json = {
    ...withoutUser(aConfig),
    ...withoutPosition(withoutUser(thread?.config as Json | undefined)),
    ...(isObject(bConfig.configurable) ? bConfig.configurable : {}),
    run_id: runId,
    graph_id: assistant.graph_id,
    assistant_id: assistant.assistant_id,
  };
  // The user a run is for, as the official server names it: the request's or an earlier layer's, else the caller.
  if (configurable.user_id === undefined && configurable.langgraph_auth_user_id !== undefined) {
    configurable.user_id = configurable.langgraph_auth_user_id;
  }
  if (threadId) configurable.thread_id = threadId;
  if ("checkpoint" in body && body.checkpoint) {
    for (const [k, v] of Object.entries(body.checkpoint))
      if (v != null && k !== "thread_id") configurable[k] = v;
  }
  if ("checkpoint_id" in body && body.checkpoint_id) configurable.checkpoint_id = body.checkpoint_id;
  const tags = [...((aConfig.tags as string[]) ?? []), ...((bConfig.tags as string[]) ?? [])];
  const recursion = (bConfig.recursion_limit ?? aConfig.recursion_limit) as number | undefined;
  const modes = Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode];
  const context = { ...(assistant.context ?? {}), ...(body.context ?? {}) };
  return {
    input: body.input,
    command: body.command ?? null,
    config: { ...aConfig, ...bConfig, configurable, tags, recursion_limit: recursion, metadata },
    context: Object.keys(context).length ? context : undefined,
    stream_mode: [...new Set(modes)],
    subgraphs: body.stream_subgraphs,
    interrupt_before: body.interrupt_before,
    interrupt_after: body.interrupt_after,
    durability: body.durability,
    stream_resumable: body.stream_resumable,
    webhook: body.webhook ?? null,
  };
}
