// Executes one run of a graph and turns LangGraph's stream into the Agent Server's named events.
import { Command, Send } from "@langchain/langgraph";
import type { AnyGraph } from "../graphs/registry.js";
import { RawJson, serializeError, toJson } from "../lib/serde.js";
import type { Logger } from "../lib/logger.js";
import { configToCheckpoint, taskConfigToCheckpoint } from "./state.js";
import { durabilityOf } from "./kwargs.js";
import { PreferStreaming } from "./prefer-streaming.js";
import { graphStreaming } from "./stream-modes.js";
import { PROTOCOL_EVENT, ProtocolNormalizer, protocolEvents, rootValues } from "./protocol-run.js";

/**
 * A run's execution arguments, its record's `kwargs`, in the official server's shape. Records written by earlier
 * Hangar versions have `stream_resumable` for `resumable` (read with isResumable), nulls for an absent `command` or
 * `webhook`, `durability` always, no `temporary`, and possibly `metadata` beside `config`.
 */
export interface RunKwargs {
  input?: unknown;
  command?: { update?: unknown; resume?: unknown; goto?: unknown } | null;
  config: {
    configurable: Record<string, unknown>;
    tags?: string[];
    recursion_limit?: number;
    [k: string]: unknown;
  };
  context?: Record<string, unknown>;
  /** The run's metadata in records written before it moved to `config.metadata` (read by recovered runs). */
  metadata?: Record<string, unknown>;
  stream_mode: string[];
  subgraphs: boolean;
  interrupt_before?: "*" | string[] | null;
  interrupt_after?: "*" | string[] | null;
  /** Left out when it is the default (durabilityOf). */
  durability?: "sync" | "async" | "exit";
  /** The request's `stream_resumable` (isResumable). */
  resumable?: boolean;
  /** What earlier Hangar versions recorded for `resumable`. */
  stream_resumable?: boolean;
  /** A run with no thread, which is deleted when the run ends. */
  temporary?: boolean;
  webhook?: string | null;
  feedback_keys?: string[];
}

export interface RunOutcome {
  status: "success" | "error" | "interrupted";
  /** Last full state of the root graph seen in the stream. */
  values: unknown;
  error?: { error: string; message: string };
  /**
   * The root graph's last checkpoint as LangGraph's `checkpoints` mode gave it (live objects: read on the thread that
   * ran the graph, never sent on), when the run succeeded; see runs/end-state.ts.
   */
  lastCheckpoint?: CheckpointEvent;
}

/** A payload of LangGraph's `checkpoints` stream mode (the fields read here). */
export interface CheckpointEvent {
  config?: { configurable?: Record<string, unknown> };
  values: unknown;
  next: string[];
  tasks: unknown[];
}

type Emit = (event: string, data: unknown) => void;

function toGoto(goto: unknown): unknown {
  const one = (g: unknown) =>
    typeof g === "object" && g !== null && "node" in g ? new Send((g as any).node, (g as any).input) : g;
  return Array.isArray(goto) ? goto.map(one) : one(goto);
}

/** The run's metadata: `config.metadata`, as the official run record keeps it (or where older records kept it). */
export const runConfigMetadata = (kwargs: RunKwargs): Record<string, unknown> =>
  (kwargs.config.metadata as Record<string, unknown> | undefined) ?? kwargs.metadata ?? {};

function toInput(kwargs: RunKwargs): unknown {
  if (kwargs.command) {
    const { update, resume, goto } = kwargs.command;
    return new Command({
      ...(update !== undefined && update !== null ? { update: update as any } : {}),
      ...(resume !== undefined ? { resume } : {}),
      ...(goto !== undefined && goto !== null ? { goto: toGoto(goto) as any } : {}),
    });
  }
  return kwargs.input ?? null;
}

/**
 * Drops internal `__pregel_*` keys, callbacks and the run name (a subgraph's config carries it) from a config
 * before it goes on the wire, as the official server sends it.
 */
function publicConfig(config: any): unknown {
  if (!config?.configurable) return config ?? null;
  const configurable = Object.fromEntries(
    Object.entries(config.configurable).filter(([k]) => !k.startsWith("__")),
  );
  const { callbacks: _callbacks, run_name: _runName, ...rest } = config;
  return { ...rest, configurable };
}

function taskPayload(task: any): any {
  const checkpoint = task?.state?.configurable ? taskConfigToCheckpoint(task.state) : null;
  if (!checkpoint) return task;
  const { state: _s, ...rest } = task;
  return { ...rest, checkpoint };
}

