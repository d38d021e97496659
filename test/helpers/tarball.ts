// Gzip tarballs written header by header (node-tar's Header), with entries in any order and of any shape — a
// hard link before its target, a name given twice — as no archiver run on a real folder would write them.
import { gzipSync } from "node:zlib";
import * as tar from "tar";

export interface RawEntry {
  path: string;
  type: "File" | "Directory" | "Link" | "SymbolicLink";
  linkpath?: string;
  body?: string;
}

/** The gzip tarball of `entries`, in this order, closed by the two zero blocks of a tar's end. */
export function rawTarball(entries: RawEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? "");
    const header = new tar.Header({
      path: e.path,
      type: e.type,
      linkpath: e.linkpath,
      size: body.length,
      mode: e.type === "Directory" ? 0o755 : 0o644,
      mtime: new Date(0),
    });
    header.encode();
    blocks.push(header.block!, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  return gzipSync(Buffer.concat([...blocks, Buffer.alloc(1024)]));
}
