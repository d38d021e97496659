// Storage with encryption at rest, the same for both backends: each store is wrapped so that what it writes is
// sealed (content whole, the named JSON keys one by one) and what it reads is opened. Filters that could never
// match a sealed value are refused with a clear error. The checkpointer encrypts by itself (its serializer).
import {
  BaseStore,
  type Item,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchItem,
  type SearchOperation,
} from "@langchain/langgraph-checkpoint";
import type {
  Assistant,
  AssistantStore,
  Cron,
  CronStore,
  ItemStore,
  Json,
  NamespaceQuery,
  PutOptions,
  ReadOptions,
  Run,
  RunStore,
  Storage,
  Thread,
  ThreadStore,
} from "../types.js";
import type { StaleListener, StorageCipher, Where } from "./cipher.js";
import type { LazyResealer } from "./reseal.js";

const w = (model: Where["model"], field: string): Where => ({ model, field });

/** Every method of `inner` bound to it, then `overrides` in their place. */
function wrap<T extends object>(inner: T, overrides: Partial<T>): T {
  const out: Record<string, unknown> = {};
  for (let p: object | null = inner; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) {
      if (name === "constructor" || name in out) continue;
      const v = (inner as Record<string, unknown>)[name];
      if (typeof v === "function") out[name] = v.bind(inner);
    }
  }
  return Object.assign(out, overrides) as T;
}

const mapAsync = <T>(items: T[], f: (x: T) => Promise<T>): Promise<T[]> => Promise.all(items.map(f));

export class EncryptedRecords {
  constructor(
    private cipher: StorageCipher,
    private lazy?: LazyResealer,
  ) {}

  /** Told that a row read holds values sealed with an older key: the rows are sealed again in the background. */
  private stale(tables: string[], column: string, value: unknown): StaleListener | undefined {
    const lazy = this.lazy;
    if (!lazy) return undefined;
    return () => {
      for (const t of tables) lazy.request(t, column, value);
    };
  }

  async assistant(a: Assistant): Promise<Assistant>;
  async assistant(a: Assistant | null): Promise<Assistant | null>;
  async assistant(a: Assistant | null): Promise<Assistant | null> {
    if (!a) return a;
    const c = this.cipher;
    const st = this.stale(["assistants", "assistant_versions"], "assistant_id", a.assistant_id);
    return {
      ...a,
      config: await c.open(a.config, w("assistant", "config"), st),
      context: await c.open(a.context, w("assistant", "context"), st),
      metadata: await c.open(a.metadata, w("assistant", "metadata"), st),
    };
  }

  async thread(t: Thread): Promise<Thread>;
  async thread(t: Thread | null): Promise<Thread | null>;
  async thread(t: Thread | null): Promise<Thread | null> {
    if (!t) return t;
    const c = this.cipher;
    const st = this.stale(["threads"], "thread_id", t.thread_id);
    const out: Thread = {
      ...t,
      metadata: await c.open(t.metadata, w("thread", "metadata"), st),
      config: await c.open(t.config, w("thread", "config"), st),
      values: await c.openValue(t.values, w("thread", "values"), st),
      interrupts: await c.openValue(t.interrupts, w("thread", "interrupts"), st),
    };
    if (t.error !== undefined) out.error = await c.openValue(t.error, w("thread", "error"), st);
    return out;
  }

  async run<R extends Run>(r: R): Promise<R>;
  async run<R extends Run>(r: R | null): Promise<R | null>;
  async run<R extends Run>(r: R | null): Promise<R | null> {
    if (!r) return r;
    const c = this.cipher;
    const st = this.stale(["runs"], "run_id", r.run_id);
    return {
      ...r,
      metadata: await c.open(r.metadata, w("run", "metadata"), st),
      kwargs: await c.openValue(r.kwargs, w("run", "kwargs"), st),
    };
  }

  async cron(x: Cron): Promise<Cron>;
  async cron(x: Cron | null): Promise<Cron | null>;
  async cron(x: Cron | null): Promise<Cron | null> {
    if (!x) return x;
    const c = this.cipher;
    const st = this.stale(["crons"], "cron_id", x.cron_id);
    return {
      ...x,
      metadata: await c.open(x.metadata, w("cron", "metadata"), st),
      payload: await c.openValue(x.payload, w("cron", "payload"), st),
    };
  }

  async item<T extends Item | SearchItem>(i: T): Promise<T>;
  async item<T extends Item | SearchItem>(i: T | null): Promise<T | null>;
  async item<T extends Item | SearchItem>(i: T | null): Promise<T | null> {
    if (!i) return i;
    return { ...i, value: await this.cipher.open(i.value, w("store", "value")) };
  }
}