function checkpointPayload(p: any): any {
  const { parentConfig, ...rest } = p;
  return {
    ...rest,
    config: publicConfig(p.config),
    // A first checkpoint has no parent: the key is left out, as officially.
    ...(parentConfig ? { parent_config: publicConfig(parentConfig) } : {}),
    checkpoint: configToCheckpoint(p.config),
    parent_checkpoint: configToCheckpoint(parentConfig),
    tasks: (p.tasks ?? []).map(taskPayload),
  };
}

/** The root graph's name in protocol v2's lifecycle events, as the official server names it: the run's graph id. */
const protocolGraphName = (kwargs: RunKwargs): string => {
  const configurable = (kwargs.config.configurable ?? {}) as Record<string, unknown>;
  return String(configurable.graph_id ?? configurable.assistant_id ?? "root");
};

/** Chat models' stream metadata as JSON, by the metadata object (see streamMetaJson). */
const metaJsonCache = new WeakMap<object, string>();

/**
 * A `messages` event's metadata as JSON, with `service_node` as the official server adds it: serialized once per
 * model call, as LangGraph gives every token of a call the same metadata object (its messages handler keeps one per
 * call and never changes it), and a streamed answer is dozens of tokens.
 */
function streamMetaJson(meta: Record<string, unknown> | undefined): string {
  if (!meta) return toJson({ service_node: undefined });
  let json = metaJsonCache.get(meta);
  if (json === undefined) {
    json = toJson({ ...meta, service_node: meta.langgraph_node });
    metaJsonCache.set(meta, json);
  }
  return json;
}

export async function executeRun(
  graph: AnyGraph,
  kwargs: RunKwargs,
  runId: string,
  signal: AbortSignal,
  emit: Emit,
  log: Logger,
): Promise<RunOutcome> {
  const modes = new Set(kwargs.stream_mode);
  const { graphModes: libModes, callbacks: wantsEvents, protocol } = graphStreaming(modes);
  const graphName = protocol ? protocolGraphName(kwargs) : "";
  const sub = kwargs.subgraphs;
  const options: Record<string, unknown> = {
    configurable: kwargs.config.configurable,
    metadata: runConfigMetadata(kwargs),
    tags: kwargs.config.tags,
    recursionLimit: kwargs.config.recursion_limit,
    context: kwargs.context,
    streamMode: [...libModes],
    subgraphs: sub,
    signal,
    durability: durabilityOf(kwargs),
  };
  // The official server runs every graph through streamEvents, whose handler makes chat models stream; LangGraph's
  // `messages` handler does the same, and so, when neither is there, does a handler that only asks for it.
  if (!wantsEvents && !libModes.has("messages") && !protocol) options.callbacks = [new PreferStreaming()];
  if (kwargs.interrupt_before) options.interruptBefore = kwargs.interrupt_before;
  if (kwargs.interrupt_after) options.interruptAfter = kwargs.interrupt_after;
  for (const k of Object.keys(options)) if (options[k] === undefined) delete options[k];

  let lastValues: unknown = undefined;
  let lastCheckpoint: CheckpointEvent | undefined;
  const name = (mode: string, ns: string[]) => (sub && ns.length ? `${mode}|${ns.join("|")}` : mode);

  const tasks = new TaskNames();
  const handle = (ns: string[], mode: string, data: any) => {
    if (mode === "values" && ns.length === 0) lastValues = data;
    if (mode === "checkpoints" && ns.length === 0 && Array.isArray(data?.next)) lastCheckpoint = data;
    if (mode === "tasks") tasks.see(ns, data);
    if (mode === "messages") {
      if (!modes.has("messages-tuple")) return;
      const [chunk, meta] = data as [unknown, Record<string, unknown> | undefined];
      emit(name("messages", ns), new RawJson(`[${toJson(chunk)},${streamMetaJson(meta)}]`));
      return;
    }
    if (!modes.has(mode)) return;
    let out = data;
    if (mode === "debug") {
      if (data?.type === "checkpoint") out = { ...data, payload: checkpointPayload(data.payload) };
      else if (data?.type === "task_result" || data?.type === "task")
        out = { ...data, payload: taskPayload(data.payload) };
    } else if (mode === "checkpoints") {
      out = checkpointPayload(data);
    } else if (mode === "tasks") {
      out = taskPayload(data);
    }
    emit(name(mode, ns), out);
  };

  const split = (chunk: any): [string[], string, unknown] => (sub ? chunk : [[], chunk[0], chunk[1]]);

  try {
    const input = toInput(kwargs);
    if (protocol) {
      // Protocol v2: LangGraph's protocol events, each logged as one `protocol` event.
      const normalizer = new ProtocolNormalizer(graphName);
      for await (const ev of await protocolEvents(graph, input, options, runId)) {
        const values = rootValues(ev);
        if (values !== undefined) lastValues = values;
        for (const out of normalizer.normalize(ev)) {
          if (out.method === "tasks") tasks.see(out.params.namespace, out.params.data as any);
          emit(PROTOCOL_EVENT, out);
        }
      }
    } else if (!wantsEvents) {
      const stream = await graph.stream(input as any, options as any);
      for await (const chunk of stream) {
        const [ns, mode, data] = split(chunk);
        handle(ns, mode, data);
      }
    } else {
      await streamWithEvents(graph, input, options, runId, modes, sub, handle, emit, split);
    }
    return { status: "success", values: lastValues, lastCheckpoint };
  } catch (e) {
    if (signal.aborted) return { status: "interrupted", values: lastValues };
    const node = tasks.failed(e);
    const graphId = log.bindings().graph_id as string | undefined;
    const where = `${node ? `node "${node}"` : "a node"} of graph "${graphId ?? "?"}"`;
    log.error({ err: e, node }, `${where} threw: ${(e as Error)?.message ?? String(e)}`);
    const error = serializeError(e);
    emit("error", error);
    if (protocol) {
      emit(PROTOCOL_EVENT, {
        type: "event",
        method: "lifecycle",
        params: {
          namespace: [],
          timestamp: Date.now(),
          data: { event: "failed", graph_name: graphName, error: error.message },
        },
      });
    }
    return { status: "error", values: lastValues, error };
  }
}

