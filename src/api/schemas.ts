// Request schemas (zod): one source for validation and for the OpenAPI document.
import { z } from "zod";
import {
  CheckpointRef,
  Interrupts,
  Obj,
  RunCreateStateless,
  RunnableConfig,
  StreamMode,
} from "../runs/schemas.js";

// The run bodies are runs/' input types; the routes and the OpenAPI document take them from here too.
export {
  CheckpointRef,
  Command,
  Obj,
  RunCreateStateful,
  RunCreateStateless,
  RunnableConfig,
  STREAM_MODES,
  StreamMode,
  type RunCreateStatefulT,
  type RunCreateStatelessT,
  type StreamModeName,
} from "../runs/schemas.js";

// Any UUID-shaped id (any version and variant nibble): LangGraph's own checkpoint ids are uuid6 ones such as
// 1f0...-...-6...-ffff-..., and an id nobody has is a 404 later, never a 422 here.
export const Uuid = z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
  error: "must be a UUID",
});

export const ThreadIdParams = z.object({ thread_id: Uuid });
export const AssistantIdParams = z.object({ assistant_id: z.string().min(1) });
export const RunIdParams = z.object({ thread_id: Uuid, run_id: Uuid });

const SortOrder = z.enum(["asc", "desc"]);
// A name searched for as a substring: bounded so the pattern stays within SQLite's LIKE limit (50,000 bytes).
const NameFilter = z.string().max(10_000);
const Limit = (def: number) => z.number().int().min(1).max(1000).default(def);
const Offset = z.number().int().min(0).default(0);

// Assistants
export const AssistantCreate = z.object({
  assistant_id: Uuid.optional(),
  graph_id: z.string().min(1),
  config: RunnableConfig.optional(),
  context: Obj.optional(),
  metadata: Obj.optional(),
  if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});
export const AssistantPatch = z.object({
  graph_id: z.string().min(1).optional(),
  config: RunnableConfig.optional(),
  context: Obj.optional(),
  metadata: Obj.optional(),
  name: z.string().optional(),
  description: z.string().nullable().optional(),
});
export const AssistantSearch = z.object({
  metadata: Obj.optional(),
  graph_id: z.string().optional(),
  name: NameFilter.optional(),
  limit: Limit(10),
  offset: Offset,
  sort_by: z.enum(["assistant_id", "graph_id", "name", "created_at", "updated_at"]).optional(),
  sort_order: SortOrder.optional(),
  select: z.array(z.string()).optional(),
});
export const AssistantCount = z.object({
  metadata: Obj.optional(),
  graph_id: z.string().optional(),
  name: NameFilter.optional(),
});
export const AssistantVersions = z.object({ metadata: Obj.optional(), limit: Limit(10), offset: Offset });
export const AssistantLatest = z.object({ version: z.number().int().min(1) });
// Query-string booleans: true/false, 1/0, in any case.
const BoolQuery = z.preprocess((v) => {
  const t = typeof v === "string" ? v.toLowerCase() : v;
  return t === "true" || t === "1" ? true : t === "false" || t === "0" ? false : v;
}, z.boolean());
export const AssistantDeleteQuery = z.object({ delete_threads: BoolQuery.default(false) });
export const GraphQuery = z.object({
  xray: z
    .preprocess(
      (v) => (v === "true" ? true : v === "false" ? false : /^\d+$/.test(String(v)) ? Number(v) : v),
      z.union([z.boolean(), z.number().int()]),
    )
    .optional(),
});
export const SubgraphQuery = z.object({ recurse: BoolQuery.optional() });

// Threads
export const Superstep = z.object({
  updates: z.array(
    z.object({
      values: z.unknown().optional(),
      command: Obj.nullable().optional(),
      as_node: z.string().min(1),
    }),
  ),
});
// A TTL in minutes whose expiry is a date (JavaScript and PostgreSQL): at most 100 years.
const MAX_TTL_MINUTES = 100 * 365 * 24 * 60;
const TtlMinutes = z
  .number()
  .positive()
  .max(MAX_TTL_MINUTES, { error: `must be at most ${MAX_TTL_MINUTES} minutes (100 years)` });
