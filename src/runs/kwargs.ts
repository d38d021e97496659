// Builds a run's execution arguments (config, context, metadata, stream options) from the request and assistant.
import { randomUUID } from "node:crypto";
import type { RunBody, RunCreateStatelessT } from "./schemas.js";
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
  body: RunBody | RunCreateStatelessT,
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
  // A stateless run names a thread nobody stores, as the official server's temporary thread (a node reading its
  // config's thread_id, its messages' metadata, see one).
  configurable.thread_id = threadId ?? randomUUID();
  // The checkpoint to start from, every key of it as given (a null `checkpoint_map` too, as the official server
  // assigns it), but its thread: the run's is the thread's.
  if ("checkpoint" in body && body.checkpoint) {
    for (const [k, v] of Object.entries(body.checkpoint))
      if (v !== undefined && k !== "thread_id") configurable[k] = v;
  }
  if ("checkpoint_id" in body && body.checkpoint_id) configurable.checkpoint_id = body.checkpoint_id;
  const tags = [...((aConfig.tags as string[]) ?? []), ...((bConfig.tags as string[]) ?? [])];
  const recursion = (bConfig.recursion_limit ?? aConfig.recursion_limit) as number | undefined;
  const modes = Array.isArray(body.stream_mode) ? body.stream_mode : [body.stream_mode];
  const config: RunKwargs["config"] = { ...aConfig, ...bConfig, configurable, metadata };
  if (tags.length) config.tags = tags;
  else delete config.tags;
  if (recursion !== undefined) config.recursion_limit = recursion;
  const feedback = body.feedback_keys?.length ? body.feedback_keys : undefined;
  const onCompletion = "on_completion" in body ? body.on_completion : undefined;
  // The official run record's kwargs, field by field (fields it would leave undefined are left out).
  return {
    input: body.input,
    command: body.command,
    config,
    context: { ...(assistant.context ?? {}), ...(body.context ?? {}) },
    stream_mode: [...new Set(modes)],
    interrupt_before: body.interrupt_before,
    interrupt_after: body.interrupt_after,
    webhook: body.webhook ?? undefined,
    feedback_keys: feedback,
    // A run with no thread whose thread goes when it ends.
    temporary: threadId === null && (onCompletion ?? "delete") === "delete",
    subgraphs: body.stream_subgraphs,
    resumable: body.stream_resumable,
    // The official dev server records no durability (it does not honour one); Hangar keeps one that is not the
    // default, so the record says how the run checkpoints.
    durability: body.durability === DEFAULT_DURABILITY ? undefined : body.durability,
  };
}

/** How a run checkpoints when its request does not say. */
export const DEFAULT_DURABILITY = "async";

/**
 * Whether a run's events can be joined from the start (`stream_resumable` of its request): `resumable` in its
 * kwargs, or `stream_resumable` in records written by earlier Hangar versions.
 */
export const isResumable = (kwargs: unknown): boolean => {
  const k = (kwargs ?? {}) as { resumable?: unknown; stream_resumable?: unknown };
  return Boolean(k.resumable ?? k.stream_resumable);
};

/** Whether a run streams `values` events (then a join of it answers the last of them, as officially). */
export const streamsValues = (kwargs: unknown): boolean => {
  const modes = (kwargs as { stream_mode?: unknown } | null)?.stream_mode;
  return Array.isArray(modes) && modes.includes("values");
};

/** A run's durability: the one it recorded, else the default (records leave the default out). */
export const durabilityOf = (kwargs: RunKwargs): "sync" | "async" | "exit" =>
  kwargs.durability ?? DEFAULT_DURABILITY;

/** The user a run acts for (its langgraph_auth_user, set from the request that made it); null without custom auth. */
export function runOwner(kwargs: { config?: unknown } | undefined): unknown {
  const config = kwargs?.config as { configurable?: Record<string, unknown> } | undefined;
  return config?.configurable?.langgraph_auth_user ?? null;
}
