// The embedded storage: one SQLite file (WAL) holding assistants, threads, runs and LangGraph checkpoints.
import { HangarSqliteSaver } from "./checkpointer.js";
import type { Storage } from "../types.js";
import { SqliteAssistants } from "./assistants.js";
import { openDatabase, type Synchronous } from "./db.js";
import { registerJsonFunctions } from "./json-filter.js";
import { SqliteRuns } from "./runs.js";
import { SqliteThreads } from "./threads.js";

export function openSqliteStorage(dataDir: string, opts: { synchronous?: Synchronous } = {}): Storage {
  const db = openDatabase(dataDir, opts.synchronous);
  registerJsonFunctions(db);
  const checkpointer = new HangarSqliteSaver(db);
  // Create the checkpointer's tables now, so thread copy/delete can rely on them.
  (checkpointer as unknown as { setup(): void }).setup();
  return {
    assistants: new SqliteAssistants(db),
    threads: new SqliteThreads(db),
    runs: new SqliteRuns(db),
    checkpointer,
    close: async () => {
      db.close();
    },
  };
}