export const Ttl = z.object({
  strategy: z.enum(["delete", "keep_latest"]).default("delete"),
  ttl: TtlMinutes,
});
export const ThreadPrune = z.object({
  thread_ids: z.array(Uuid).min(1).max(1000),
  strategy: z.enum(["delete", "keep_latest"]).default("delete"),
});
export const ThreadCreate = z.object({
  thread_id: Uuid.optional(),
  metadata: Obj.optional(),
  graph_id: z.string().min(1).optional(),
  if_exists: z.enum(["raise", "do_nothing"]).default("raise"),
  supersteps: z.array(Superstep).optional(),
  ttl: Ttl.nullable().optional(),
});
export const ThreadPatch = z.object({ metadata: Obj.optional(), ttl: Ttl.nullable().optional() });
export const ThreadStatus = z.enum(["idle", "busy", "interrupted", "error"]);
export const ThreadSearch = z.object({
  ids: z.array(Uuid).optional(),
  metadata: Obj.optional(),
  values: Obj.optional(),
  status: ThreadStatus.optional(),
  limit: Limit(10),
  offset: Offset,
  sort_by: z.enum(["thread_id", "status", "created_at", "updated_at", "state_updated_at"]).optional(),
  sort_order: SortOrder.optional(),
  select: z.array(z.string()).optional(),
  extract: Obj.optional(),
});
export const ThreadCount = z.object({
  ids: z.array(Uuid).optional(),
  metadata: Obj.optional(),
  values: Obj.optional(),
  status: ThreadStatus.optional(),
});
export const StateQuery = z.object({ subgraphs: BoolQuery.optional() });
export const StateCheckpointBody = z.object({ checkpoint: CheckpointRef, subgraphs: z.boolean().optional() });
export const StateUpdate = z.object({
  values: z.unknown().optional(),
  as_node: z.string().optional(),
  checkpoint: CheckpointRef.optional(),
  checkpoint_id: z.string().optional(),
});
// The SDK sends `before` as a RunnableConfig ({configurable: {checkpoint_id}}); the OpenAPI document as a
// checkpoint object or an id. All three are accepted.
const unwrapConfigurable = (v: unknown) =>
  typeof v === "object" && v !== null && "configurable" in v
    ? (v as { configurable: unknown }).configurable
    : v;
export const HistoryBody = z.object({
  limit: Limit(10),
  before: z.preprocess(unwrapConfigurable, z.union([z.string(), CheckpointRef]).nullable().optional()),
  metadata: Obj.nullable().optional(),
  checkpoint: CheckpointRef.nullable().optional(),
});
export const HistoryQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  before: z.string().optional(),
});

// Runs (the bodies that create one: runs/schemas.ts)
export const RunListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(10),
  offset: z.coerce.number().int().min(0).default(0),
  status: z.enum(["pending", "running", "error", "success", "timeout", "interrupted"]).optional(),
});

export const CancelQuery = z.object({
  wait: BoolQuery.default(false),
  action: z.enum(["interrupt", "rollback"]).default("interrupt"),
});
export const CancelManyQuery = z.object({ action: z.enum(["interrupt", "rollback"]).default("interrupt") });
export const CancelManyBody = z.object({
  thread_id: Uuid.optional(),
  run_ids: z.array(Uuid).optional(),
  status: z.enum(["pending", "running", "all"]).optional(),
});
export const RunBatch = z.array(RunCreateStateless).min(1).max(1000);
export const JoinQuery = z.object({ cancel_on_disconnect: BoolQuery.default(false) });
export const JoinStreamQuery = z.object({
  stream_mode: z.union([StreamMode, z.array(StreamMode)]).optional(),
  cancel_on_disconnect: BoolQuery.default(false),
});
const ThreadStreamMode = z.enum(["run_modes", "lifecycle", "state_update"]);
// The OpenAPI document names the parameter `stream_modes`; the SDK's threads.joinStream sends `stream_mode`.
export const ThreadStreamQuery = z.object({
  stream_modes: z.union([ThreadStreamMode, z.array(ThreadStreamMode)]).optional(),
  stream_mode: z.union([ThreadStreamMode, z.array(ThreadStreamMode)]).optional(),
});

