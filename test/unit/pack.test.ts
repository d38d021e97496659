// What `hangar deploy` packs: the project's files minus what git would ignore (.git/info/exclude, the root and
// nested .gitignore files) and what never leaves the machine (node_modules, .env files, .git, data folders).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { projectFiles, rebasePatterns } from "../../src/cli/deploy/pack.ts";

let root: string;

function write(rel: string, text = "x\n") {
  mkdirSync(dirname(join(root, rel)), { recursive: true });
  writeFileSync(join(root, rel), text);
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "hangar-pack-"));
  write(
    ".gitignore",
    "*.log\n!keep.log\nbuild/\n/root-only.txt\ndocs/*.md\n!docs/README.md\nd/\n# a comment\n",
  );
  write(".git/info/exclude", "secret-notes.txt\n");
  write("a/.gitignore", "*.tmp\n/local.txt\ngen/\n!important.log\nc/deep.txt\n");
  write("p/.gitignore", "!d/\n");
  const files = [
    "x.log",
    "keep.log",
    "build/out.js",
    "root-only.txt",
    "a/root-only.txt",
    "docs/a.md",
    "docs/README.md",
    "secret-notes.txt",
    "a/secret-notes.txt",
    "a/x.tmp",
    "a/b/y.tmp",
    "a/local.txt",
    "a/b/local.txt",
    "a/important.log",
    "a/c/deep.txt",
    "a/b/c/deep.txt",
    "a/gen/h.ts",
    "src/gen/g.ts",
    "p/d/z.txt",
    "p/d/w.log",
    "q/d/z.txt",
    "Upper/X.LOG",
    "ok.ts",
    ".env",
    ".env.example",
    "a/.env.local",
    "node_modules/m/index.js",
    ".hangar/data.db",
    ".langgraph_api/x.json",
  ];
  for (const f of files) write(f);
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("projectFiles", () => {
  it("packs what git would list as untracked-but-not-ignored, without secrets and dependencies", () => {
    // The list `git ls-files --others --exclude-standard` gives for this tree, less the .env files.
    expect(projectFiles(root)).toEqual([
      ".env.example",
      ".gitignore",
      "Upper/X.LOG",
      "a/.gitignore",
      "a/b/c/deep.txt",
      "a/b/local.txt",
      "a/important.log",
      "a/root-only.txt",
      "docs/README.md",
      "keep.log",
      "ok.ts",
      "p/.gitignore",
      "p/d/z.txt",
      "src/gen/g.ts",
    ]);
  });

  it("never packs node_modules, .env files or .git, whatever a .gitignore re-includes", () => {
    write("nested/.gitignore", "!node_modules/\n!.env\n");
    write("nested/node_modules/m.js");
    write("nested/.env");
    write("nested/kept.ts");
    try {
      expect(projectFiles(root).filter((f) => f.startsWith("nested/"))).toEqual([
        "nested/.gitignore",
        "nested/kept.ts",
      ]);
    } finally {
      rmSync(join(root, "nested"), { recursive: true, force: true });
    }
  });
});

describe("rebasePatterns", () => {
  it("anchors patterns with a slash at their folder and lets the others match at any depth below it", () => {
    expect(
      rebasePatterns(["# c", "", "*.tmp", "/local.txt", "gen/", "!keep.tmp", "c/deep.txt"], "a/b"),
    ).toEqual(["a/b/**/*.tmp", "a/b/local.txt", "a/b/**/gen/", "!a/b/**/keep.tmp", "a/b/c/deep.txt"]);
  });
});
