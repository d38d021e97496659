// Source tarballs without surprises: the extracted size is capped (HANGAR_CP_MAX_EXTRACTED_MB, counted while
// decompressing) and no symlink may leave the source folder, checked on upload (on the archive's entries) and on
// extraction for a build (on the real extracted tree, with realpath), which removes its folder when it fails.
import { createGunzip, type Gunzip } from "node:zlib";
import { createReadStream, lstatSync, readdirSync, realpathSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { isAbsolute, join, posix, relative } from "node:path";
import * as tar from "tar";
import { settings, type ControlPlaneSettings } from "../../lib/settings.js";
import { HangarError, type ErrorCode } from "../../lib/errors.js";

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

/** An entry path as a key: posix, without "./" and trailing slashes; null when absolute or leaving the root. */
function entryKey(p: string): string | null {
  if (isAbsolute(p) || p.startsWith("/")) return null;
  const n = posix.normalize(p.replace(/\\/g, "/")).replace(/\/+$/, "");
  if (n === ".." || n.startsWith("../")) return null;
  return n === "." ? "" : n;
}

interface Entry {
  type: string;
  linkpath?: string;
}

/**
 * What the tarball's entries say about its symlinks once extracted, resolved one component at a time through the
 * other symlinks of the archive: the first symlink that leaves the root or points at nothing, or null.
 */
export function badLinkOf(entries: Map<string, Entry>): string | null {
  const dirs = new Set<string>([""]);
  for (const k of entries.keys()) {
    const parts = k.split("/");
    for (let i = 1; i < parts.length; i++) dirs.add(parts.slice(0, i).join("/"));
  }
  const exists = (parts: string[]) => {
    const k = parts.join("/");
    return dirs.has(k) || entries.has(k);
  };
  type Walk = string[] | "escape" | "loop";
  const walk = (base: string[], target: string, depth: number): Walk => {
    if (depth > 40) return "loop";
    if (target.startsWith("/") || isAbsolute(target)) return "escape";
    let cur = [...base];
    for (const c of target.replace(/\\/g, "/").split("/")) {
      if (c === "" || c === ".") continue;
      if (c === "..") {
        if (!cur.length) return "escape";
        cur.pop();
        continue;
      }
      cur.push(c);
      const e = entries.get(cur.join("/"));
      if (e?.type === "SymbolicLink") {
        const r = walk(cur.slice(0, -1), e.linkpath ?? "", depth + 1);
        if (typeof r === "string") return r;
        cur = r;
      }
    }
    return cur;
  };
  for (const [k, e] of entries) {
    const parts = k.split("/");
    // Nothing is written through a symlink of the archive.
    for (let i = 1; i < parts.length; i++) {
      if (entries.get(parts.slice(0, i).join("/"))?.type === "SymbolicLink") {
        return `'${k}' is inside the symbolic link '${parts.slice(0, i).join("/")}'`;
      }
    }
    if (e.type !== "SymbolicLink" && e.type !== "Link") continue;
    const r =
      e.type === "Link" ? walk([], e.linkpath ?? "", 0) : walk(parts.slice(0, -1), e.linkpath ?? "", 0);
    if (r === "escape") return `the link '${k}' -> '${e.linkpath}' leads outside the source folder`;
    if (r === "loop") return `the link '${k}' -> '${e.linkpath}' is a loop`;
    if (!exists(r)) return `the link '${k}' -> '${e.linkpath}' points at nothing in the source`;
  }
  return null;
}

/**
 * Inspects a gzip tarball as it streams by (the upload): counts the decompressed bytes (TarballError "size"
 * beyond `max`) and collects the entries, then checks paths and links (TarballError "content"). A body that is
 * not a readable gzip tarball is not judged here (the build reports it).
 */
export class TarballInspector {
  private gunzip: Gunzip = createGunzip();
  private parser = new tar.Parser({ strict: false });
  private bytes = 0;
  private entries = new Map<string, Entry>();
  private unreadable = false;
  private ended: Promise<void>;
  error: TarballError | null = null;

  constructor(private max: number) {
    this.parser.on("entry", (e: tar.ReadEntry) => {
      const key = entryKey(e.path);
      if (key === null && !this.error) {
        this.error = new TarballError("content", `the entry '${e.path}' leads outside the source folder`);
      } else if (key !== null && key !== "") {
        this.entries.set(key, { type: e.type, linkpath: e.linkpath });
      }
      e.resume();
    });
    this.parser.on("warn", () => {});
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
    if (!this.error && !this.unreadable && !this.gunzip.destroyed) this.gunzip.end();
    await this.ended;
    if (this.error) return this.error;
    if (this.unreadable) return null;
    this.parser.end();
    const bad = badLinkOf(this.entries);
    return bad ? new TarballError("content", `The source tarball is refused: ${bad}.`) : null;
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
 * Extracts a gzip tarball into `dir` for a build: entries leaving it are refused, the decompressed bytes are
 * capped (extraction stops as soon as the cap is passed), and every symlink of the result must resolve inside
 * `dir`. On any failure `dir` is removed and the error (TarballError for a refusal) is thrown.
 */
export async function extractSourceTarball(
  file: string,
  dir: string,
  max = maxExtractedBytes(),
): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const refused: string[] = [];
      // Synchronous unpacking: when extraction stops, no write is still in flight behind it.
      const unpack = new tar.UnpackSync({
        cwd: dir,
        strict: true,
        filter: (path, entry) => {
          const e = entry as tar.ReadEntry;
          let ok = entryKey(path) !== null;
          if (ok && e.type === "SymbolicLink" && e.linkpath) {
            ok = !isAbsolute(e.linkpath) && entryKey(posix.join(posix.dirname(path), e.linkpath)) !== null;
          }
          if (ok && e.type === "Link" && e.linkpath) ok = entryKey(e.linkpath) !== null;
          if (!ok) refused.push(path);
          return ok;
        },
      });
      const src = createReadStream(file);
      const gunzip = createGunzip();
      let bytes = 0;
      const fail = (e: unknown) => {
        if (failed) return;
        failed = true;
        src.destroy();
        gunzip.destroy();
        reject(e instanceof Error ? e : new Error(String(e)));
      };
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
        if (refused.length) {
          return fail(
            new TarballError(
              "content",
              `the source tarball has entries outside its directory: ${refused.slice(0, 3).join(", ")}`,
            ),
          );
        }
        resolve();
      });
      unpack.on("error", fail);
      src.on("error", fail);
      gunzip.on("error", fail);
      src.pipe(gunzip);
    });
    const bad = escapingLink(dir);
    if (bad) throw new TarballError("content", `the source tarball is refused: ${bad}`);
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

/** Removes a failed build's folder (its extracted source and whatever the build wrote there). */
export async function removeFailedBuild(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}
