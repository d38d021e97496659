// Per-key serialisation of async work: `KeyedLock` runs the calls for one key one after the other (other keys
// alongside), `SingleFlight` runs at most one task per key and hands the running one to later callers.

/** Calls for one key run one at a time, in call order; calls for different keys run alongside. */
export class KeyedLock<K = string> {
  /** Per key: the tail of its chain (present while a call holds the key or waits for it). */
  private readonly tails = new Map<K, Promise<void>>();

  /** Runs `fn` once every earlier call for `key` has settled (fulfilled or not); returns what `fn` returns. */
  async run<T>(key: K, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const tail = prev.then(() => new Promise<void>((r) => (release = r)));
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Whether a call holds `key` or waits for it. */
  busy(key: K): boolean {
    return this.tails.has(key);
  }

  /** Resolves once every call made so far has settled (calls made meanwhile are not waited for). */
  async idle(): Promise<void> {
    await Promise.all(this.tails.values());
  }
}

/** At most one task per key: starting a key whose task still runs returns that task instead. */
export class SingleFlight<K = string> {
  private readonly running = new Map<K, Promise<void>>();

  /** Starts `fn` for `key` unless a task of that key still runs; the returned promise is the running task. */
  start(key: K, fn: () => Promise<void>): Promise<void> {
    const current = this.running.get(key);
    if (current) return current;
    const task = fn().finally(() => {
      if (this.running.get(key) === task) this.running.delete(key);
    });
    this.running.set(key, task);
    return task;
  }

  /** Whether a task of `key` runs. */
  has(key: K): boolean {
    return this.running.has(key);
  }

  /** The tasks that run now. */
  tasks(): Promise<void>[] {
    return [...this.running.values()];
  }
}
