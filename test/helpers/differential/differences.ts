// The differences between Hangar and the official dev server that the differential tests expect
// (test/e2e/differential*.test.ts): ACCEPTED ones, kept on purpose for a reason of a fixed set and listed in
// docs/behaviour.md too; PENDING ones, Hangar defects known and being fixed, to be removed as they are.
// Each entry names its scenario ("*": any, of test/e2e/differential*.test.ts) and a path pattern (segments by
// "/", `*` one segment, `**` any number); `only` narrows it to a field one server has and the other lacks, and
// `value` to the value there (JSON-equal): Hangar's, or with `only: "official"` the dev server's.

/**
 * Why a difference is kept:
 * - `production-server`: the official production server (LangSmith Deployment) does it so, and Hangar follows it
 *   rather than the in-memory dev server;
 * - `dev-server-defect`: the official dev server is wrong there (against its own API document or the SDK);
 * - `security`: Hangar refuses or hides something on purpose;
 * - `api-document`: the official API document allows both answers, and Hangar's is the one its design gives (the
 *   entry says why);
 * - `client-sdk`: both servers send the same on the wire, and the official SDK hands it to the client differently
 *   from run to run (the entry says how it was checked).
 */
export type Reason = "production-server" | "dev-server-defect" | "security" | "api-document" | "client-sdk";

/** What an entry matches beyond its path. */
export interface Match {
  scenario: string;
  path: string;
  /** `hangar`: only Hangar has the field; `official`: only the official dev server has it. */
  only?: "hangar" | "official";
  /** The value Hangar has there; with `only: "official"`, the value the dev server has. */
  value?: unknown;
  /** The dev server shows it in some runs only: not reported as no longer seen when a run lacks it. */
  intermittent?: true;
}

export interface Accepted extends Match {
  reason: Reason;
  /** One line: what differs and why. */
  why: string;
}

/**
 * Known Hangar defects (issue 25): (a) a run's config.metadata; (b) the first `metadata` event; (c) store auth
 * filters; (d) schemas; (e) input and command together.
 */
export type Issue = "a" | "b" | "c" | "d" | "e" | Reported;

/** Differences found by the harness and reported to the lead as Hangar defects or open questions. */
export type Reported = `r${number}`;

export interface Pending extends Match {
  issue: Issue;
  why: string;
}