function assistants(inner: AssistantStore, c: StorageCipher, open: EncryptedRecords): AssistantStore {
  const seal = async <T extends { config?: Json; context?: Json; metadata?: Json }>(x: T): Promise<T> => {
    const out = { ...x };
    if (x.config) out.config = await c.sealKeys(x.config, w("assistant", "config"));
    if (x.context) out.context = await c.sealKeys(x.context, w("assistant", "context"));
    if (x.metadata) out.metadata = await c.sealKeys(x.metadata, w("assistant", "metadata"));
    return out;
  };
  const check = (q: { metadata?: Json }) => c.checkFilter(q.metadata, "metadata", w("assistant", "metadata"));
  return wrap(inner, {
    create: async (input) => open.assistant(await inner.create(await seal(input))),
    get: async (id) => open.assistant(await inner.get(id)),
    patch: async (id, patch) => open.assistant(await inner.patch(id, await seal(patch))),
    search: async (q) => {
      check(q);
      return mapAsync(await inner.search(q), (a) => open.assistant(a));
    },
    count: async (q) => {
      check(q);
      return inner.count(q);
    },
    versions: async (id, q) => {
      check(q);
      return mapAsync(await inner.versions(id, q), (a) => open.assistant(a));
    },
    setLatest: async (id, version) => open.assistant(await inner.setLatest(id, version)),
  });
}

function threads(inner: ThreadStore, c: StorageCipher, open: EncryptedRecords): ThreadStore {
  const keys = (v: Json, field: string) => c.sealKeys(v, w("thread", field));
  const check = (q: { metadata?: Json; values?: Json }) => {
    c.checkFilter(q.metadata, "metadata", w("thread", "metadata"));
    c.refuseFilter(q.values, "values", w("thread", "values"));
  };
  return wrap(inner, {
    create: async (input) =>
      open.thread(
        await inner.create({
          ...input,
          metadata: await keys(input.metadata, "metadata"),
          ...(input.config ? { config: await keys(input.config, "config") } : {}),
        }),
      ),
    get: async (id) => open.thread(await inner.get(id)),
    patchMetadata: async (id, metadata) =>
      open.thread(await inner.patchMetadata(id, await keys(metadata, "metadata"))),
    search: async (q) => {
      check(q);
      return mapAsync(await inner.search(q), (t) => open.thread(t));
    },
    count: async (q) => {
      check(q);
      return inner.count(q);
    },
    copy: async (sourceId, newId, metadata) =>
      open.thread(await inner.copy(sourceId, newId, await keys(metadata, "metadata"))),
    runStarting: async (id, metadata) => inner.runStarting(id, await keys(metadata, "metadata")),
    setState: async (id, update, fence) => {
      const sealed = { ...update };
      if (update.values !== undefined && update.values !== null) {
        sealed.values = (await c.sealValue(update.values, w("thread", "values"))) as Json;
      }
      if (update.interrupts !== undefined) {
        sealed.interrupts = (await c.sealValue(update.interrupts, w("thread", "interrupts"))) as Json;
      }
      if (update.error !== undefined && update.error !== null) {
        sealed.error = await c.sealValue(update.error, w("thread", "error"));
      }
      if (update.metadata) sealed.metadata = await keys(update.metadata, "metadata");
      if (update.config) sealed.config = await keys(update.config, "config");
      return inner.setState(id, sealed, fence);
    },
  });
}

async function sealRun<T extends { metadata: Json; kwargs: Json }>(c: StorageCipher, input: T): Promise<T> {
  return {
    ...input,
    metadata: await c.sealKeys(input.metadata, w("run", "metadata")),
    kwargs: (await c.sealValue(input.kwargs, w("run", "kwargs"))) as Json,
  };
}

function runs(inner: RunStore, c: StorageCipher, open: EncryptedRecords): RunStore {
  return wrap(inner, {
    create: async (input) => open.run(await inner.create(await sealRun(c, input))),
    admit: async (input, thread) => {
      const sealed = thread && {
        metadata: await c.sealKeys(thread.metadata, w("thread", "metadata")),
        config: await c.sealKeys(thread.config, w("thread", "config")),
      };
      const admitted = await inner.admit(await sealRun(c, input), sealed);
      return admitted.run ? { ...admitted, run: await open.run(admitted.run) } : admitted;
    },
    get: async (threadId, runId) => open.run(await inner.get(threadId, runId)),
    list: async (threadId, q) => mapAsync(await inner.list(threadId, q), (r) => open.run(r)),
    inFlight: async () => mapAsync(await inner.inFlight(), (r) => open.run(r)),
  });
}