/** The nodes running or failed, by task id (from the "tasks" stream), to name the one whose error ends a run. */
class TaskNames {
  private running = new Map<string, string>();

  see(
    ns: string[],
    data: { id?: string; name?: string; result?: unknown; error?: unknown } | undefined,
  ): void {
    if (!data?.id || !data.name) return;
    const name = [...ns.map((n) => n.split(":")[0]), data.name].join("/");
    // A task that failed stays: its error reaches the stream after its result.
    if (!("result" in data)) this.running.set(data.id, name);
    else if (!data.error) this.running.delete(data.id);
  }

  /** The node whose task threw `e`: by the task id LangGraph sets on it, else the ones not finished. */
  failed(e: unknown): string | undefined {
    const id = (e as { pregelTaskId?: unknown } | null)?.pregelTaskId;
    const named = typeof id === "string" ? this.running.get(id) : undefined;
    if (named) return named;
    const open = [...new Set(this.running.values())];
    return open.length ? open.join(", ") : undefined;
  }
}

/** The `events` and `messages` modes need LangChain's callback events, so they run through streamEvents. */
async function streamWithEvents(
  graph: AnyGraph,
  input: unknown,
  options: Record<string, unknown>,
  runId: string,
  modes: Set<string>,
  sub: boolean,
  handle: (ns: string[], mode: string, data: any) => void,
  emit: Emit,
  split: (chunk: any) => [string[], string, unknown],
): Promise<void> {
  const partial = new Map<string, any>();
  const completed = new Set<string>();
  const events = graph.streamEvents(input as any, { ...(options as any), version: "v2", runId });
  for await (const ev of events as unknown as AsyncIterable<any>) {
    if (ev.tags?.includes("langsmith:hidden")) continue;
    const isOwnStream = ev.event === "on_chain_stream" && ev.run_id === runId;
    if (isOwnStream) {
      const [ns, mode, data] = split(ev.data.chunk);
      handle(ns, mode, data);
      if (modes.has("messages") && mode === "values" && ns.length === 0) {
        const msgs = (data as any)?.messages;
        const fresh = (Array.isArray(msgs) ? msgs : msgs ? [msgs] : []).filter(
          (m: any) => m?.id && !completed.has(m.id),
        );
        for (const m of fresh) completed.add(m.id);
        if (fresh.length) emit("messages/complete", fresh);
      }
    } else if (modes.has("events")) {
      emit("events", ev);
    }
    if (modes.has("messages") && ev.event === "on_chat_model_stream" && !ev.tags?.includes("nostream")) {
      const chunk = ev.data.chunk;
      if (!chunk?.id) continue;
      const prev = partial.get(chunk.id);
      if (!prev) {
        emit("messages/metadata", { [chunk.id]: { metadata: ev.metadata } });
        partial.set(chunk.id, chunk);
      } else {
        partial.set(chunk.id, prev.concat(chunk));
      }
      emit("messages/partial", [partial.get(chunk.id)]);
    }
  }
}
