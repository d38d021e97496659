// The one rule of what a source tarball may hold, judged entry by entry in the archive's order as the build's
// extraction writes them (node-tar's strict checks and what the file system refuses), then its symlinks at the end
// as the kernel resolves them: the upload's check and the build's extraction both ask it, so they cannot drift.
import { posix } from "node:path";

type Kind = "dir" | "file" | "symlink";

/** What each entry type node-tar writes becomes on disk (a hard link is one more name of a file). */
const KINDS = new Map<string, Kind>([
  ["File", "file"],
  ["OldFile", "file"],
  ["ContiguousFile", "file"],
  ["Link", "file"],
  ["Directory", "dir"],
  ["GNUDumpDir", "dir"],
  ["SymbolicLink", "symlink"],
]);
/** Entry types in words ("implied": a folder only named as the parent of other entries); others are files. */
const WORDS = new Map([
  ["implied", "folder"],
  ["Link", "hard link"],
  ["SymbolicLink", "symbolic link"],
  ["Directory", "directory"],
  ["GNUDumpDir", "directory"],
]);
const word = (type: string) => WORDS.get(type) ?? "file";

/** node-tar's maxDepth: deeper paths are refused by extraction. */
const MAX_DEPTH = 1024;
/** The kernel's limit of symlinks followed in one lookup (MAXSYMLINKS). */
const MAX_SYMLINKS = 40;

interface Node {
  kind: Kind;
  /** The entry's type; "implied" for a folder only named as the parent of other entries. */
  type: string;
  linkpath?: string;
}

/** Absolute as node-tar sees it on any platform (it strips such roots, which strict extraction refuses). */
const absolute = (p: string) => /^([a-zA-Z]:|[\\/])/.test(p);
/** A ".." component, with "\\" a separator too (node-tar's test). */
const hasDotDot = (p: string) => p.split(/[\\/]/).includes("..");
/** Components without "" and "." ("a//./b/" is "a/b"; the root is ""). */
const keyOf = (p: string) =>
  p
    .split("/")
    .filter((c) => c !== "" && c !== ".")
    .join("/");

/**
 * The entries of one archive, in order. `add` judges the next entry against those before it and remembers it;
 * `finish` judges the symlinks once every entry is known. Each returns null, or why the tarball is refused,
 * naming the entry.
 */
export class SourceEntries {
  private nodes = new Map<string, Node>();

  /** The archive's next entry (node-tar's type name, and its link target): null when it may be written. */
  add(path: string, type: string, linkpath?: string): string | null {
    const entry = `the entry '${path}'`;
    const kind = KINDS.get(type);
    if (!kind) return `${entry} is a ${type}: a source tarball holds only files, directories and links`;
    if (absolute(path)) return `${entry} has an absolute path`;
    if (hasDotDot(path)) return `${entry} has '..' in its path`;
    if (path.split("/").length > MAX_DEPTH) return `${entry} is nested too deep`;
    const key = keyOf(path);
    if (key === "") return kind === "dir" ? null : `${entry} would replace the source folder itself`;
    const parts = key.split("/");
    for (let i = 1; i < parts.length; i++) {
      const up = parts.slice(0, i).join("/");
      const n = this.nodes.get(up);
      if (n && n.kind !== "dir") return `${entry} is inside the ${word(n.type)} '${up}'`;
    }
    const prev = this.nodes.get(key);
    if (prev && !(prev.kind === "dir" && kind === "dir")) {
      return `'${key}' appears twice in the archive, as a ${word(prev.type)} and then as a ${word(type)}`;
    }
    if (type === "Link") {
      const bad = this.hardLinkFault(linkpath);
      if (bad) return `the hard link '${path}' -> '${linkpath ?? ""}' ${bad}`;
    } else if (kind === "symlink") {
      const bad = this.symlinkFault(key, linkpath);
      if (bad) return `the symbolic link '${path}' -> '${linkpath ?? ""}' ${bad}`;
    }
    for (let i = 1; i < parts.length; i++) {
      const up = parts.slice(0, i).join("/");
      if (!this.nodes.has(up)) this.nodes.set(up, { kind: "dir", type: "implied" });
    }
    if (!prev) this.nodes.set(key, { kind, type, linkpath });
    return null;
  }

  /** A hard link's target (relative to the archive's root): an earlier file, not through any symlink. */
  private hardLinkFault(linkpath: string | undefined): string | null {
    if (!linkpath) return "has no target";
    if (absolute(linkpath)) return "has an absolute target";
    if (hasDotDot(linkpath)) return "has '..' in its target";
    const parts = keyOf(linkpath).split("/");
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join("/");
      const n = this.nodes.get(at);
      if (!n) return "points at nothing written before it";
      if (n.kind === "symlink") return `goes through the symbolic link '${at}'`;
      if (i === parts.length && n.kind === "dir") return "points at a directory";
    }
    return null;
  }

  /**
   * A symlink's target when it is written (node-tar): relative, inside the root read as text, and not through a
   * symlink already written. Where it finally leads is judged by `finish`.
   */
  private symlinkFault(key: string, linkpath: string | undefined): string | null {
    if (!linkpath) return "has no target";
    if (absolute(linkpath)) return "has an absolute target";
    if (linkpath.includes("\\")) return "has a '\\' in its target";
    const resolved = posix.normalize(posix.join(posix.dirname(key), linkpath));
    if (resolved === ".." || resolved.startsWith("../")) return "leads outside the source folder";
    const parts = keyOf(resolved).split("/").filter(Boolean);
    for (let i = 1; i <= parts.length; i++) {
      const at = parts.slice(0, i).join("/");
      const n = this.nodes.get(at);
      if (!n) break;
      if (n.kind === "symlink") return `goes through the symbolic link '${at}'`;
    }
    return null;
  }

  /** The end of the archive: the first symlink that leads outside the root, to nothing, or loops (or null). */
  finish(): string | null {
    for (const [key, n] of this.nodes) {
      if (n.kind !== "symlink") continue;
      const r = this.resolve(key.split("/").slice(0, -1), n.linkpath ?? "", 0);
      const link = `the symbolic link '${key}' -> '${n.linkpath}'`;
      if (r === "escape") return `${link} leads outside the source folder`;
      if (r === "loop") return `${link} is a loop`;
      if (r === "missing") return `${link} points at nothing in the source`;
    }
    return null;
  }

  /** Where `target`, read from the folder `base`, leads once extracted, as the kernel resolves it. */
  private resolve(base: string[], target: string, depth: number): string[] | "escape" | "loop" | "missing" {
    if (depth > MAX_SYMLINKS) return "loop";
    let cur = [...base];
    const comps = target.split("/").filter((c) => c !== "" && c !== ".");
    for (let i = 0; i < comps.length; i++) {
      if (comps[i] === "..") {
        if (!cur.length) return "escape";
        cur.pop();
        continue;
      }
      cur.push(comps[i]);
      let n = this.nodes.get(cur.join("/"));
      if (!n) return "missing";
      if (n.kind === "symlink") {
        const r = this.resolve(cur.slice(0, -1), n.linkpath ?? "", depth + 1);
        if (typeof r === "string") return r;
        cur = r;
        n = cur.length ? this.nodes.get(cur.join("/")) : { kind: "dir", type: "implied" };
      }
      // Only a folder has more components after it ("file/x", or "file/" ending a target).
      const more = i < comps.length - 1 || target.endsWith("/");
      if (more && n?.kind !== "dir") return "missing";
    }
    return cur;
  }
}
