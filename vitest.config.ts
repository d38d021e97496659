// Test runner configuration: each file in its own process; servers are real child processes.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    pool: "forks",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    fileParallelism: true,
  },
});
