// The import rule of eslint.config.js (PARTS): each part of src/ imports only the parts it names, whatever the
// direction; checked with ESLint itself on code placed in the real folders (nothing is written).
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/server.ts";

const eslint = new ESLint({ cwd: ROOT });

/** The import-rule messages ESLint gives `code` as if it were the file `path` of the repository. */
async function importErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}/${path}` });
  return result.messages
    .filter((m) => m.ruleId === "no-restricted-imports" || m.ruleId === "no-restricted-syntax")
    .map((m) => m.message);
}

describe("eslint.config.js: the parts of src/ and what each may import", () => {
  it("allows the edges PARTS names", async () => {
    expect(await importErrors("src/server.ts", 'export * from "./backends/types.js";\n')).toEqual([]);
    expect(await importErrors("src/backends/x.ts", 'export * from "../runs/queue.js";\n')).toEqual([]);
    expect(await importErrors("src/api/x.ts", 'export * from "../runs/engine.js";\n')).toEqual([]);
    expect(await importErrors("src/runs/x.ts", 'export * from "../streams/channel.js";\n')).toEqual([]);
  });

  it("refuses an edge PARTS does not name, upward or sideways, static or dynamic", async () => {
    const [up] = await importErrors("src/runs/x.ts", 'export * from "../api/app.js";\n');
    expect(up).toMatch(/runs may import only graphs, auth, streams, storage, lib .*not api/);
    // Sideways: neither is above the other, and api has no business with how backends are assembled.
    expect(await importErrors("src/api/x.ts", 'export * from "../backends/embedded.js";\n')).toHaveLength(1);
    expect(await importErrors("src/streams/x.ts", 'export * from "../storage/types.js";\n')).toHaveLength(1);
    expect(
      await importErrors(
        "src/runs/graph-threads/x.ts",
        'export const m = () => import("../../server.js");\n',
      ),
    ).toHaveLength(1);
    expect(await importErrors("src/lib/x.ts", 'export * from "../storage/types.js";\n')).toHaveLength(1);
  });

  it("keeps the finer rules: HTTP errors only in HTTP layers, the two storages apart", async () => {
    expect(await importErrors("src/runs/x.ts", 'export * from "../lib/http-errors.js";\n')).toHaveLength(1);
    expect(
      await importErrors("src/storage/sqlite/x.ts", 'export * from "../postgres/index.js";\n'),
    ).toHaveLength(1);
  });
});
