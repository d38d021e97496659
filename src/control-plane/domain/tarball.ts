// Source tarballs without surprises: the extracted size is capped (HANGAR_CP_MAX_EXTRACTED_MB, counted while
// decompressing), and every entry is judged by one rule (tar-entries.ts: paths, links, repeated names), on upload
// and again on extraction for a build, which also resolves the extracted tree's symlinks with realpath and
// removes its folder when it fails.
import { createGunzip, type Gunzip } from "node:zlib";
import { createReadStream, lstatSync, readdirSync, realpathSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import * as tar from "tar";
import { settings, type ControlPlaneSettings } from "../../lib/settings.js";
import { HangarError, type ErrorCode } from "../../lib/errors.js";
import { SourceEntries } from "./tar-entries.js";

export const DEFAULT_MAX_EXTRACTED_MB = 1024;

/** HANGAR_CP_MAX_EXTRACTED_MB as bytes (default 1024 MB); throws a SettingsError naming a bad value. */
export function maxExtractedBytes(
  cp: Pick<ControlPlaneSettings, "maxExtractedMb"> = settings().controlPlane,
): number {
  return cp.maxExtractedMb * 1024 * 1024;
}

/** A tarball refused: `kind` "size" (it expands beyond the cap) or "content" (a path or link leaves it). */
export class TarballError extends HangarError {
  override readonly code: ErrorCode;
  constructor(
    readonly kind: "size" | "content",
    message: string,
  ) {
    super(message);
    this.code = kind === "size" ? "too_large" : "invalid_input";
  }
}

const tooBig = (max: number) =>
  new TarballError(
    "size",
    `The source tarball expands to more than ${Math.round(max / 1024 / 1024)} MB ` +
      "(HANGAR_CP_MAX_EXTRACTED_MB): leave build outputs and dependencies out of it.",
  );

/** The refusal of a tarball for one of its entries (SourceEntries' reason). */
const refused = (why: string) => new TarballError("content", `The source tarball is refused: ${why}.`);

/**
 * Inspects a gzip tarball as it streams by (the upload): counts the decompressed bytes (TarballError "size"
 * beyond `max`) and judges each entry by the build's extraction rule (SourceEntries; TarballError "content"). A
 * body that is not a readable gzip tarball is not judged here (the build reports it); one damaged after its first
 * entry is refused, as extraction refuses it.
 */
export class TarballInspector {
  private gunzip: Gunzip = createGunzip();
  private parser = new tar.Parser({ strict: false });
  private bytes = 0;
  private entries = new SourceEntries();
  /** The path of the last entry read, null before the first. */
  private last: string | null = null;
  private unreadable = false;
  private ended: Promise<void>;
  error: TarballError | null = null;

  constructor(private max: number) {
    this.parser.on("entry", (e: tar.ReadEntry) => {
      if (!this.error) {
        const bad = this.entries.add(e.path, e.type, e.linkpath);
        if (bad) this.error = refused(bad);
      }
      this.last = e.path;
      e.resume();
    });
    // Extraction is strict: a damaged header fails it. Before any entry, the body is not a tarball at all.
    this.parser.on("warn", (_code: string, message: string) => {
      if (this.last !== null && !this.error) {
        this.error = refused(`it is damaged after the entry '${this.last}' (${message})`);
      }
    });
    this.parser.on("error", () => {
      this.unreadable = true;
    });
    this.gunzip.on("data", (chunk: Buffer) => {
      if (this.error || this.unreadable) return;
      this.bytes += chunk.length;
      if (this.bytes > this.max) {
        this.error = tooBig(this.max);
        this.gunzip.destroy();
        return;
      }
      this.parser.write(chunk);
    });
    this.gunzip.on("error", () => {
      this.unreadable = true;
    });
    this.ended = new Promise((resolve) => {
      this.gunzip.once("end", () => resolve());
      this.gunzip.once("close", () => resolve());
      this.gunzip.once("error", () => resolve());
    });
  }

  /** Feeds a compressed chunk; resolves once it is decompressed, or the decompression failed or stopped. */
  feed(chunk: Buffer): Promise<void> {
    const g = this.gunzip;
    if (this.error || this.unreadable || g.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        g.off("error", done);
        g.off("close", done);
        resolve();
      };
      g.once("error", done);
      g.once("close", done);
      g.write(chunk, () => done());
    });
  }

  /** The end of the upload: the refusal, if any. */
  async finish(): Promise<TarballError | null> {
    if (this.error) return this.error;
    if (!this.unreadable && !this.gunzip.destroyed) this.gunzip.end();
    await this.ended;
    if (this.error) return this.error;
    if (this.unreadable) return null;
    this.parser.end();
    if (this.error) return this.error;
    const bad = this.entries.finish();
    return bad ? refused(bad) : null;
  }

  /** Stops inspecting (the upload failed for another reason). */
  abort(): void {
    this.gunzip.destroy();
  }
}

