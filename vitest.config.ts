// Test runner configuration: a few worker processes each run test files one after the other (sharing loaded
// modules); servers run in the worker (test/helpers/server.ts), or as real CLI child processes where a test is
// about the process.
//
// Two projects (`npx vitest run --project <name>`; `npm test` runs both, embedded first):
// - "embedded": the end-to-end suite, servers (as `hangar dev` runs them) on SQLite in a temp data dir, and the
//   unit tests (test/unit: pure modules, no server). Needs no external service.
// - "postgres": the same e2e files with HANGAR_TEST_BACKEND=postgres, servers (as `hangar serve` runs them) on
//   PostgreSQL + Redis (DATABASE_URL, REDIS_URL; one schema + Redis prefix per test data dir, see
//   test/helpers/server.ts), plus test/postgres/** (the PostgreSQL backend's own tests and the
//   multi-process ones), plus the control plane's API files on its PostgreSQL store (CP_POSTGRES). Its
//   globalSetup fails the run when PostgreSQL or Redis is unreachable.
import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";
import LongFirst from "./test/helpers/sequencer.ts";

/**
 * e2e files not run on the postgres backend, because what they test is not the API:
 * - cli.test.ts: `hangar dev` itself (its startup errors, reload, .env loading), through dev's CLI;
 * - serve.test.ts: `hangar serve` on the embedded backend and its refusals of incomplete backend env
 *   (on postgres, every e2e file runs through serve).
 * - package.test.ts: the packed tarball installed in a fresh project (`hangar dev` there);
 * - test/security/cp-sandbox.test.ts: the control plane's process sandbox, the same whatever the store.
 * - graph-loading, schemas, ui: how a project's modules are imported, their schemas extracted and their UI
 *   bundled, which happens before and apart from storage (the same code on both backends).
 * - langchain-cli: `hangar check`, `dev` and `serve` loading the LangChain project as processes (its agents run on
 *   both backends in langchain-agents.test.ts).
 */
const EMBEDDED_ONLY = [
  "test/e2e/cli.test.ts",
  "test/e2e/serve.test.ts",
  "test/e2e/package.test.ts",
  "test/e2e/logging.test.ts",
  "test/security/cp-sandbox.test.ts",
  "test/e2e/graph-loading.test.ts",
  "test/e2e/langgraph-0x.test.ts",
  "test/e2e/langchain-cli.test.ts",
  "test/e2e/schemas.test.ts",
  "test/e2e/ui.test.ts",
  // Graph threads loading in the background (the pool's own logic, the same on both backends; graph-threads.test.ts
  // runs the threads on both).
  "test/e2e/graph-threads-start.test.ts",
  // hangar backup/restore of the embedded data directory (PostgreSQL's: test/postgres/backup-pg-dump.test.ts).
  "test/e2e/backup-embedded.test.ts",
  // One server per embedded data directory (a scale-out server has none).
  "test/e2e/data-dir-lock.test.ts",
];

/**
 * Control plane files run again with the control plane's store on PostgreSQL (test/helpers/control-plane.ts
 * gives `hangar control-plane` DATABASE_URL and a schema per data dir): the API, its administration, uploads.
 */
const CP_POSTGRES = [
  "test/control-plane/api.test.ts",
  "test/control-plane/admin.test.ts",
  "test/control-plane/uploads.test.ts",
];

// Test files run at once: a file mostly waits (on its servers, Docker, a browser, PostgreSQL), so more files than
// cores keep the cores busy (with 4 on 2 cores a suite run on one machine left them idle a third of the time: 786 s,
// 634 s with 6). But on a slower machine 6 files at once, each with its servers and processes, loaded 2 cores ~24
// deep: Docker's health checks timed out, and vitest's own workers could not reach it ("Timeout calling
// onTaskUpdate", 28 times) so that the run ended after its first project. Two per core; at most 8, as the postgres
// project's files open PostgreSQL connections (66 at the peak with 6 files at once; the server's default
// max_connections is 100).
const WORKERS = Math.min(8, 2 * Math.max(2, availableParallelism()));

export default defineConfig({
  test: {
    pool: "forks",
    // Only a guard against a hang: a test waits on conditions, each bounded with a message saying what it awaited
    // (test/helpers/wait.ts), so a loaded machine makes a test slower, never failed by a clock.
    testTimeout: 900_000,
    hookTimeout: 900_000,
    fileParallelism: true,
    // Files known to take long start first (test/helpers/sequencer.ts).
    sequence: { sequencer: LongFirst },
    // A test file mostly waits on the servers it started (a child process, or PostgreSQL and Redis), so more files
    // run at once than there are cores (vitest's default is one less than the cores: a single file on 2 cores).
    maxWorkers: WORKERS,
    // Workers are reused (isolate: false): none is retired when idle, which would race vitest's recycling of the
    // workers between the two projects ("Terminating worker thread").
    minWorkers: WORKERS,
    // Every CLI a test spawns runs the code under test compiled: the setup builds dist/ unless it is as new as src/
    // (bin/hangar.js runs src/ through tsx whenever a file of src/ is newer than the build). The official dev server,
    // the peer of the differential tests and of the console's, starts once per run when a file of the run uses it
    // (test/helpers/official-peer-setup.ts; one for both projects).
    globalSetup: ["test/helpers/build-setup.ts", "test/helpers/official-peer-setup.ts"],
    // Each file's leftover servers ended and schemas dropped after its own hooks.
    setupFiles: ["test/helpers/file-cleanup.ts"],
    // A worker runs its files one after the other in one module graph: the server, LangGraph and the SDK are
    // imported once per worker rather than once per file (which cost ~2 s of CPU per file). The harness keeps no
    // state across files (file-cleanup.ts), and no test mocks modules.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: "embedded",
          // test/control-plane: the control plane on its SQLite store (some files again in "postgres").
          // test/browser: a React page with useStream in Debian's Chromium (needs /usr/bin/chromium).
          include: [
            "test/unit/**/*.test.ts",
            "test/e2e/**/*.test.ts",
            "test/control-plane/**/*.test.ts",
            "test/browser/**/*.test.ts",
            "test/security/**/*.test.ts",
            "test/unit/**/*.test.ts",
            // test/docker: images built and run by the local Docker (skipped without it, but with
            // HANGAR_REQUIRE_DOCKER=1, as in CI); the containers use the host's PostgreSQL and Redis.
            "test/docker/**/*.test.ts",
          ],
          // Both projects share the machine: one after the other keeps timings like a single run.
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          include: [
            "test/e2e/**/*.test.ts",
            "test/postgres/**/*.test.ts",
            // test/security: on both backends (control plane files: on its PostgreSQL store), but the sandbox
            // test, which does not depend on the store.
            "test/security/**/*.test.ts",
            // The web console's walk (test/browser/console*.test.ts), on the scale-out backend too.
            "test/browser/console*.test.ts",
            ...CP_POSTGRES,
          ],
          exclude: [...configDefaults.exclude, ...EMBEDDED_ONLY],
          env: { HANGAR_TEST_BACKEND: "postgres" },
          globalSetup: [
            "test/helpers/build-setup.ts",
            "test/helpers/postgres-setup.ts",
            "test/helpers/official-peer-setup.ts",
          ],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
