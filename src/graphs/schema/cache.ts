// The schemas extracted from a project's types, kept in a file across restarts: a graph's entry holds while its
// module and export, every file the compiler read (by content hash), the paths it found missing (still missing),
// the versions of the extracting packages and Hangar's version are unchanged; anything else recomputes that graph.
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import pLimit from "p-limit";
import type { Extracted, StaticSchemas, StaticSpec } from "./worker.js";

const FORMAT = 1;

interface Entry {
  spec: StaticSpec;
  /** Path -> sha256 of its content when the compiler read it. */
  read: Record<string, string>;
  missing: string[];
  result: StaticSchemas;
}

interface CacheFile {
  format: number;
  /** Hash of Hangar's version and of the extracting packages' versions. */
  env: string;
  graphs: Record<string, Entry>;
}

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

/** Reads at most this many files at once while checking entries. */
const limit = pLimit(32);

const sameSpec = (a: StaticSpec, b: StaticSpec) =>
  a.sourceFile === b.sourceFile && a.exportSymbol === b.exportSymbol;

/** The schema cache of one project: one JSON file. */
export class SchemaCache {
  private readonly env: string;
  private entries: Record<string, Entry> = {};
  private saving = Promise.resolve();
  private dirty = false;

  constructor(
    readonly file: string,
    versions: Record<string, string>,
  ) {
    this.env = sha256(JSON.stringify({ format: FORMAT, ...versions }));
  }

  /**
   * The entries that still hold for `specs` (graph id -> module and export), by graph id. A missing, unreadable or
   * outdated file holds none. Reads and hashes the files asynchronously, each file once.
   */
  async load(specs: Map<string, StaticSpec>): Promise<Map<string, StaticSchemas>> {
    const valid = new Map<string, StaticSchemas>();
    let parsed: CacheFile;
    try {
      parsed = JSON.parse(await readFile(this.file, "utf8")) as CacheFile;
    } catch {
      return valid;
    }
    if (parsed.format !== FORMAT || parsed.env !== this.env || typeof parsed.graphs !== "object")
      return valid;
    const hashes = new Map<string, Promise<string | undefined>>();
    const hashOf = (path: string) => {
      let h = hashes.get(path);
      if (!h) {
        h = limit(() => readFile(path).then(sha256, () => undefined));
        hashes.set(path, h);
      }
      return h;
    };
    const exists = (path: string) =>
      stat(path).then(
        () => true,
        () => false,
      );
    await Promise.all(
      Object.entries(parsed.graphs).map(async ([graphId, entry]) => {
        const spec = specs.get(graphId);
        if (!spec || !sameSpec(spec, entry.spec)) return;
        const [same, appeared] = await Promise.all([
          Promise.all(Object.entries(entry.read).map(async ([p, h]) => (await hashOf(p)) === h)),
          Promise.all(entry.missing.map((p) => limit(() => exists(p)))),
        ]);
        if (same.every(Boolean) && !appeared.some(Boolean)) {
          this.entries[graphId] = entry;
          valid.set(graphId, entry.result);
        }
      }),
    );
    return valid;
  }

  /** Keeps a fresh extraction (written by the next `save`). */
  record(graphId: string, spec: StaticSpec, extracted: Extracted): void {
    this.entries[graphId] = {
      spec,
      read: extracted.read,
      missing: extracted.missing,
      result: extracted.result,
    };
    this.dirty = true;
  }

  /**
   * Writes the file (atomically: a temporary file renamed over it), after any write already under way; rejects when
   * it cannot (the next save tries again).
   */
  save(): Promise<void> {
    this.saving = this.saving
      .catch(() => {})
      .then(async () => {
        if (!this.dirty) return;
        this.dirty = false;
        const body: CacheFile = { format: FORMAT, env: this.env, graphs: this.entries };
        const tmp = `${this.file}.${process.pid}.tmp`;
        try {
          await mkdir(dirname(this.file), { recursive: true });
          await writeFile(tmp, JSON.stringify(body));
          await rename(tmp, this.file);
        } catch (e) {
          this.dirty = true;
          throw e;
        }
      });
    return this.saving;
  }
}