function crons(inner: CronStore, c: StorageCipher, open: EncryptedRecords): CronStore {
  const seal = async <T extends { metadata?: Json; payload?: Json }>(x: T): Promise<T> => {
    const out = { ...x };
    if (x.metadata) out.metadata = await c.sealKeys(x.metadata, w("cron", "metadata"));
    if (x.payload) out.payload = (await c.sealValue(x.payload, w("cron", "payload"))) as Json;
    return out;
  };
  const check = (q: { metadata?: Json }) => c.checkFilter(q.metadata, "metadata", w("cron", "metadata"));
  return wrap(inner, {
    create: async (cron) => open.cron(await inner.create(await seal(cron))),
    get: async (id) => open.cron(await inner.get(id)),
    update: async (id, patch) => open.cron(await inner.update(id, await seal(patch))),
    search: async (q) => {
      check(q);
      return mapAsync(await inner.search(q), (x) => open.cron(x));
    },
    count: async (q) => {
      check(q);
      return inner.count(q);
    },
    due: async (now) => mapAsync(await inner.due(now), (x) => open.cron(x)),
    nextDue: () => inner.nextDue(),
  });
}

/** The long-term store with the named JSON keys of item values sealed. */
export class EncryptedItemStore extends BaseStore implements ItemStore {
  private open: EncryptedRecords;

  constructor(
    private inner: ItemStore,
    private cipher: StorageCipher,
  ) {
    super();
    this.open = new EncryptedRecords(cipher);
  }

  /** The inner store's batch, exactly as without encryption, with put values sealed and results opened. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const sealed: Operation[] = [];
    for (const op of operations) {
      if ("key" in op && "value" in op && op.value !== null) {
        sealed.push({
          ...op,
          value: await this.cipher.sealKeys(op.value, w("store", "value")),
        } as PutOperation);
      } else {
        if ("namespacePrefix" in op) {
          this.cipher.checkFilter((op as SearchOperation).filter, "filter", w("store", "value"));
        }
        sealed.push(op);
      }
    }
    const results = (await this.inner.batch(sealed)) as unknown[];
    return (await Promise.all(
      operations.map(async (op, i) => {
        const r = results[i];
        if ("key" in op && "value" in op) return r;
        if ("key" in op) return this.open.item(r as Item | null);
        if ("namespacePrefix" in op) return mapAsync(r as SearchItem[], (x) => this.open.item(x));
        return r;
      }),
    )) as OperationResults<Op>;
  }

  async putItem(
    namespace: string[],
    key: string,
    value: Record<string, unknown> | null,
    opts: PutOptions,
  ): Promise<void> {
    const sealed = value === null ? null : await this.cipher.sealKeys(value, w("store", "value"));
    return this.inner.putItem(namespace, key, sealed, opts);
  }

  async getItem(namespace: string[], key: string, opts: ReadOptions): Promise<Item | null> {
    return this.open.item(await this.inner.getItem(namespace, key, opts));
  }

  async searchItems(op: SearchOperation, opts: ReadOptions): Promise<SearchItem[]> {
    this.cipher.checkFilter(op.filter, "filter", w("store", "value"));
    return mapAsync(await this.inner.searchItems(op, opts), (i) => this.open.item(i));
  }

  listNamespacesPage(q: NamespaceQuery): Promise<string[][]> {
    return this.inner.listNamespacesPage(q);
  }

  refreshTtl(items: { namespace: string[]; key: string }[]): Promise<void> {
    return this.inner.refreshTtl(items);
  }

  sweep(): Promise<number> {
    return this.inner.sweep();
  }

  start(): void {
    this.inner.start();
  }

  stop(): void {
    this.inner.stop();
  }
}

/**
 * `storage` with encryption at rest by `cipher` (its checkpointer must have been made with the same cipher);
 * other members (a backend's own, such as graphThreadAccess) are kept. Rows read with values sealed under an
 * older key are sealed again by `lazy`.
 */
export function encryptedStorage<S extends Storage>(
  storage: S,
  cipher: StorageCipher,
  lazy?: LazyResealer,
): S {
  const open = new EncryptedRecords(cipher, lazy);
  return {
    ...storage,
    assistants: assistants(storage.assistants, cipher, open),
    threads: threads(storage.threads, cipher, open),
    runs: runs(storage.runs, cipher, open),
    crons: crons(storage.crons, cipher, open),
    store: new EncryptedItemStore(storage.store, cipher),
  };
}
