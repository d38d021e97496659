// The builder on its own: sources (uploaded tarball, git URL), refusals (entries outside the directory, missing
// config), failing and interrupted commands, and its build log.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as tar from "tar";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildError } from "../../src/control-plane/domain/errors.ts";
import { buildRevision, existingBuild } from "../../src/control-plane/runtime/local/builder.ts";
import type {
  Deployment,
  DeploymentSource,
  Revision,
  SourceConfig,
} from "../../src/control-plane/domain/types.ts";
import { ROOT, cleanupDir, tempDir } from "../helpers/server.ts";
import { loadSettings, useSettings } from "../../src/lib/settings.ts";
import { rawTarball } from "../helpers/tarball.ts";
import { waitFor } from "../helpers/wait.ts";

// The builder copies local sources only from directories the operator opened (HANGAR_CP_SOURCE_ROOTS, read
// at build time): these tests build from projects in the system's temp directory.
process.env.HANGAR_CP_SOURCE_ROOTS = realpathSync(tmpdir());
// This process's settings are parsed once (and a worker runs several files): parse them again with the root.
useSettings(loadSettings(process.env));

let dataDir: string;
let project: string;

beforeAll(() => {
  dataDir = tempDir("hangar-build-test-");
  project = tempDir("hangar-build-project-");
  cpSync(join(ROOT, "examples"), project, {
    recursive: true,
    filter: (s) => !/[\\/](\.hangar[^\\/]*|\.langgraph_api|node_modules)$/.test(s),
  });
});

afterAll(() => {
  cleanupDir(dataDir);
  cleanupDir(project);
});

function input(source: DeploymentSource, sourceConfig: SourceConfig, tarball?: string, signal?: AbortSignal) {
  const lines: string[] = [];
  const revConfig = { langgraph_config_path: "langgraph.json", source_tarball_path: tarball ?? null };
  const deployment: Deployment = {
    id: randomUUID(),
    tenant_id: randomUUID(),
    name: "b",
    source,
    source_config: sourceConfig,
    source_revision_config: revConfig,
    secrets: [],
    status: "UNKNOWN",
    latest_revision_id: null,
    active_revision_id: null,
    created_at: "",
    updated_at: "",
  };
  const revision: Revision = {
    id: randomUUID(),
    deployment_id: deployment.id,
    status: "BUILDING",
    source,
    source_revision_config: revConfig,
    created_at: "",
    updated_at: "",
  };
  return {
    lines,
    args: {
      deployment,
      revision,
      dataDir,
      signal: signal ?? new AbortController().signal,
      log: (level: string, message: string) => lines.push(`${level} ${message}`),
    },
  };
}

async function buildFails(args: Parameters<typeof buildRevision>[0]): Promise<string> {
  try {
    await buildRevision(args);
  } catch (e) {
    expect(e).toBeInstanceOf(BuildError);
    return (e as Error).message;
  }
  throw new Error("the build succeeded");
}

