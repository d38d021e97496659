// Unit tests of the schema cache (src/graphs/schema/cache.ts): an entry holds while its graph's module and export,
// the content of every file the compiler read, the absence of the paths it missed and the versions are unchanged;
// one directory serves several modules and several writers.
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SchemaCache } from "../../src/graphs/schema/cache.ts";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");
const VERSIONS = { hangar: "1.0.0", typescript: "5.9.3" };
const RESULT = { graph: { state: { type: "object" } } };

describe("schema cache directory", () => {
  let dir: string;
  let source: string;
  let missing: string;
  let cacheDir: string;
  const spec = (exportSymbol = "graph") => ({ sourceFile: source, exportSymbol });
  const entry = (result: Record<string, any> = RESULT) => ({
    result,
    read: { [source]: sha("export const graph = 1;\n") },
    missing: [missing],
  });

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "hangar-schema-cache-"));
    source = join(dir, "graph.ts");
    missing = join(dir, "tsconfig.json");
    cacheDir = join(dir, "cache");
    writeFileSync(source, "export const graph = 1;\n");
    await new SchemaCache(cacheDir, VERSIONS).record(spec(), entry());
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("gives an entry back while nothing changed", async () => {
    expect(await new SchemaCache(cacheDir, VERSIONS).lookup(spec())).toEqual(RESULT);
  });

  it("drops it when a file read changed, or a path missed exists now", async () => {
    writeFileSync(source, "export const graph = 2;\n");
    expect(await new SchemaCache(cacheDir, VERSIONS).lookup(spec())).toBeUndefined();
    writeFileSync(source, "export const graph = 1;\n");
    writeFileSync(missing, "{}");
    expect(await new SchemaCache(cacheDir, VERSIONS).lookup(spec())).toBeUndefined();
  });

  it("drops it for another version or another export", async () => {
    expect(await new SchemaCache(cacheDir, { ...VERSIONS, hangar: "1.0.1" }).lookup(spec())).toBeUndefined();
    expect(await new SchemaCache(cacheDir, VERSIONS).lookup(spec("other"))).toBeUndefined();
  });

  it("keeps an entry per module and export; writers at once each leave a whole entry", async () => {
    const other = { graph: { state: { type: "object", title: "other" } } };
    await Promise.all([
      new SchemaCache(cacheDir, VERSIONS).record(spec("other"), entry(other)),
      new SchemaCache(cacheDir, VERSIONS).record(spec("other"), entry(other)),
      new SchemaCache(cacheDir, VERSIONS).record(spec(), entry()),
    ]);
    const cache = new SchemaCache(cacheDir, VERSIONS);
    expect(await cache.lookup(spec())).toEqual(RESULT);
    expect(await cache.lookup(spec("other"))).toEqual(other);
    expect(readdirSync(cacheDir).sort()).toHaveLength(2);
  });

  it("holds nothing when the directory is missing or an entry is not JSON", async () => {
    expect(await new SchemaCache(join(dir, "none"), VERSIONS).lookup(spec())).toBeUndefined();
    for (const f of readdirSync(cacheDir)) writeFileSync(join(cacheDir, f), "{not json");
    expect(await new SchemaCache(cacheDir, VERSIONS).lookup(spec())).toBeUndefined();
  });

  it("one process at a time extracts a graph: the others wait for its entry; a lock of a gone process is taken over", async () => {
    const first = new SchemaCache(cacheDir, VERSIONS);
    const second = new SchemaCache(cacheDir, VERSIONS);
    const spec2 = spec("locked");
    const release = await first.claim(spec2, 60_000);
    expect(release).toBeDefined();
    expect(await second.claim(spec2, 60_000)).toBeUndefined();
    let stopped = false;
    const waiting = second.waitForOther(spec2, () => stopped);
    await first.record(spec2, entry({ graph: { state: { title: "locked" } } }));
    await release!();
    expect(await waiting).toEqual({ graph: { state: { title: "locked" } } });
    // A lock naming a process that is gone (a pid no process has) is stale.
    const lock = join(cacheDir, readdirSync(cacheDir).find((f) => f.endsWith(".json"))! + ".lock");
    writeFileSync(lock, "2147483646");
    const spec3 = JSON.parse(readFileSync(lock.slice(0, -".lock".length), "utf8")).spec;
    const again = await second.claim(spec3, 60_000);
    expect(again).toBeDefined();
    await again!();
    stopped = true;
  });
});
