// Packing a project for `hangar deploy`: the files of the project directory as a .tar.gz, minus what must
// never leave the machine or be rebuilt there (node_modules, .env files, .git, Hangar's and the LangGraph
// CLI's data directories) and what git would ignore: .git/info/exclude, the root .gitignore and the
// .gitignore of every folder below it (a deeper file overrides a higher one), matched by `ignore`.
import { readdirSync, readFileSync, type Dirent } from "node:fs";
import { join } from "node:path";
import ignore, { type Ignore } from "ignore";
import { create } from "tar";

/** Never packed, at any depth, whatever the .gitignore files say (but .env.example, which is). */
const ALWAYS_EXCLUDED = [
  "node_modules/",
  ".git/",
  ".env",
  ".env.*",
  "!.env.example",
  ".hangar*",
  ".langgraph_api/",
];

/** The lines of a file, or none when it cannot be read. */
function readLines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split(/\r?\n/);
  } catch {
    return [];
  }
}

/**
 * The patterns of the .gitignore of folder `dir` (relative to the root, `/`-separated), rewritten relative to
 * the root: a pattern with a slash before its end is anchored at `dir`, any other matches at any depth below
 * it (as globby reads nested .gitignore files).
 */
export function rebasePatterns(lines: string[], dir: string): string[] {
  if (!dir) return lines;
  const out: string[] = [];
  for (const line of lines) {
    if (!line.trim() || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    const p = negated ? line.slice(1) : line;
    const anchored = p.replace(/\/+$/, "").includes("/");
    out.push(`${negated ? "!" : ""}${dir}/${anchored ? p.replace(/^\//, "") : `**/${p}`}`);
  }
  return out;
}

/** The files of a project to pack (relative `/`-separated paths, sorted), with the rules above. */
export function projectFiles(root: string): string[] {
  // Case-sensitive, as git is by default on Linux.
  const always = ignore({ ignorecase: false }).add(ALWAYS_EXCLUDED);
  const project: Ignore = ignore({ ignorecase: false })
    .add(readLines(join(root, ".git/info/exclude")))
    .add(readLines(join(root, ".gitignore")));
  const skipped = (path: string) => {
    const r = always.test(path);
    if (r.ignored) return true;
    if (r.unignored) return false;
    return project.ignores(path);
  };
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    if (rel) project.add(rebasePatterns(readLines(join(root, rel, ".gitignore")), rel));
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      const dir = e.isDirectory();
      if (!dir && !e.isFile() && !e.isSymbolicLink()) continue;
      if (skipped(dir ? `${path}/` : path)) continue;
      if (dir) walk(path);
      else out.push(path);
    }
  };
  walk("");
  return out.sort();
}

/** The project packed as a gzip tarball, in memory (uploads are capped at 200 MB anyway). */
export async function packProject(root: string): Promise<{ data: Buffer; files: string[] }> {
  const files = projectFiles(root);
  const chunks: Buffer[] = [];
  const stream = create({ gzip: true, cwd: root, portable: true, follow: true, noDirRecurse: true }, files);
  for await (const c of stream as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return { data: Buffer.concat(chunks), files };
}
