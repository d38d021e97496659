// Packing a project for `hangar deploy`: the files of the project directory as a .tar.gz, minus what must
// never leave the machine or be rebuilt there (node_modules, .env files, .git, Hangar's and the LangGraph
// CLI's data directories) and what the root .gitignore ignores.
//
// The .gitignore subset understood: blank lines and `#` comments; `!` re-includes (last match wins, and as in
// git a file under an ignored directory cannot be re-included); a trailing `/` matches directories only; a
// leading or inner `/` anchors the pattern at the root, otherwise it matches at any depth; `*`, `?`, `[...]`
// and `**`. Only the root .gitignore is read (not nested ones, nor .git/info/exclude).
import { readdirSync, readFileSync, type Dirent } from "node:fs";
import { join } from "node:path";
import { create } from "tar";

/** Never packed, at any depth. */
const ALWAYS_EXCLUDED = [
  "node_modules/",
  ".git/",
  ".env",
  ".env.*",
  "!.env.example",
  ".hangar*",
  ".langgraph_api/",
];

interface Rule {
  re: RegExp;
  negate: boolean;
  dirOnly: boolean;
}

function globToRegExp(glob: string): string {
  let re = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        // `**/` any leading dirs, `/**` everything below, `**` anything
        if (glob[i + 2] === "/") {
          re += "(?:.*/)?";
          i += 2;
        } else {
          re += ".*";
          i += 1;
        }
      } else re += "[^/]*";
    } else if (c === "?") re += "[^/]";
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) re += "\\[";
      else {
        re +=
          "[" +
          glob
            .slice(i + 1, end)
            .replace(/^!/, "^")
            .replace(/\\/g, "\\\\") +
          "]";
        i = end;
      }
    } else if (c === "\\" && i + 1 < glob.length) {
      re += glob[++i].replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    } else re += c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  }
  return re;
}

/** Parses .gitignore lines into rules. */
export function parseIgnore(lines: string[]): Rule[] {
  const rules: Rule[] = [];
  for (let raw of lines) {
    raw = raw.replace(/\r$/, "");
    if (!raw.trim() || raw.startsWith("#")) continue;
    let p = raw.replace(/(?<!\\)\s+$/, "");
    const negate = p.startsWith("!");
    if (negate) p = p.slice(1);
    const dirOnly = p.endsWith("/");
    if (dirOnly) p = p.replace(/\/+$/, "");
    const anchored = p.includes("/");
    p = p.replace(/^\//, "");
    if (!p) continue;
    const body = globToRegExp(p);
    rules.push({ re: new RegExp(`^${anchored ? "" : "(?:.*/)?"}${body}$`), negate, dirOnly });
  }
  return rules;
}

/** Whether a path (relative, `/`-separated) is ignored by the rules: the last matching rule wins. */
export function isIgnored(rules: Rule[], path: string, isDir: boolean): boolean {
  let ignored = false;
  for (const r of rules) {
    if (r.dirOnly && !isDir) continue;
    if (r.re.test(path)) ignored = !r.negate;
  }
  return ignored;
}

/** The files of a project to pack (relative paths, sorted), with the rules above. */
export function projectFiles(root: string): string[] {
  let gitignore: string[] = [];
  try {
    gitignore = readFileSync(join(root, ".gitignore"), "utf8").split("\n");
  } catch {
    // no .gitignore
  }
  const rules = parseIgnore([...gitignore, ...ALWAYS_EXCLUDED]);
  const out: string[] = [];
  const walk = (rel: string) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(join(root, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      const dir = e.isDirectory();
      if (!dir && !e.isFile() && !e.isSymbolicLink()) continue;
      if (isIgnored(rules, path, dir)) continue;
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