export const ACCEPTED: readonly Accepted[] = [
  // Errors.
  {
    scenario: "*",
    path: "**/error/body",
    reason: "production-server",
    why: "error bodies are JSON `{detail}` as the production server and the API document have them; the dev server answers plain text",
  },
  {
    scenario: "auth threads",
    path: "health check without credentials",
    reason: "production-server",
    why: "the health check `/ok` answers without credentials under custom auth, as load balancers and probes call it; the dev server asks for them there too (401)",
  },
  {
    scenario: "auth threads",
    path: "bob copies alice's/error/status",
    reason: "dev-server-defect",
    why: "copying another user's thread is 404 as for every path that names it; the dev server answers 409 Thread not found",
  },
  // Thread and state shapes.
  {
    scenario: "*",
    path: "**/state_updated_at",
    only: "hangar",
    reason: "production-server",
    why: "threads carry `state_updated_at`, as the API document's Thread has it; the dev server leaves it out",
  },
  {
    scenario: "*",
    path: "**/values",
    only: "hangar",
    value: {},
    reason: "production-server",
    why: "a thread without state has `values: {}`, a field of the API document's Thread; the dev server leaves it out until a run",
  },
  {
    scenario: "*",
    path: "**/interrupts",
    only: "hangar",
    reason: "production-server",
    why: "threads carry `interrupts` (`{}` when none) and states a top-level `interrupts` list, as the API document's Thread and ThreadState have them",
  },
  {
    scenario: "*",
    path: "**/{checkpoint_id,parent_checkpoint_id}",
    only: "hangar",
    reason: "production-server",
    why: "states have top-level `checkpoint_id` and `parent_checkpoint_id`, and their metadata `checkpoint_id` (the seed's thread state table); the dev server has neither",
  },
  {
    scenario: "*",
    path: "**/writes",
    only: "hangar",
    reason: "production-server",
    why: "checkpoint metadata has `writes`, node name to what it wrote (the seed's thread state table)",
  },
  {
    scenario: "threads",
    path: "state of new/metadata",
    only: "hangar",
    value: {},
    reason: "dev-server-defect",
    why: "the state of a thread without checkpoints has `metadata: {}`: the API document's ThreadState requires it; the dev server leaves it out",
  },
  {
    scenario: "threads",
    path: "history before",
    reason: "dev-server-defect",
    why: "history `before` is a checkpoint config (API document, and what the SDK sends); the dev server refuses it with 422, wanting a string",
  },
  {
    scenario: "threads",
    path: "delete copy",
    reason: "dev-server-defect",
    why: "deleting a thread answers 200 as the API document says; the dev server answers 204 (the SDK then returns nothing)",
  },
  {
    scenario: "assistants",
    path: "versions*/*/updated_at",
    only: "hangar",
    reason: "dev-server-defect",
    why: "assistant versions are Assistant objects, `updated_at` required (API document); the dev server leaves it out",
  },
  {
    scenario: "auth threads",
    path: "**/service_auth_user_id",
    only: "hangar",
    reason: "production-server",
    why: "threads created under custom auth get `service_auth_user_id` in their metadata (the seed)",
  },
  // Runs.
  {
    scenario: "*",
    path: "**/langgraph_api_version",
    only: "hangar",
    reason: "production-server",
    why: "run metadata has `langgraph_api_version`, as the production server records it; the dev server does not",
  },
  {
    scenario: "*",
    path: "**/multitask_strategy",
    value: "enqueue",
    reason: "dev-server-defect",
    why: "a run created without `multitask_strategy` records `enqueue`, the API document's default; the dev server records `reject` (and enqueues)",
  },
  {
    scenario: "multitask",
    path: "reject while busy/error/status",
    reason: "production-server",
    why: "a run refused by `multitask_strategy: reject` on a busy thread is 409 Conflict, as the API document and the production server have it; the dev server answers 422",
  },
  {
    scenario: "multitask",
    path: "rolled back run/http",
    only: "hangar",
    value: 404,
    reason: "dev-server-defect",
    why: "a run stopped by a `rollback` run is deleted with its checkpoints (the API document's cancel `action=rollback`), so reading it is 404; the dev server keeps it",
  },
  {
    scenario: "multitask",
    path: "rolled back run/{status,multitask_strategy}",
    only: "official",
    reason: "dev-server-defect",
    why: "the dev server keeps the rolled-back run (above), status `error`",
  },
  {
    scenario: "multitask",
    path: "runs at the end/rolled back",
    only: "official",
    reason: "dev-server-defect",
    why: "the thread's runs after a rollback leave out the rolled-back run (deleted, above); the dev server lists it",
  },
  {
    scenario: "run lifecycle",
    path: "{cancel and wait,cancel again,delete the cancelled run}",
    value: {},
    reason: "production-server",
    why: "cancelling and deleting a run answer 200 with a JSON body, as the API document has them; the dev server answers without a body",
  },
  {
    scenario: "run lifecycle",
    path: "run on a missing thread/error/status",
    reason: "dev-server-defect",
    why: "a run on a thread that does not exist (without `if_not_exists: create`) is 404; the dev server answers 422, saying the thread is already running a task",
  },
  {
    scenario: "run lifecycle",
    path: "stateless run kept/**/{assistant_id,graph_id}",
    only: "hangar",
    reason: "dev-server-defect",
    why: "a run's metadata has its thread's `graph_id` and `assistant_id` also when the run created the thread (stateless, `if_not_exists: create`), as every run on an existing thread has them on both servers; the dev server reads the thread before creating it",
  },
  {
    scenario: "run lifecycle",
    path: "thread after cancel/values",
    only: "hangar",
    value: { gate: "gate-2", gate_dir: "<value>", label: "cancelled", passed: ["streamed"] },
    reason: "dev-server-defect",
    why: "a thread's `values` after a cancelled run are its state's (the state read gives the same on both servers); the dev server drops them",
  },
  {
    scenario: "search and select",
    path: "assistants sorted by name/*/name",
    reason: "dev-server-defect",
    why: "assistant search sorts by its `sort_by` (here `name`) as the API document says; the dev server ignores it and lists the newest first",
  },
  {
    scenario: "search and select",
    path: "assistants page/*",
    reason: "dev-server-defect",
    why: "a page of an assistant search sorted by name (above); the dev server pages its newest-first list",
  },
  {
    scenario: "search and select",
    path: "threads by values/1",
    only: "official",
    reason: "dev-server-defect",
    why: "a thread without state matches no `values` filter; the dev server lets every thread without values through",
  },
  {
    scenario: "search and select",
    path: "count by values",
    value: 1,
    reason: "dev-server-defect",
    why: "the count of threads matching a `values` filter leaves out the threads without state (above)",
  },
  {
    scenario: "run options",
    path: "cancel many",
    value: null,
    reason: "dev-server-defect",
    why: "`POST /runs/cancel` cancels the runs it names (the API document's bulk cancel); the dev server has no such route (404)",
  },
  {
    scenario: "run options",
    path: "run cancelled by cancel many/status",
    value: "interrupted",
    reason: "dev-server-defect",
    why: "a delayed run cancelled by `POST /runs/cancel` is `interrupted` (above); on the dev server it stays pending",
  },
  {
    scenario: "run options",
    path: "thread after cancel many/status",
    value: "idle",
    reason: "dev-server-defect",
    why: "the thread of a run cancelled by `POST /runs/cancel` is idle again (above); on the dev server it stays busy",
  },
  {
    scenario: "run options",
    path: "history with durability exit/*",
    only: "official",
    reason: "dev-server-defect",
    why: "a run with `durability: exit` writes only its last checkpoint, as the API document says; the dev server checkpoints every step",
  },
  {
    scenario: "run options",
    path: "values with subgraphs, durability exit/checkpoints*",
    only: "official",
    reason: "dev-server-defect",
    why: "no `checkpoints` events unless that mode is asked for; the dev server sends them beside `values` events",
  },
  {
    scenario: "run options",
    path: "thread stopped before write/interrupts/*",
    only: "official",
    value: [],
    reason: "dev-server-defect",
    why: "a thread's `interrupts` (its current interrupts, by task, in the API document) name only tasks that have some: a run stopped by `interrupt_before` has none; the dev server lists that task with an empty list",
  },
  {
    scenario: "store",
    path: "put {in the empty namespace,a value that is not an object}",
    value: 422,
    reason: "production-server",
    why: "a store put the API refuses (an empty namespace, a value that is not an object) is 422 Validation Error, as the API document lists it; the dev server answers 400",
  },
  {
    scenario: "interrupts",
    path: "runs order/**",
    reason: "production-server",
    why: "a thread's runs are listed newest first, as the production server lists them; the dev server lists them in creation order",
  },
  {
    scenario: "runs",
    path: "list after a second run/**",
    reason: "production-server",
    why: "a thread's runs are listed newest first, as the production server lists them; the dev server lists them in creation order",
  },
  // Streams.
  {
    scenario: "streams",
    path: "**/service_node",
    only: "hangar",
    reason: "production-server",
    why: "`messages` metadata names the node as `service_node` beside `langgraph_node` (the seed)",
  },
  {
    scenario: "streams",
    path: "values updates custom/checkpoints*",
    only: "official",
    reason: "dev-server-defect",
    why: "no `checkpoints` events unless that mode is asked for; the dev server sends them beside `values` events",
  },
  {
    scenario: "streams",
    path: "tasks checkpoints/checkpoints*/data/*",
    only: "hangar",
    reason: "dev-server-defect",
    why: "`checkpoints` events carry the whole checkpoint (`config`, `tasks`, `checkpoint`, parents) as the SDK's CheckpointsStreamEvent type has it; the dev server sends only values, metadata and next",
  },
  // Store.
  {
    scenario: "store",
    path: "search*/items/**",
    reason: "production-server",
    why: "store search lists items by `updated_at`, newest first, as LangGraph's PostgreSQL store orders them; the dev server lists them in insertion order",
  },
  ...["history after fork/*/metadata/checkpoint_id", "state after replay/metadata/checkpoint_id"].map(
    (path): Accepted => ({
      scenario: "time-travel",
      path,
      reason: "production-server",
      why: "state and history metadata carry the checkpoint's own `checkpoint_id`, as the Agent Server API describes thread state metadata; the dev server records there the checkpoint a run started from, and nothing otherwise",
    }),
  ),
  // Protocol v2.
  {
    scenario: "protocol v2",
    path: "chat every channel/values#*/data/params/data/messages/*/**",
    intermittent: true,
    reason: "client-sdk",
    why: "on the wire both servers send a protocol `values` event's messages as the official normalizer shapes them (`type`, `content`, `id`, and only what else is set: read from the raw event stream of both, 2026-11-30); the official SDK's thread stream subscription hands them to the client in that form in most runs, and in others in LangChain's (empty `additional_kwargs`, `tool_calls`..., `contentBlocks`), on either server",
  },
  {
    scenario: "protocol v2",
    path: "**/{seq,event_id,applied_through_seq}",
    reason: "api-document",
    why: "a protocol event's `seq` (and `event_id`, and a command answer's `applied_through_seq`) is its id in the thread's event log: on the embedded backend a count of the log's events, which also holds the thread stream's (a run's end, its state), so the numbers run a few ahead of the dev server's after a thread's first run; on Redis a time-based number; monotonic either way, as the API document asks, and `since` resumes from it",
  },
];

export const PENDING: readonly Pending[] = [
  // r1..: found by this harness, reported; each removed with its fix (the last, r10: a state read after a run from
  // a given checkpoint showed `checkpoint_ns: ""`, which the official state read leaves out).
];
