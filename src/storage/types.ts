// The storage interface: records and the operations callers use. SQLite implements it now; PostgreSQL follows.
import type {
  BaseCheckpointSaver,
  BaseStore,
  Item,
  SearchItem,
  SearchOperation,
} from "@langchain/langgraph-checkpoint";

export type Json = Record<string, unknown>;
export type ThreadStatus = "idle" | "busy" | "interrupted" | "error";
export type RunStatus = "pending" | "running" | "error" | "success" | "timeout" | "interrupted";
export type MultitaskStrategy = "reject" | "rollback" | "interrupt" | "enqueue";

export interface Assistant {
  assistant_id: string;
  graph_id: string;
  config: Json;
  context: Json;
  metadata: Json;
  name: string;
  description: string | null;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface Thread {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Json;
  status: ThreadStatus;
  config: Json;
  values: Json | null;
  interrupts: Json;
  error?: unknown;
}

export interface Run {
  run_id: string;
  thread_id: string | null;
  assistant_id: string;
  created_at: string;
  updated_at: string;
  status: RunStatus;
  metadata: Json;
  kwargs: Json;
  multitask_strategy: MultitaskStrategy;
}

export interface SortSpec {
  sort_by?: string;
  sort_order?: "asc" | "desc";
}

export interface AssistantSearch extends SortSpec {
  graph_id?: string;
  name?: string;
  metadata?: Json;
  /** A second metadata containment filter, from the auth handler (both must hold). */
  authMetadata?: Json;
  limit: number;
  offset: number;
}

export interface ThreadSearch extends SortSpec {
  ids?: string[];
  metadata?: Json;
  /** A second metadata containment filter, from the auth handler (both must hold). */
  authMetadata?: Json;
  values?: Json;
  status?: ThreadStatus;
  limit: number;
  offset: number;
}

export interface AssistantInput {
  assistant_id: string;
  graph_id: string;
  config: Json;
  context: Json;
  metadata: Json;
  name: string;
  description: string | null;
}

export interface AssistantPatch {
  graph_id?: string;
  config?: Json;
  context?: Json;
  metadata?: Json;
  name?: string;
  description?: string | null;
}

export interface AssistantStore {
  /** Inserts; returns null when the id exists. */
  create(input: AssistantInput): Promise<Assistant | null>;
  get(id: string): Promise<Assistant | null>;
  /** Writes a new version and makes it current; returns null when missing. */
  patch(id: string, patch: AssistantPatch): Promise<Assistant | null>;
  delete(id: string): Promise<boolean>;
  search(q: AssistantSearch): Promise<Assistant[]>;
  count(q: Omit<AssistantSearch, "limit" | "offset">): Promise<number>;
  versions(id: string, q: { metadata?: Json; limit: number; offset: number }): Promise<Assistant[]>;
  /** Makes an existing version current; returns null when the assistant or version is missing. */
  setLatest(id: string, version: number): Promise<Assistant | null>;
}

export interface ThreadInput {
  thread_id: string;
  metadata: Json;
  config?: Json;
  ttl?: { ttl: number; strategy: "delete" | "keep_latest" } | null;
}

export interface ThreadStore {
  create(input: ThreadInput): Promise<Thread | null>;
  get(id: string): Promise<Thread | null>;
  /** Merges metadata; returns null when missing. */
  patchMetadata(id: string, metadata: Json): Promise<Thread | null>;
  /** Deletes the thread, its runs and its checkpoints. */
  delete(id: string): Promise<boolean>;
  search(q: ThreadSearch): Promise<Thread[]>;
  count(q: Omit<ThreadSearch, "limit" | "offset" | "sort_by" | "sort_order">): Promise<number>;
  /**
   * Copies the thread's checkpoints and pending writes under a new id, atomically, with a new thread row as the
   * official server makes it: the source's metadata merged with `metadata`, `idle`, no config, values or
   * interrupts of its own (its state comes from the copied checkpoints).
   */
  copy(sourceId: string, newId: string, metadata: Json): Promise<Thread | null>;
  /** Sets (or clears, with null) the thread's TTL, counted from now. */
  setTtl(id: string, ttl: { ttl: number; strategy: "delete" | "keep_latest" } | null): Promise<void>;
  /**
   * A run starts on the thread: marks it busy (merging `metadata`), restarts its TTL if it has one, and returns
   * the position of its checkpoint history before the run (see `checkpointMark`); null if the thread is gone.
   */
  runStarting(id: string, metadata: Json): Promise<{ mark: unknown } | null>;
  /** Threads whose TTL has passed, with their strategy; a busy one waits for its run to end (swept after it). */
  expired(now: string, limit: number): Promise<{ thread_id: string; strategy: "delete" | "keep_latest" }[]>;
  /** Deletes every checkpoint of the thread but the newest of each namespace, and their writes. */
  keepLatest(id: string): Promise<void>;
  /** Bytes the thread's checkpoints occupy, as GET /threads/{id}/storage reports them. */
  storageStats(id: string): Promise<Json>;
  /** An opaque position in the thread's checkpoint history (taken before a run starts). */
  checkpointMark(threadId: string): Promise<unknown>;
  /** Deletes every checkpoint and pending write of the thread written after `mark` (rollback of a run). */
  rollbackCheckpoints(threadId: string, mark: unknown): Promise<void>;
  /**
   * Records status and the latest values/interrupts after a run or state change; with a `fence`, only while that
   * attempt is still its run's current one (an attempt that lost its lease must not overwrite its successor's end).
   * Returns the thread's status as recorded (with `busyWhilePending`: "busy" when another run waits), or null when
   * nothing was written (no such thread, or the fence refused).
   */
  setState(id: string, update: ThreadStateUpdate, fence?: AttemptFence): Promise<ThreadStatus | null>;
}

/** A run's attempt: writes fenced by it apply only while it is the run's current attempt. */
export interface AttemptFence {
  runId: string;
  attempt: number;
  /** The run's final status, recorded with the thread's state (fenced alike; one statement on PostgreSQL). */
  runStatus?: RunStatus;
}

/** What `setState` changes on a thread (absent fields stay as they are). */

export interface ThreadStateUpdate {
  status?: ThreadStatus;
  /**
   * With status "idle": "busy" instead while a run of the thread waits to start (pending; one delayed by
   * after_seconds too), read in the same statement, as the official server records a run's end.
   */
  busyWhilePending?: boolean;
  values?: Json | null;
  interrupts?: Json;
  error?: unknown;
  metadata?: Json;
  /** Replaces the thread's config (what its graph is built from; set when a run is created). */
  config?: Json;
}

export interface RunInput {
  run_id: string;
  thread_id: string | null;
  assistant_id: string;
  status: RunStatus;
  metadata: Json;
  kwargs: Json;
  multitask_strategy: MultitaskStrategy;
  /**
   * after_seconds: the scale-out queue holds the run until then, from the moment it is inserted (a worker must
   * never claim it in between); the embedded backend delays it in memory. Not part of the returned run.
   */
  delay_seconds?: number;
}

/**
 * What `RunStore.admit` did: it recorded the run (`current`: the run that held its thread then, if any;
 * `delayed`: the thread's runs still waiting for their after_seconds), or, the thread being busy under
 * "reject", recorded nothing (`current`: the run it is busy with, a delayed one if nothing else).
 */
export type RunAdmission =
  { run: Run; current: string | null; delayed: string[] } | { run: null; current: string };

/** What an admitted run marks on its thread in the same transaction: busy, these metadata merged, this config. */
export interface AdmittedThread {
  metadata: Json;
  config: Json;
}

export interface RunStore {
  create(input: RunInput): Promise<Run>;
  /**
   * Records a run on a thread in one atomic step with the look at the thread's runs: its current one (running,
   * or pending and due) and those waiting for their after_seconds. Under multitask_strategy "reject" a thread
   * with either refuses it (a delayed run makes the thread busy, as on the official server); under "interrupt"
   * or "rollback" it goes first in the thread's line (the caller cancels the current and delayed runs); under
   * "enqueue" it goes after the current one (a delayed run starts when due). Concurrent admissions on one
   * thread (from any process) see each other. With `thread`, an admitted run marks its thread in the same
   * transaction.
   */
  admit(input: RunInput & { thread_id: string }, thread?: AdmittedThread): Promise<RunAdmission>;
  get(threadId: string, runId: string): Promise<Run | null>;
  /** The thread of a run known by its id alone (an A2A task id); null for an unknown or stateless run. */
  threadOf(runId: string): Promise<string | null>;
  list(threadId: string, q: { limit: number; offset: number; status?: RunStatus }): Promise<Run[]>;
  /** Sets a run's status; with `attempt`, only while that is the run's current attempt. */
  setStatus(runId: string, status: RunStatus, attempt?: number): Promise<void>;
  /** Marks a run running as its next attempt; returns the attempt number (1 for a first start). */
  start(runId: string): Promise<number>;
  /**
   * Runs that were in flight when the process stopped (for recovery at start-up), oldest first, each with the
   * time it may start (`not_before`, ISO; null when it may start at once).
   */
  inFlight(): Promise<(Run & { attempt: number; not_before: string | null })[]>;
  /** Run ids of a thread with one of the statuses (all threads when threadId is null). */
  idsByStatus(
    threadId: string | null,
    statuses: RunStatus[],
  ): Promise<{ run_id: string; thread_id: string | null }[]>;
  delete(runId: string): Promise<boolean>;
}

export interface PutOptions {
  /** Minutes until the item expires; null/undefined for never. */
  ttl?: number | null;
  /** Fields to embed for semantic search (store.index); false not to embed this item. */
  index?: false | string[] | null;
}

export interface ReadOptions {
  /** Reading an item with a TTL restarts its TTL (default true). */
  refreshTtl?: boolean;
}

export interface NamespaceQuery {
  prefix?: string[];
  suffix?: string[];
  maxDepth?: number;
  limit: number;
  offset: number;
}

/** The long-term store: LangGraph's BaseStore (what graphs use) plus TTL and paging for the HTTP API. */
export interface ItemStore extends BaseStore {
  putItem(
    namespace: string[],
    key: string,
    value: Record<string, unknown> | null,
    opts: PutOptions,
  ): Promise<void>;
  getItem(namespace: string[], key: string, opts: ReadOptions): Promise<Item | null>;
  searchItems(op: SearchOperation, opts: ReadOptions): Promise<SearchItem[]>;
  listNamespacesPage(q: NamespaceQuery): Promise<string[][]>;
  /** Restarts the TTL of these items (those that have one), in one statement or transaction. */
  refreshTtl(items: { namespace: string[]; key: string }[]): Promise<void>;
  /** Deletes expired items; returns how many. */
  sweep(): Promise<number>;
}

export interface Cron {
  cron_id: string;
  assistant_id: string;
  thread_id: string | null;
  user_id: string | null;
  schedule: string;
  timezone: string | null;
  end_time: string | null;
  enabled: boolean;
  on_run_completed: "delete" | "keep";
  /** The run to create: input, config, context, stream options, multitask_strategy, webhook, ... */
  payload: Json;
  metadata: Json;
  next_run_date: string | null;
  created_at: string;
  updated_at: string;
}

export interface CronSearch extends SortSpec {
  assistant_id?: string;
  thread_id?: string;
  enabled?: boolean;
  metadata?: Json;
  /** A second metadata containment filter, from the auth handler (both must hold). */
  authMetadata?: Json;
  limit: number;
  offset: number;
}

export interface CronStore {
  create(cron: Omit<Cron, "created_at" | "updated_at">): Promise<Cron>;
  get(id: string): Promise<Cron | null>;
  /** Replaces the given fields; returns null when missing. */
  update(
    id: string,
    patch: Partial<Omit<Cron, "cron_id" | "created_at" | "updated_at">>,
  ): Promise<Cron | null>;
  delete(id: string): Promise<boolean>;
  search(q: CronSearch): Promise<Cron[]>;
  count(q: Omit<CronSearch, "limit" | "offset" | "sort_by" | "sort_order" | "enabled">): Promise<number>;
  /** Enabled crons whose next run is due at `now`. */
  due(now: string): Promise<Cron[]>;
  /** When the next run of an enabled cron is due (milliseconds since the epoch), or null if none is. */
  nextDue(): Promise<number | null>;
  /**
   * Moves a cron from the run date it was due at to the next one, only if nobody did meanwhile and it is still
   * enabled: true means this caller fires that date (exactly once, also with several processes).
   */
  claim(id: string, dueAt: string, next: string | null): Promise<boolean>;
}

export interface Storage {
  assistants: AssistantStore;
  threads: ThreadStore;
  runs: RunStore;
  crons: CronStore;
  checkpointer: BaseCheckpointSaver;
  store: ItemStore;
  /**
   * Resolves once every write made so far is durable. Writes may be batched (group commit), so a change
   * is acknowledged to a client only after this resolves.
   */
  sync(): Promise<void>;
  /**
   * A token that changes whenever the thread's checkpoints change, for caching what is derived from them;
   * null when the backend cannot tell (then callers do not cache). May need a query (PostgreSQL).
   */
  checkpointToken(threadId: string): string | null | Promise<string | null>;
  close(): Promise<void>;
}
