// What a storage backend gives the server: where data lives, the run queue, the event logs and signals, and how
// graph threads reach the storage. server.ts wires one of these to the run engine and the API; a new backend is
// a new factory beside embedded.ts and scale-out.ts, implementing Storage, RunQueue and Broker.
import type { RunQueue } from "../runs/queue.js";
import type { GraphThreadBackend } from "../runs/graph-threads/pool.js";
import type { Storage } from "../storage/types.js";
import type { Broker } from "../streams/channel.js";

export interface Backend {
  storage: Storage;
  queue: RunQueue;
  broker: Broker;
  /** What graph threads open to reach this storage (their own connections, or this process's SQLite). */
  graphThreads: GraphThreadBackend;
  /** Where the data lives, for the start-up line: the data directory, or the database and Redis (no passwords). */
  where: string;
  /** Closes the broker, then the storage (also when the broker's close failed). */
  close(): Promise<void>;
  /**
   * For a start that failed: removes what opening the backend created (the embedded data directory, when this open
   * made it: what is in it is that start's alone), while still holding it, then closes.
   */
  abandon(): Promise<void>;
}