const inside = (parent: string, child: string) => {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/** The first symlink of the real tree under `root` that leads outside it, dangles or loops (realpath), or null. */
export function escapingLink(root: string): string | null {
  // The kernel's realpath (realpath(3)): Node's own collapses ".." after a symlink lexically, which is how a
  // chain escapes a check.
  const realRoot = realpathSync.native(root);
  const visit = (dir: string): string | null => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) {
        let real: string;
        try {
          real = realpathSync.native(p);
        } catch {
          return `the link '${relative(root, p)}' points at nothing in the source (or loops)`;
        }
        if (!inside(realRoot, real)) return `the link '${relative(root, p)}' leads outside the source folder`;
      } else if (st.isDirectory()) {
        const bad = visit(p);
        if (bad) return bad;
      }
    }
    return null;
  };
  return visit(root);
}

/**
 * Extracts a gzip tarball into `dir` for a build: each entry is judged by the upload's rule (SourceEntries) before
 * it is written, the decompressed bytes are capped (extraction stops as soon as the cap is passed), and every
 * symlink of the result must resolve inside `dir`. On any failure `dir` is removed and the error (TarballError
 * for a refusal) is thrown.
 */
export async function extractSourceTarball(
  file: string,
  dir: string,
  max = maxExtractedBytes(),
): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await new Promise<void>((resolve, reject) => {
      const entries = new SourceEntries();
      const src = createReadStream(file);
      const gunzip = createGunzip();
      let failed = false;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        src.destroy();
        gunzip.destroy();
        reject(e instanceof Error ? e : new Error(String(e)));
      };
      // Synchronous unpacking: when extraction stops, no write is still in flight behind it.
      const unpack = new tar.UnpackSync({
        cwd: dir,
        strict: true,
        filter: (path, entry) => {
          if (failed) return false;
          const e = entry as tar.ReadEntry;
          const bad = entries.add(path, e.type, e.linkpath);
          if (bad) fail(refused(bad));
          return !bad;
        },
      });
      let bytes = 0;
      gunzip.on("data", (chunk: Buffer) => {
        if (failed) return;
        bytes += chunk.length;
        if (bytes > max) return fail(tooBig(max));
        try {
          unpack.write(chunk);
        } catch (e) {
          fail(e);
        }
      });
      gunzip.on("end", () => {
        if (failed) return;
        try {
          unpack.end();
        } catch (e) {
          return fail(e);
        }
        const bad = entries.finish();
        if (bad) return fail(refused(bad));
        resolve();
      });
      unpack.on("error", fail);
      src.on("error", fail);
      gunzip.on("error", fail);
      src.pipe(gunzip);
    });
    const bad = escapingLink(dir);
    if (bad) throw refused(bad);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Removes a failed build's folder (its extracted source and whatever the build wrote there). */
export async function removeFailedBuild(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
