// The request bodies that create runs (zod): owned by runs/, which takes them as its input; api/schemas.ts
// shares them with the routes and the OpenAPI document.
import { z } from "zod";
import { MAX_AFTER_SECONDS } from "../lib/json-limits.js";

export const Obj = z.record(z.string(), z.unknown());
// A RunnableConfig: the keys the official API types are checked (a wrong type was a 500 when merged into a
// run's config); any other key is kept as sent.
export const RunnableConfig = z
  .object({
    tags: z.array(z.string()).nullable().optional(),
    recursion_limit: z.number().int().nullable().optional(),
    configurable: Obj.nullable().optional(),
  })
  .passthrough();

// A subgraph task's checkpoint (state.tasks[].checkpoint) names only its namespace: its id may be null.
export const CheckpointRef = z.object({
  checkpoint_id: z.string().nullable().optional(),
  checkpoint_ns: z.string().nullable().optional(),
  checkpoint_map: Obj.nullable().optional(),
  thread_id: z.string().optional(),
});

export const STREAM_MODES = [
  "values",
  "messages",
  "messages-tuple",
  "tasks",
  "checkpoints",
  "updates",
  "events",
  "debug",
  "custom",
] as const;
export const StreamMode = z.enum(STREAM_MODES);
export type StreamModeName = z.infer<typeof StreamMode>;
export const Interrupts = z.union([z.literal("*"), z.array(z.string())]);
export const Command = z.object({
  update: z.unknown().optional(),
  resume: z.unknown().optional(),
  goto: z.unknown().optional(),
});
const RunBase = {
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  command: Command.nullable().optional(),
  metadata: Obj.nullable().optional(),
  config: RunnableConfig.nullable().optional(),
  context: Obj.nullable().optional(),
  webhook: z.string().nullable().optional(),
  interrupt_before: Interrupts.nullable().optional(),
  interrupt_after: Interrupts.nullable().optional(),
  stream_mode: z
    .union([StreamMode, z.array(StreamMode)], {
      error: `must be one of ${STREAM_MODES.join(", ")}, or a list of them`,
    })
    .default(["values"]),
  stream_subgraphs: z.boolean().default(false),
  stream_resumable: z.boolean().default(false),
  feedback_keys: z.array(z.string()).nullable().optional(),
  on_disconnect: z.enum(["cancel", "continue"]).default("continue"),
  // A delay the server can honour: one timer (2^31-1 ms, ~24.8 days) at most; beyond it a 422.
  after_seconds: z
    .number()
    .min(0)
    .max(MAX_AFTER_SECONDS, { error: `must be at most ${MAX_AFTER_SECONDS} seconds (about 24.8 days)` })
    .nullable()
    .optional(),
  checkpoint_during: z.boolean().optional(),
  durability: z.enum(["sync", "async", "exit"]).default("async"),
};
export const RunCreateStateful = z.object({
  ...RunBase,
  checkpoint: CheckpointRef.nullable().optional(),
  checkpoint_id: z.string().nullable().optional(),
  multitask_strategy: z.enum(["reject", "rollback", "interrupt", "enqueue"]).default("enqueue"),
  if_not_exists: z.enum(["create", "reject"]).default("reject"),
});
export const RunCreateStateless = z.object({
  ...RunBase,
  on_completion: z.enum(["delete", "keep"]).default("delete"),
  if_not_exists: z.enum(["create", "reject"]).default("create"),
});
export type RunCreateStatefulT = z.infer<typeof RunCreateStateful>;
export type RunCreateStatelessT = z.infer<typeof RunCreateStateless>;

/** The stream mode of protocol v2's runs: set by the server for its own runs, refused from a client (not a StreamMode). */
export type ProtocolMode = "protocol";
/** A mode a client may ask for, or the protocol-v2 mode the server sets for its own runs. */
export type RunStreamMode = StreamModeName | ProtocolMode;
/**
 * A stateful run's body as the run service takes it: one a client sent (RunCreateStateful, which admits no
 * `protocol` mode), or one the server makes for its own runs (protocol v2).
 */
export type RunBody = Omit<RunCreateStatefulT, "stream_mode"> & {
  stream_mode: RunStreamMode | RunStreamMode[];
};
