// Unit tests of the schema cache file (src/graphs/schema/cache.ts): an entry holds while its graph's module and export,
// the content of every file the compiler read, the absence of the paths it missed and the versions are unchanged.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SchemaCache } from "../../src/graphs/schema/cache.ts";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const VERSIONS = { hangar: "1.0.0", typescript: "5.9.3" };
const RESULT = { graph: { state: { type: "object" } } };

describe("schema cache file", () => {
  let dir: string;
  let source: string;
  let missing: string;
  let file: string;
  const spec = () => ({ sourceFile: source, exportSymbol: "graph" });
  const specs = () => new Map([["g", spec()]]);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "hangar-schema-cache-"));
    source = join(dir, "graph.ts");
    missing = join(dir, "tsconfig.json");
    file = join(dir, "cache", "schemas.json");
    writeFileSync(source, "export const graph = 1;\n");
    const cache = new SchemaCache(file, VERSIONS);
    cache.record("g", spec(), {
      result: RESULT,
      read: { [source]: sha("export const graph = 1;\n") },
      missing: [missing],
    });
    await cache.save();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("gives an entry back while nothing changed", async () => {
    expect(await new SchemaCache(file, VERSIONS).load(specs())).toEqual(new Map([["g", RESULT]]));
  });

  it("drops it when a file read changed, or a path missed exists now", async () => {
    writeFileSync(source, "export const graph = 2;\n");
    expect((await new SchemaCache(file, VERSIONS).load(specs())).size).toBe(0);
    writeFileSync(source, "export const graph = 1;\n");
    writeFileSync(missing, "{}");
    expect((await new SchemaCache(file, VERSIONS).load(specs())).size).toBe(0);
  });

  it("drops it for another version, another export, or a graph no longer served", async () => {
    expect((await new SchemaCache(file, { ...VERSIONS, hangar: "1.0.1" }).load(specs())).size).toBe(0);
    const other = new Map([["g", { ...spec(), exportSymbol: "other" }]]);
    expect((await new SchemaCache(file, VERSIONS).load(other)).size).toBe(0);
    expect((await new SchemaCache(file, VERSIONS).load(new Map())).size).toBe(0);
  });

  it("holds nothing when the file is missing or not JSON", async () => {
    expect((await new SchemaCache(join(dir, "none.json"), VERSIONS).load(specs())).size).toBe(0);
    writeFileSync(file, "{not json");
    expect((await new SchemaCache(file, VERSIONS).load(specs())).size).toBe(0);
  });
});