// Store
const Label = z
  .string()
  .min(1)
  .refine((s) => !s.includes("."), { message: 'namespace labels cannot contain "."' });
export const StorePut = z.object({
  namespace: z.array(Label).min(1),
  key: z.string().min(1),
  value: Obj,
  index: z
    .union([z.literal(false), z.array(z.string())])
    .nullable()
    .optional(),
  ttl: TtlMinutes.nullable().optional(),
});
export const StoreDelete = z.object({ namespace: z.array(Label).default([]), key: z.string().min(1) });
export const StoreGetQuery = z.object({
  namespace: z.union([z.string(), z.array(z.string())]).optional(),
  key: z.string().min(1),
  refresh_ttl: BoolQuery.optional(),
});
export const StoreSearch = z.object({
  namespace_prefix: z.array(Label).nullable().optional(),
  filter: Obj.nullable().optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  query: z.string().nullable().optional(),
  refresh_ttl: z.boolean().nullable().optional(),
});
export const StoreNamespaces = z.object({
  prefix: z.array(z.string()).optional(),
  suffix: z.array(z.string()).optional(),
  max_depth: z.number().int().min(1).optional(),
  limit: z.number().int().min(1).max(1000).default(100),
  offset: z.number().int().min(0).default(0),
});

// Crons
const CronRun = {
  schedule: z.string().min(1),
  timezone: z.string().optional(),
  end_time: z.iso.datetime({ offset: true }).nullable().optional(),
  assistant_id: z.string().min(1),
  input: z.unknown().optional(),
  metadata: Obj.optional(),
  config: RunnableConfig.optional(),
  context: Obj.optional(),
  webhook: z.string().nullable().optional(),
  interrupt_before: Interrupts.nullable().optional(),
  interrupt_after: Interrupts.nullable().optional(),
  enabled: z.boolean().default(true),
  stream_mode: z.union([StreamMode, z.array(StreamMode)]).optional(),
  stream_subgraphs: z.boolean().optional(),
  stream_resumable: z.boolean().optional(),
  durability: z.enum(["sync", "async", "exit"]).optional(),
};
export const CronCreate = z.object({
  ...CronRun,
  on_run_completed: z.enum(["delete", "keep"]).default("delete"),
});
export const ThreadCronCreate = z.object({
  ...CronRun,
  multitask_strategy: z.enum(["reject", "rollback", "interrupt", "enqueue"]).default("enqueue"),
});
export const CronPatch = z
  .object(CronRun)
  .omit({ assistant_id: true })
  .partial()
  .extend({ on_run_completed: z.enum(["delete", "keep"]).optional(), enabled: z.boolean().optional() });
export const CronSearch = z.object({
  assistant_id: z.string().optional(),
  thread_id: Uuid.optional(),
  enabled: z.boolean().optional(),
  metadata: Obj.optional(),
  limit: z.number().int().min(1).max(1000).default(10),
  offset: z.number().int().min(0).default(0),
  sort_by: z
    .enum(["cron_id", "assistant_id", "thread_id", "next_run_date", "end_time", "created_at", "updated_at"])
    .default("created_at"),
  sort_order: z.enum(["asc", "desc"]).default("desc"),
  select: z.array(z.string()).optional(),
});
export const CronCount = z.object({
  assistant_id: z.string().optional(),
  thread_id: Uuid.optional(),
  metadata: Obj.optional(),
});
export const CronIdParams = z.object({ cron_id: Uuid });
