// The embedded storage: one SQLite file (WAL) holding assistants, threads, runs and LangGraph checkpoints.
import { HangarSqliteSaver } from "./checkpointer.js";
import type { Storage } from "../types.js";
import { SqliteAssistants } from "./assistants.js";
import { openDatabase, type Synchronous } from "./db.js";
import { GroupCommit } from "./group-commit.js";
import { registerJsonFunctions } from "./json-filter.js";
import { SqliteRuns } from "./runs.js";
import { SqliteThreads } from "./threads.js";

export function openSqliteStorage(dataDir: string, opts: { synchronous?: Synchronous } = {}): Storage {
  const db = openDatabase(dataDir, opts.synchronous);
  registerJsonFunctions(db);
  const gc = new GroupCommit(db);
  const begin = () => gc.begin();
  const checkpointer = new HangarSqliteSaver(db, begin);
  // Create the checkpointer's tables now, so thread copy/delete can rely on them.
  (checkpointer as unknown as { setup(): void }).setup();
  return {
    assistants: new SqliteAssistants(db, begin),
    threads: new SqliteThreads(db, begin),
    runs: new SqliteRuns(db, begin),
    checkpointer,
    sync: () => gc.sync(),
    close: async () => {
      gc.commit();
      db.close();
    },
  };
}
