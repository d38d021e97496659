// A graph thread (started by pool.ts through boot.mjs): imports the project's graphs, bound to the checkpointer and
// store of the server's backend (embedded: the API thread's connection, through remote-sqlite.ts; PostgreSQL: pools
// of its own), and executes the runs the API thread sends it, several at once, posting their events as JSON text.
// The API thread records everything else about a run (execute-job.ts).
import { parentPort, workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import type { BaseCheckpointSaver, BaseStore } from "@langchain/langgraph";
import { GraphRegistry } from "../../graphs/registry.js";
import { createLogger, type Logger } from "../../lib/logger.js";
import { loadStoreIndex } from "../../storage/store-index.js";
import type { GraphEntry } from "../../lib/settings/project.js";
import type { StoreConfig } from "../../lib/settings/sections.js";
import { serialize } from "../../streams/channel.js";
import { InProcessRunner } from "../graph-runner.js";
import type { ToHost, FromHost } from "./protocol.js";
import { RemoteDatabase } from "./remote-sqlite.js";
import { loadCipher, type EncryptionSpec } from "../../storage/encryption/index.js";
import { withEncryptionUser } from "../../lib/encryption-context.js";
import { runOwner } from "../kwargs.js";
import { EncryptedItemStore } from "../../storage/encryption/storage.js";

export interface HostData {
  projectDir: string;
  graphs: GraphEntry[];
  store: StoreConfig | null | undefined;
  logLevel: string;
  encryption: EncryptionSpec | null;
  backend:
    | { kind: "sqlite"; port: MessagePort; flag: SharedArrayBuffer }
    | { kind: "postgres"; url: string; schema: string; poolSize: number };
}

const port = parentPort!;
const data = workerData as HostData;
/**
 * Whether checkpoints were committed since the last message (PostgreSQL: asynchronously, several per run; the API
 * thread's sync() then flushes the WAL past them): told with the next message, or at the end of this turn of the
 * event loop, rather than in a message per commit, each waking the API thread.
 */
let wrote = false;
let telling = false;

function tellWroteLater(): void {
  if (telling) return;
  telling = true;
  setImmediate(() => {
    telling = false;
    if (!wrote) return;
    wrote = false;
    port.postMessage({ t: "wrote" } satisfies FromHost);
  });
}

/**
 * Posts a message, telling a pending "checkpoints committed" with it (an event) or before it (anything else: a run's
 * end comes after its writes are counted).
 */
const post = (m: FromHost) => {
  if (wrote) {
    wrote = false;
    if (m.t === "event") m = { ...m, wrote: true };
    else port.postMessage({ t: "wrote" } satisfies FromHost);
  }
  port.postMessage(m);
};

/**
 * Posts a run's event at once. (Held to the end of the turn, events would batch into fewer messages and Redis calls,
 * but a node that computes synchronously right after another node's events would hold them until it yields: a
 * client would not see the steps before it while it runs.)
 */
function emitEvent(id: number, event: string, json: string): void {
  post({ t: "event", id, event, json });
}

/** This thread's log lines go to the API thread's logger (as JSON lines it parses and logs again). */
const log: Logger = createLogger({
  level: data.logLevel,
  format: "json",
  destination: { write: (line: string) => post({ t: "log", line }) },
});

/**
 * Opens the thread's storage. Hangar's storage modules are imported first, natively; `beforeProject` then registers
 * tsx's loader (boot.mjs), before anything of the project's is imported: the store's embeddings function and a custom
 * encryption module may be TypeScript.
 */
async function open(beforeProject: () => Promise<void>): Promise<{
  checkpointer: BaseCheckpointSaver;
  store: BaseStore;
  /** Waits for the writes not waited for (embedded); throws the error of one that failed. */
  flush?: () => void;
  close: () => Promise<void>;
}> {
  // What of the project's the storage needs (its store's index, its cipher), once the loader is registered.
  const project = async () => {
    await beforeProject();
    return {
      index: await loadStoreIndex(data.projectDir, data.store),
      cipher: await loadCipher(data.encryption),
    };
  };
  const b = data.backend;
  if (b.kind === "sqlite") {
    const [{ HangarSqliteSaver }, { SqliteStore }] = await Promise.all([
      import("../../storage/sqlite/checkpointer.js"),
      import("../../storage/sqlite/store.js"),
    ]);
    const { index, cipher } = await project();
    const db = new RemoteDatabase(b.port, b.flag);
    const remote = db as unknown as ConstructorParameters<typeof HangarSqliteSaver>[0];
    // Writes open the group commit on the API thread (which answers each write); the tracker is touched there too.
    const tracker = { touch: (threadId: string | undefined) => db.touch(threadId) };
    const checkpointer = new HangarSqliteSaver(remote, () => {}, tracker as never, cipher);
    const plain = new SqliteStore(remote, () => {}, index, 0);
    const store = cipher ? new EncryptedItemStore(plain, cipher) : plain;
    return { checkpointer, store, flush: () => db.flush(), close: async () => {} };
  }
  const { openPostgresGraphStorage } = await import("../../storage/postgres/index.js");
  const { index, cipher } = await project();
  // The API thread's sync() flushes PostgreSQL's WAL once it knows checkpoints were written.
  return openPostgresGraphStorage({
    url: b.url,
    schema: b.schema,
    poolSize: b.poolSize,
    storeIndex: index,
    wrote: () => {
      wrote = true;
      tellWroteLater();
    },
    cipher,
  });
}

/**
 * Runs the thread: opens its storage, calling `beforeProject` (boot.mjs registers tsx's loader there, once Hangar's own
 * modules are loaded natively) before the first module of the project, loads the graphs and takes runs.
 */
export async function main(beforeProject: () => Promise<void>): Promise<void> {
  let storage: Awaited<ReturnType<typeof open>>;
  let runner: InProcessRunner;
  try {
    storage = await open(beforeProject);
    const graphs = new GraphRegistry(storage.checkpointer, storage.store, log);
    await graphs.loadAll(data.graphs);
    runner = new InProcessRunner(graphs);
  } catch (e) {
    post({ t: "failed", message: (e as Error)?.stack ?? String(e) });
    return;
  }
  const running = new Map<number, AbortController>();
  port.on("message", (m: ToHost) => {
    if (m.t === "abort") {
      running.get(m.id)?.abort();
      return;
    }
    if (m.t === "close") {
      void storage.close().finally(() => port.close());
      return;
    }
    const controller = new AbortController();
    running.set(m.id, controller);
    const emit = (event: string, value: unknown) => emitEvent(m.id, event, serialize(value));
    const runLog = log.child(m.bindings);
    // Encrypted for the run's owner (custom encryption's context), as on the API thread.
    void withEncryptionUser(runOwner(m.job.kwargs), () => runner.run(m.job, controller.signal, emit, runLog))
      .then((r) => {
        // The run's writes have all run before the API thread hears of its end.
        storage.flush?.();
        return r;
      })
      .then(
        (r): FromHost => ({
          t: "done",
          id: m.id,
          // Plain JSON already (InProcessRunner): they cross as they are (the state's values and the outcome's are
          // often one object, which crosses once).
          outcome: { ...r.outcome, values: r.outcome.values ?? null },
          state: r.state,
          stateError: r.stateError?.message,
        }),
        (e): FromHost => ({ t: "crashed", id: m.id, message: (e as Error)?.stack ?? String(e) }),
      )
      .then((reply) => {
        running.delete(m.id);
        post(reply);
      });
  });
  post({ t: "ready" });
}
