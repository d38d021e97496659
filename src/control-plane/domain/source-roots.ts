// Local directories as deployment sources: only under the directories the operator lists in
// HANGAR_CP_SOURCE_ROOTS, compared after resolving symlinks, with one answer for every refused path.
import { realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * HANGAR_CP_SOURCE_ROOTS (its entries): absolute directories, each resolved with realpath. None: local paths
 * are refused. Throws an Error naming the bad entry.
 */
export function parseSourceRoots(entries: string[]): string[] {
  const roots: string[] = [];
  for (const p of entries) {
    if (!isAbsolute(p)) throw new Error(`HANGAR_CP_SOURCE_ROOTS: "${p}" is not an absolute path`);
    let real: string;
    try {
      real = realpathSync.native(p);
    } catch {
      throw new Error(`HANGAR_CP_SOURCE_ROOTS: "${p}" does not exist`);
    }
    if (!statSync(real).isDirectory()) throw new Error(`HANGAR_CP_SOURCE_ROOTS: "${p}" is not a directory`);
    roots.push(real);
  }
  return roots;
}

const inside = (parent: string, child: string) => {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
};

/**
 * Where the kernel takes an absolute `path`: its realpath(3) when it exists (Node's own realpath collapses ".."
 * after a symlink lexically, the kernel does not), else the realpath of its nearest existing ancestor with the
 * rest appended; null for a missing path with "." or ".." segments (it cannot be placed without the kernel).
 */
function realLocation(path: string): string | null {
  try {
    return realpathSync.native(path);
  } catch {
    // missing (or unreadable): placed by its ancestors below
  }
  if (path.split("/").some((seg) => seg === "." || seg === "..")) return null;
  let p = path;
  const rest: string[] = [];
  for (;;) {
    const parent = dirname(p);
    if (parent === p) return null;
    rest.push(basename(p));
    p = parent;
    try {
      return join(realpathSync.native(p), ...[...rest].reverse());
    } catch {
      // keep climbing
    }
  }
}

/** The local path a repo_url names (an absolute path or a file:// URL), or null for a remote git URL. */
export function localPathOf(url: string): string | null {
  if (isAbsolute(url)) return url;
  if (/^file:\/\//i.test(url)) {
    try {
      return fileURLToPath(url);
    } catch {
      return "/";
    }
  }
  return null;
}

export type LocalSourceCheck =
  { ok: true; path: string } | { ok: false; reason: "not-allowed" | "not-a-directory" };

/**
 * Checks a local source path against the roots. A path outside every root, or inside the control plane's data
 * directory (`excluded`: builds, uploads and deployments' data of every tenant, even when a root holds it), is
 * "not-allowed" whether or not it exists (nothing is said about paths the operator did not open);
 * "not-a-directory" only for a path inside a root.
 */
export function checkLocalSource(path: string, roots: string[], excluded: string[] = []): LocalSourceCheck {
  if (!roots.length || !isAbsolute(path)) return { ok: false, reason: "not-allowed" };
  const real = realLocation(path);
  if (real === null || !roots.some((r) => inside(r, real))) return { ok: false, reason: "not-allowed" };
  if (excluded.some((x) => inside(realLocation(resolve(x)) ?? resolve(x), real))) {
    return { ok: false, reason: "not-allowed" };
  }
  let dir = false;
  try {
    dir = statSync(real, { throwIfNoEntry: false })?.isDirectory() ?? false;
  } catch {
    dir = false;
  }
  return dir ? { ok: true, path: real } : { ok: false, reason: "not-a-directory" };
}
