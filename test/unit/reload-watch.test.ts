// What `hangar dev`'s reload watches (src/cli/reload.ts watchIgnored), with chokidar on a real folder: a change
// to code or configuration is seen; a log written into the project, a database file, the data directory,
// node_modules and dot-files are not (a `hangar dev > dev.log` in the project used to restart it for ever).
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { watch } from "chokidar";
import { afterAll, describe, expect, it } from "vitest";
import { watchIgnored } from "../../src/cli/reload.ts";

const project = mkdtempSync(join(tmpdir(), "hangar-reload-watch-"));
afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("hangar dev's reload watcher", () => {
  it("sees code and configuration, not logs, data, node_modules or dot-files", async () => {
    const dataDir = join(project, ".hangar");
    for (const dir of ["src", "node_modules/x", ".hangar", "data-out"])
      mkdirSync(join(project, dir), { recursive: true });
    writeFileSync(join(project, "src/graph.ts"), "export const a = 1;\n");
    const seen: string[] = [];
    const watcher = watch(project, { ignored: watchIgnored(project, dataDir), ignoreInitial: true });
    await new Promise<void>((ready) => watcher.once("ready", () => ready()));
    try {
      // Ignored ones first; the changes that count last: once those are seen, the others had their chance.
      appendFileSync(join(project, "dev.log"), "a line\n");
      appendFileSync(join(project, "dev.log"), "another line\n");
      writeFileSync(join(project, "data-out/runs.db"), "x");
      writeFileSync(join(project, ".hangar/hangar.db"), "x");
      writeFileSync(join(project, "node_modules/x/index.js"), "x");
      writeFileSync(join(project, ".env"), "A=1\n");
      const done = new Promise<void>((resolve) => {
        watcher.on("all", (_event, path) => {
          seen.push(path.slice(project.length + 1));
          if (seen.includes("langgraph.json") && seen.includes("src/graph.ts")) resolve();
        });
      });
      writeFileSync(join(project, "src/graph.ts"), "export const a = 2;\n");
      writeFileSync(join(project, "langgraph.json"), "{}\n");
      await done;
    } finally {
      await watcher.close();
    }
    expect(seen.sort()).toEqual(["langgraph.json", "src/graph.ts"]);
  });
});
