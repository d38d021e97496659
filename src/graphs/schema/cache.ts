// The schemas extracted from graphs' types, kept on disk across restarts: one file per graph module and export in a
// cache directory. An entry holds while every file the compiler read is unchanged (by content hash), the paths it
// found missing are still missing, and the extracting packages' versions and Hangar's version are the same;
// anything else recomputes that graph. Entries are keyed by the module's absolute path, so one directory can serve
// several projects and processes at once (each entry is written whole, by a rename).
import { createHash } from "node:crypto";
import { mkdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import pLimit from "p-limit";
import type { Extracted, StaticSchemas, StaticSpec } from "./worker.js";

const FORMAT = 2;

interface Entry {
  format: number;
  /** Hash of the format, Hangar's version and the extracting packages' versions. */
  env: string;
  spec: StaticSpec;
  /** Path -> sha256 of its content when the compiler read it. */
  read: Record<string, string>;
  missing: string[];
  result: StaticSchemas;
}

const sha256 = (data: Buffer | string) => createHash("sha256").update(data).digest("hex");

/** Reads at most this many files at once while checking entries. */
const limit = pLimit(32);

/** How long a file's hash is reused by later checks of this process (the graphs of one start share files). */
const HASH_REUSE_MS = 10_000;

/** How often a process waiting for another's extraction of the same graph looks whether it is done. */
const LOCK_POLL_MS = 200;

/** Whether a process with this id runs on this machine. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The schema cache: a directory of entries. */
export class SchemaCache {
  private readonly env: string;
  private hashes = new Map<string, { at: number; hash: Promise<string | undefined> }>();
  private writes = new Set<Promise<void>>();

  constructor(
    readonly dir: string,
    versions: Record<string, string>,
  ) {
    this.env = sha256(JSON.stringify({ format: FORMAT, ...versions }));
  }

  private fileOf(spec: StaticSpec): string {
    const key = sha256(`${this.env}\0${spec.sourceFile}\0${spec.exportSymbol}`).slice(0, 32);
    return join(this.dir, `${key}.json`);
  }

  private hashOf(path: string): Promise<string | undefined> {
    const now = Date.now();
    const known = this.hashes.get(path);
    if (known && now - known.at < HASH_REUSE_MS) return known.hash;
    const hash = limit(() => readFile(path).then(sha256, () => undefined));
    this.hashes.set(path, { at: now, hash });
    return hash;
  }

  /** The schemas kept for `spec` if they still hold; undefined when missing, unreadable or outdated. */
  async lookup(spec: StaticSpec): Promise<StaticSchemas | undefined> {
    let entry: Entry;
    try {
      entry = JSON.parse(await readFile(this.fileOf(spec), "utf8")) as Entry;
    } catch {
      return undefined;
    }
    if (
      entry?.format !== FORMAT ||
      entry.env !== this.env ||
      entry.spec?.sourceFile !== spec.sourceFile ||
      entry.spec?.exportSymbol !== spec.exportSymbol ||
      typeof entry.read !== "object" ||
      !Array.isArray(entry.missing)
    ) {
      return undefined;
    }
    const exists = (path: string) =>
      stat(path).then(
        () => true,
        () => false,
      );
    const [same, appeared] = await Promise.all([
      Promise.all(Object.entries(entry.read).map(async ([p, h]) => (await this.hashOf(p)) === h)),
      Promise.all(entry.missing.map((p) => limit(() => exists(p)))),
    ]);
    return same.every(Boolean) && !appeared.some(Boolean) ? entry.result : undefined;
  }

  /** Writes a fresh extraction's entry (a temporary file renamed over it); rejects when it cannot. */
  record(spec: StaticSpec, extracted: Extracted): Promise<void> {
    const entry: Entry = {
      format: FORMAT,
      env: this.env,
      spec,
      read: extracted.read,
      missing: extracted.missing,
      result: extracted.result,
    };
    const file = this.fileOf(spec);
    const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    const write = (async () => {
      await mkdir(this.dir, { recursive: true });
      await writeFile(tmp, JSON.stringify(entry));
      await rename(tmp, file);
    })();
    const tracked = write.catch(() => {});
    this.writes.add(tracked);
    void tracked.then(() => this.writes.delete(tracked));
    return write;
  }

  /**
   * Takes the right to extract `spec` (a lock file beside its entry, naming this process), so that processes sharing
   * the directory extract a graph once: resolves with its release, or undefined while another live process holds it
   * (see waitForOther). A lock left by a process that is gone, or older than `staleMs`, is taken over.
   */
  async claim(spec: StaticSpec, staleMs: number): Promise<(() => Promise<void>) | undefined> {
    const lock = `${this.fileOf(spec)}.lock`;
    await mkdir(this.dir, { recursive: true });
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await writeFile(lock, String(process.pid), { flag: "wx" });
        return () => unlink(lock).catch(() => {});
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") return async () => {};
      }
      const [holder, info] = await Promise.all([
        readFile(lock, "utf8").catch(() => ""),
        stat(lock).catch(() => undefined),
      ]);
      const pid = Number(holder);
      const age = info ? Date.now() - info.mtimeMs : Infinity;
      // A lock without a pid yet is being written (a moment), unless it is old.
      const stale = age > staleMs || (pid > 0 ? !alive(pid) : age > 5_000);
      if (!stale || pid === process.pid) return undefined;
      await unlink(lock).catch(() => {});
    }
    return undefined;
  }

  /**
   * Waits until the process holding `spec`'s lock lets go of it (or `stop()` says to stop waiting), then answers
   * what it left in the cache (undefined if its extraction failed: the caller claims it then).
   */
  async waitForOther(spec: StaticSpec, stop: () => boolean): Promise<StaticSchemas | undefined> {
    const lock = `${this.fileOf(spec)}.lock`;
    while (!stop()) {
      const held = await stat(lock).then(
        () => true,
        () => false,
      );
      if (!held) break;
      await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
    }
    this.hashes.clear();
    return this.lookup(spec);
  }

  /** Waits for the writes under way. */
  async flush(): Promise<void> {
    await Promise.all(this.writes);
  }
}