describe("builder", () => {
  it("builds an uploaded tarball whose project is in a top-level folder", async () => {
    mkdirSync(join(dataDir, "uploads"), { recursive: true });
    const staging = tempDir("hangar-build-staging-");
    cpSync(project, join(staging, "my-agent"), { recursive: true });
    await tar.c({ gzip: true, file: join(dataDir, "uploads/ok.tar.gz"), cwd: staging }, ["my-agent"]);
    cleanupDir(staging);
    const { args, lines } = input("internal_source", {}, "uploads/ok.tar.gz");
    const out = await buildRevision(args);
    expect(out.configPath).toBe(join(dataDir, "builds", args.revision.id, "src/my-agent/langgraph.json"));
    expect(existingBuild(dataDir, args.revision.id)).toEqual(out);
    expect(lines.join("\n")).toContain("graph ok: chat");
  });

  it("refuses tarball entries that would land outside its directory", async () => {
    const staging = tempDir("hangar-build-staging-");
    mkdirSync(join(staging, "inner"));
    writeFileSync(join(staging, "evil.txt"), "x");
    writeFileSync(join(staging, "inner/langgraph.json"), "{}");
    await tar.c(
      {
        gzip: true,
        file: join(dataDir, "uploads/evil.tar.gz"),
        cwd: join(staging, "inner"),
        preservePaths: true,
      },
      ["langgraph.json", "../evil.txt"],
    );
    symlinkSync("/etc", join(staging, "inner/etc-link"));
    await tar.c({ gzip: true, file: join(dataDir, "uploads/link.tar.gz"), cwd: join(staging, "inner") }, [
      "langgraph.json",
      "etc-link",
    ]);
    cleanupDir(staging);
    const evil = input("internal_source", {}, "uploads/evil.tar.gz");
    expect(await buildFails(evil.args)).toContain("the entry '../evil.txt' has '..' in its path");
    expect(existsSync(join(dataDir, "builds", evil.args.revision.id, "evil.txt"))).toBe(false);
    const link = input("internal_source", {}, "uploads/link.tar.gz");
    expect(await buildFails(link.args)).toContain("etc-link");
    // A path outside the data directory is not read at all.
    expect(await buildFails(input("internal_source", {}, "../../etc/passwd").args)).toContain(
      "outside the data directory",
    );
  });

  it("extraction refuses by the upload's rule, in its words: a hard link with '..', a name given twice", async () => {
    const cases = [
      [
        [
          { path: "langgraph.json", type: "File", body: "{}" },
          { path: "passwd", type: "Link", linkpath: "../../../../etc/passwd" },
          { path: "passwd", type: "File", body: "x" },
        ],
        "the hard link 'passwd' -> '../../../../etc/passwd' has '..' in its target",
      ],
      [
        [
          { path: "x/f", type: "File" },
          { path: "x", type: "File" },
        ],
        "'x' appears twice in the archive, as a folder and then as a file",
      ],
    ] as const;
    mkdirSync(join(dataDir, "uploads"), { recursive: true });
    for (const [entries, why] of cases) {
      const rel = `uploads/raw-${randomUUID()}.tar.gz`;
      writeFileSync(join(dataDir, rel), rawTarball([...entries]));
      const { args } = input("internal_source", {}, rel);
      expect(await buildFails(args)).toBe(`The source tarball is refused: ${why}.`);
      expect(existsSync(join(dataDir, "builds", args.revision.id))).toBe(false);
    }
  });

  it("clones a git URL (repo_ref)", async () => {
    const repo = tempDir("hangar-build-git-");
    cpSync(project, repo, { recursive: true });
    const git = (...a: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...a], {
        cwd: repo,
        stdio: "ignore",
      });
    git("init", "-q", "-b", "main");
    git("add", ".");
    git("commit", "-q", "-m", "init");
    const { args, lines } = input("github", { repo_url: `file://${repo}` });
    args.revision.source_revision_config.repo_ref = "main";
    const out = await buildRevision(args);
    expect(existsSync(out.configPath)).toBe(true);
    expect(lines.join("\n")).toContain("$ git clone --depth 1 --branch main");
    const bad = input("github", { repo_url: `file://${repo}` });
    bad.args.revision.source_revision_config.repo_ref = "no-such-branch";
    expect(await buildFails(bad.args)).toMatch(/git clone failed \(exit code 128\).*no-such-branch/);
    cleanupDir(repo);
  });

  it("git reads a repo_url that looks like an option as a repository ('--' before it), were validation bypassed", async () => {
    const marker = join(dataDir, `pwned-${randomUUID()}`);
    // Without '--', git clone would take this for its --upload-pack and the build's folder for the repository.
    const url = `--upload-pack=touch ${marker};`;
    const { args, lines } = input("github", { repo_url: url });
    args.revision.source_revision_config.repo_ref = "main";
    expect(await buildFails(args)).toMatch(/git clone failed/);
    expect(lines.join("\n")).toContain(`$ git clone --depth 1 --branch main -- ${url} `);
    expect(lines.join("\n")).toContain(`repository '${url}' does not exist`);
    expect(existsSync(marker)).toBe(false);
  });

  it("fails with the reason of a failing install command, and when the config is missing", async () => {
    const failing = input("github", {
      repo_url: project,
      install_command: "echo installing; echo broken >&2; exit 3",
    });
    expect(await buildFails(failing.args)).toBe("install_command failed (exit code 3): broken");
    expect(failing.lines).toContain("INFO installing");
    expect(failing.lines.at(-1)).toBe("ERROR Build failed: install_command failed (exit code 3): broken");
    const missing = input("github", { repo_url: project });
    missing.args.revision.source_revision_config.langgraph_config_path = "nope/langgraph.json";
    expect(await buildFails(missing.args)).toContain('"nope/langgraph.json": no such file');
    // A path outside HANGAR_CP_SOURCE_ROOTS is refused at build time too, whether or not it exists.
    for (const repo_url of ["/no/such/dir", "/etc"]) {
      expect(await buildFails(input("github", { repo_url }).args)).toContain(
        "is not a directory under HANGAR_CP_SOURCE_ROOTS",
      );
    }
  });

  it("stops a command when the build is interrupted", async () => {
    const ac = new AbortController();
    // A sleep no other process has: whether it still runs is read from /proc.
    const marker = `sleep 6${Math.floor(Math.random() * 1e6)}`;
    const { args } = input("github", { repo_url: project, install_command: marker }, undefined, ac.signal);
    const running = () =>
      readdirSync("/proc")
        .filter((d) => /^\d+$/.test(d))
        .some((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").includes(marker);
          } catch {
            return false; // the process ended meanwhile
          }
        });
    const failed = buildFails(args);
    await waitFor("the install command to start", async () => running());
    ac.abort();
    expect(await failed).toBe("Build interrupted");
    expect(running()).toBe(false);
  });
});
