// `hangar serve`: the production Agent Server, without reload. With DATABASE_URL and REDIS_URL it is meant
// to run on PostgreSQL + Redis (not in this build yet: it says so and exits); without them, embedded.
import { checkFlags, runServer } from "./dev.js";

export interface ServeOptions {
  config: string;
  port?: string;
  host: string;
  dataDir?: string;
  nJobsPerWorker: string;
  mode: string;
}

export async function runServe(opts: ServeOptions): Promise<number> {
  const flags = checkFlags("serve", opts, "8123");
  if (!flags) return 2;
  if (!["api", "worker", "all"].includes(opts.mode)) {
    console.error(`hangar serve: --mode must be api, worker or all, not "${opts.mode}"`);
    return 2;
  }
  if (process.env.DATABASE_URL || process.env.REDIS_URL) {
    console.error(
      "hangar serve: DATABASE_URL/REDIS_URL are set, but the PostgreSQL + Redis backend is not in this build yet; " +
        "unset them to serve on the embedded backend (SQLite in --data-dir)",
    );
    return 2;
  }
  if (opts.mode !== "all") {
    console.error(
      `hangar serve: --mode ${opts.mode} needs the PostgreSQL + Redis backend; the embedded one runs "all"`,
    );
    return 2;
  }
  return runServer("serve", opts, flags.port, flags.nJobs);
}
