// Scale-out backend only: `hangar serve` configured with the official Agent Server's environment variable names alone
// (as its images, the official CLI's compose files and Helm values set them): POSTGRES_URI, REDIS_URI,
// REDIS_KEY_PREFIX, N_JOBS_PER_WORKER, LOG_JSON. It serves runs on that PostgreSQL and Redis, under that prefix, with
// JSON logs; two names of one setting set differently stop the start, naming both.
import { spawnSync } from "node:child_process";
import { afterAll, describe, expect, it } from "vitest";
import { clusterTargetFor, testRedis } from "../helpers/backend.ts";
import { BACKEND, BIN, ROOT, cleanupDir, noRetryClient, startHangar, tempDir } from "../helpers/server.ts";
import { RUNS_CONFIG, job } from "../helpers/runs.ts";

const home = tempDir("hangar-official-env-");
const target = clusterTargetFor(home);
afterAll(() => cleanupDir(home));

/** Hangar's own names of what the test sets under the official ones: removed from the server's environment. */
const HANGAR_NAMES = { DATABASE_URL: undefined, REDIS_URL: undefined, HANGAR_REDIS_PREFIX: undefined };

describe("the official server's environment variables", () => {
  it("serve runs on POSTGRES_URI and REDIS_URI, under REDIS_KEY_PREFIX, with LOG_JSON's JSON lines", async () => {
    expect(BACKEND, "official-env.test.ts runs in the postgres project only").toBe("postgres");
    const server = await startHangar({
      process: true,
      config: RUNS_CONFIG,
      cluster: target,
      env: {
        ...HANGAR_NAMES,
        POSTGRES_URI: target.databaseUrl,
        REDIS_URI: target.redisUrl,
        REDIS_KEY_PREFIX: target.redisPrefix,
        N_JOBS_PER_WORKER: "2",
        LOG_JSON: "true",
        LOG_FORMAT: undefined,
      },
    });
    try {
      const client = noRetryClient(server.url);
      const thread = await client.threads.create();
      const values = (await client.runs.wait(thread.thread_id, "steps", {
        input: job({ label: "o", steps: 2 }),
      })) as { log: string[] };
      expect(values.log).toEqual(["o:0", "o:1"]);
      // The run's events went through Redis under the official prefix.
      const redis = testRedis();
      await redis.connect();
      try {
        const keys = await redis.keys(`${target.redisPrefix}*`);
        expect(keys.length).toBeGreaterThan(0);
      } finally {
        redis.disconnect();
      }
      // LOG_JSON=true: every line the server wrote is a JSON object.
      const lines = server.output().split("\n").filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    } finally {
      await server.stop();
    }
  });

  it("DATABASE_URL and DATABASE_URI set differently stop the start, naming both", () => {
    const env: Record<string, string | undefined> = {
      ...process.env,
      DATABASE_URL: target.databaseUrl,
      DATABASE_URI: `${target.databaseUrl}?application_name=other`,
      REDIS_URL: target.redisUrl,
    };
    const r = spawnSync(process.execPath, [BIN, "serve", "--config", RUNS_CONFIG, "--port", "0"], {
      cwd: ROOT,
      env,
      encoding: "utf8",
    });
    expect(r.status).not.toBe(0);
    expect(r.stdout + r.stderr).toContain(
      "DATABASE_URL and DATABASE_URI name the same setting and are set differently: set one of them",
    );
  });
});
