// What creating a run means whatever queue takes it (embedded or scale-out): the assistant and
// its graph must exist, the body must be consistent, the thread is found or created, the run is admitted.
import { randomUUID } from "node:crypto";
import { busy, notFound } from "../lib/errors.js";
import type { RunBody, RunCreateStatelessT } from "./schemas.js";
import { findAssistant } from "../graphs/assistants.js";
import type { GraphRegistry } from "../graphs/registry.js";
import type { Assistant, Json, Run, RunInput, Storage, Thread } from "../storage/types.js";
import type { RunKwargs } from "./executor.js";
import { buildKwargs } from "./kwargs.js";
import type { RunQueue } from "./queue.js";
import { checkWebhookUrl } from "./webhook.js";
import type { AddressPolicy } from "./net-policy.js";
import { isObject } from "../lib/objects.js";

/** The run's assistant (by id or graph id), whose graph this server has loaded; 404 (official wording) otherwise. */
export async function runAssistant(storage: Storage, graphs: GraphRegistry, id: string): Promise<Assistant> {
  const a = await findAssistant(storage, id);
  if (!a) {
    throw notFound(
      `No assistant found for "${id}". Make sure the assistant ID is for a valid assistant or a valid graph ID.`,
    );
  }
  if (!graphs.has(a.graph_id)) throw notFound(`Graph "${a.graph_id}" not found`);
  return a;
}

/**
 * Checks what the schema cannot: a webhook the server may call. A body with both an input and a command runs
 * the command and ignores the input, whatever it holds, as the official server does (agent-chat-ui sends `{}`
 * beside a resume; AG-UI's LangGraph adapter sends the graph's input keys of the current state).
 */
export async function checkRunBody(
  body: { webhook?: string | null },
  webhooks: AddressPolicy,
): Promise<void> {
  if (body.webhook) await checkWebhookUrl(body.webhook, webhooks);
}

/**
 * Metadata of a thread a run creates (if_not_exists "create", a kept stateless run): its graph and assistant,
 * then the run's own metadata, as the official server records it; the owner under custom auth last, so a
 * client cannot name another.
 */
const threadMetadata = (assistant: Assistant, owner: Json, body: { metadata?: Json | null }): Json => ({
  graph_id: assistant.graph_id,
  assistant_id: assistant.assistant_id,
  ...(body.metadata ?? {}),
  ...owner,
});

/** The run's thread; a missing one is created when `if_not_exists` is "create", 404 otherwise. */
export async function runThread(
  storage: Storage,
  threadId: string,
  body: RunBody,
  assistant: Assistant,
  owner: Json,
): Promise<Thread> {
  const thread = await storage.threads.get(threadId);
  if (thread) return thread;
  if (body.if_not_exists !== "create") throw notFound(`Thread "${threadId}" not found`);
  const created =
    (await storage.threads.create({
      thread_id: threadId,
      metadata: threadMetadata(assistant, owner, body),
    })) ?? (await storage.threads.get(threadId));
  if (!created) throw notFound(`Thread "${threadId}" not found`);
  return created;
}

/**
 * What a run on a thread needs before it is admitted: a body that holds together (checkRunBody), its assistant,
 * and its thread (`known`, as the caller just read it, or found, or created under if_not_exists "create").
 */
export async function statefulRunTarget(
  storage: Storage,
  graphs: GraphRegistry,
  webhooks: AddressPolicy,
  req: { threadId: string; body: RunBody; owner: Json; known?: Thread },
): Promise<{ assistant: Assistant; thread: Thread }> {
  const { threadId, body, owner, known } = req;
  await checkRunBody(body, webhooks);
  const assistant = await runAssistant(storage, graphs, body.assistant_id);
  const thread = known ?? (await runThread(storage, threadId, body, assistant, owner));
  return { assistant, thread };
}

/**
 * A stateless run kept after it ends (on_completion "keep"): a new thread, and the body of the run to create
 * on it (queued behind nothing, on a thread that must exist).
 */
export async function keptRun(
  storage: Storage,
  assistant: Assistant,
  owner: Json,
  body: RunCreateStatelessT,
): Promise<{ threadId: string; body: RunBody }> {
  const threadId = randomUUID();
  await storage.threads.create({ thread_id: threadId, metadata: threadMetadata(assistant, owner, body) });
  const { on_completion: _c, ...rest } = body;
  return { threadId, body: { ...rest, multitask_strategy: "enqueue", if_not_exists: "reject" } };
}

/** The 409 (code `busy`) of a run refused under "reject" because its thread is busy. */
export function threadBusy(threadId: string, busyWith: string): Error {
  return busy(`Thread "${threadId}" is busy with run "${busyWith}"; multitask_strategy is "reject"`);
}

/**
 * The config a thread keeps from a run created on it (what its graph is built from when its state is read or
 * updated): the assistant's, the thread's, then the run's, each `configurable` merged the same way.
 */
function threadConfig(assistant: Assistant, thread: Thread, body: { config?: Json | null }): Json {
  const layers = [assistant.config ?? {}, thread.config ?? {}, body.config ?? {}] as Json[];
  const configurable = Object.assign(
    {},
    ...layers.map((c) => (isObject(c.configurable) ? c.configurable : {})),
  );
  return { ...Object.assign({}, ...layers), configurable };
}

/** A new pending run's record (on a thread, or with no thread: `threadId` null) and its kwargs. */
export function newRun(
  thread: Thread | null,
  body: RunBody | RunCreateStatelessT,
  assistant: Assistant,
  strategy: Run["multitask_strategy"],
): { input: RunInput; kwargs: RunKwargs } {
  const runId = randomUUID();
  const threadId = thread?.thread_id ?? null;
  const kwargs = buildKwargs(body, assistant, runId, thread);
  const input: RunInput = {
    run_id: runId,
    thread_id: threadId,
    assistant_id: assistant.assistant_id,
    status: "pending",
    metadata: kwargs.config.metadata as Json,
    kwargs: kwargs as unknown as Json,
    multitask_strategy: strategy,
    delay_seconds: body.after_seconds ?? 0,
  };
  return { input, kwargs };
}

/**
 * Admits a run on a thread through the queue (the busy check and the insert in one atomic step): under
 * "reject" a busy thread answers 409 and nothing is recorded. An admitted run marks its thread in the same step,
 * before it starts (also one waiting for after_seconds): busy, with the run's graph and assistant in its
 * metadata, and the run's config. Returns the run, its kwargs, the run that held the thread then, and the
 * thread's runs waiting for their after_seconds.
 */
export async function admitRun(
  queue: RunQueue,
  thread: Thread,
  body: RunBody,
  assistant: Assistant,
): Promise<{ run: Run; kwargs: RunKwargs; current: string | null; delayed: string[] }> {
  const threadId = thread.thread_id;
  const { input, kwargs } = newRun(thread, body, assistant, body.multitask_strategy);
  const admitted = await queue.admit(
    { ...input, thread_id: threadId },
    {
      metadata: { graph_id: assistant.graph_id, assistant_id: assistant.assistant_id },
      config: threadConfig(assistant, thread, body),
    },
  );
  if (!admitted.run) throw threadBusy(threadId, admitted.current);
  return { run: admitted.run, kwargs, current: admitted.current, delayed: admitted.delayed };
}
