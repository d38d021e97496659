// Setup file, run before each test file (vitest re-runs setup files per file, also without isolation): registers
// the harnesses' end-of-file cleanup first, so it runs after the file's own afterAll hooks (hooks stack).
import { afterAll } from "vitest";
import { dropFileCpSchemas } from "./control-plane.ts";
import { endFileServers } from "./server.ts";

afterAll(async () => {
  await endFileServers();
  await dropFileCpSchemas();
});
