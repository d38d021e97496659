// A revision's build in `<data-dir>/builds/<revision id>`: fetch the source (uploaded tarball, local directory or
// git), install dependencies, run the build command, then `hangar check` imports every graph. Writes build logs.
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { cp, mkdir, rm, symlink } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { settings } from "../../../lib/settings.js";
import { childEnv, HANGAR_BIN, HANGAR_ROOT, runCommand, type CommandResult } from "./proc.js";
import { chownTree, sandboxFor, type Sandbox } from "./sandbox.js";
import { checkLocalSource, localPathOf, parseSourceRoots } from "../../domain/source-roots.js";
import { extractSourceTarball, removeFailedBuild, TarballError } from "../../domain/tarball.js";
import type { Deployment, LogLevel, Revision } from "../../domain/types.js";
import { BuildError } from "../../domain/errors.js";

export interface BuildInput {
  deployment: Deployment;
  revision: Revision;
  dataDir: string;
  log: (level: LogLevel, message: string) => void;
  signal: AbortSignal;
  /** How build commands and `hangar check` run; default: the data dir's sandbox (HANGAR_CP_SANDBOX*). */
  sandbox?: Sandbox;
}

export interface BuildOutput {
  /** The build directory: `<data-dir>/builds/<revision id>`. */
  dir: string;
  /** The project's langgraph.json inside it. */
  configPath: string;
  /** The source's root (what langgraph_config_path is relative to), inside it. */
  root: string;
}

const MINUTE = 60_000;
export const INSTALL_TIMEOUT_MS = 15 * MINUTE;
export const STEP_TIMEOUT_MS = 5 * MINUTE;

/** HOME of the build's commands (npm's cache), inside the build folder; removed once the build succeeded. */
const HOME = "home";

/** Written once a build succeeded, so a restarted control plane can start the revision without rebuilding. */
const MARKER = "build.json";

export function buildDirOf(dataDir: string, revisionId: string): string {
  return join(dataDir, "builds", revisionId);
}

/** The output of a finished build of the revision, if it is still on disk. */
export function existingBuild(dataDir: string, revisionId: string): BuildOutput | null {
  const dir = buildDirOf(dataDir, revisionId);
  try {
    const { configPath, root } = JSON.parse(readFileSync(join(dir, MARKER), "utf8")) as {
      configPath: string;
      root?: string;
    };
    return existsSync(configPath) ? { dir, configPath, root: root ?? dirname(configPath) } : null;
  } catch {
    return null;
  }
}

/** Whether `child` is `parent` or inside it. */
function inside(parent: string, child: string): boolean {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

const oneLine = (s: string, max = 500) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
};

export async function buildRevision(input: BuildInput): Promise<BuildOutput> {
  const { deployment, revision, dataDir, log, signal } = input;
  const started = Date.now();
  const dir = buildDirOf(dataDir, revision.id);
  const srcDir = join(dir, "src");
  const aborted = () => {
    if (signal.aborted) throw new BuildError("Build interrupted");
  };
  try {
    await rm(dir, { recursive: true, force: true });
    await mkdir(srcDir, { recursive: true });
    log("INFO", `Building revision ${revision.id} of deployment ${deployment.name} (${deployment.id})`);

    const root = await fetchSource(input, srcDir);
    aborted();
    const configRel =
      revision.source_revision_config.langgraph_config_path ||
      deployment.source_revision_config.langgraph_config_path ||
      "langgraph.json";
    const configPath = resolve(root, configRel);
    if (!inside(root, configPath)) {
      throw new BuildError(`langgraph_config_path "${configRel}" points outside the source`);
    }
    if (!existsSync(configPath)) {
      throw new BuildError(`langgraph_config_path "${configRel}": no such file in the source`);
    }
    const configDir = dirname(configPath);
    placeholderEnvFile(configPath, root, log);
    const secrets = Object.fromEntries((deployment.secrets ?? []).map((s) => [s.name, s.value]));
    // Every command below runs sandboxed (where the host can): as the deployment's own uid, seeing its build
    // folder (writable, HOME inside it) and the system, not the control plane's data or other builds.
    const sandbox = input.sandbox ?? sandboxFor(dataDir);
    const uid = sandbox.uidFor(deployment.id);
    const home = join(dir, HOME);
    await mkdir(home, { recursive: true });
    if (sandbox.enabled) await chownTree(dir, uid);
    const env = childEnv(secrets, home);
    let n = 0;
    const run = async (cmd: string, args: string[], cwd: string, timeoutMs: number) => {
      const cage = sandbox.wrap({
        name: `build-${revision.id}-${++n}`,
        uid,
        cwd,
        writable: [dir],
        cmd,
        args,
        env,
      });
      try {
        return await runCommand(cage.cmd, cage.args, {
          cwd: cage.cwd,
          env: cage.env,
          timeoutMs,
          signal,
          onLine: (line) => log("INFO", line),
        });
      } finally {
        cage.done();
      }
    };
    const step = async (what: string, cmd: string, args: string[], cwd: string, timeoutMs: number) => {
      aborted();
      log("INFO", `$ ${[cmd, ...args].join(" ")}`);
      const r = await run(cmd, args, cwd, timeoutMs);
      if (r.code !== 0) throw new BuildError(commandFailure(what, r, timeoutMs));
      return r;
    };

    // Install.
    const install = deployment.source_config.install_command;
    const pkgDir = [root, configDir].find((d) => existsSync(join(d, "package.json")));
    if (install) {
      await step("install_command", "sh", ["-c", install], root, INSTALL_TIMEOUT_MS);
    } else if (pkgDir) {
      await step("npm install", "npm", ["install", "--no-audit", "--no-fund"], pkgDir, INSTALL_TIMEOUT_MS);
    } else {
      // No package.json: the graphs import the packages of this Hangar installation (same @langchain/*), and
      // run as ES modules as they do in Hangar's own examples (without a package.json saying "type": "module",
      // tsx would load them as CommonJS, which fails on their imports).
      if (!existsSync(join(root, "node_modules"))) {
        log("INFO", `No package.json: linking ${join(HANGAR_ROOT, "node_modules")} as node_modules`);
        await symlink(join(HANGAR_ROOT, "node_modules"), join(root, "node_modules"), "dir");
      }
      log("INFO", 'No package.json: writing one with "type": "module"');
      writeFileSync(
        join(root, "package.json"),
        `${JSON.stringify({ private: true, type: "module" }, null, 2)}\n`,
      );
    }

    // Build.
    const build = deployment.source_config.build_command;
    if (build) await step("build_command", "sh", ["-c", build], configDir, STEP_TIMEOUT_MS);

    // Check: every graph imports.
    aborted();
    log("INFO", `$ hangar check --config ${relative(root, configPath)}`);
    const check = await run(
      process.execPath,
      [HANGAR_BIN, "check", "--config", configPath],
      configDir,
      STEP_TIMEOUT_MS,
    );
    if (check.code !== 0) throw new BuildError(checkFailure(check));
    await rm(home, { recursive: true, force: true });

    writeFileSync(
      join(dir, MARKER),
      JSON.stringify({ configPath, root, built_at: new Date().toISOString() }),
    );
    log("INFO", `Build finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return { dir, configPath, root };
  } catch (e) {
    const err =
      e instanceof BuildError
        ? signal.aborted
          ? new BuildError("Build interrupted")
          : e
        : new BuildError(oneLine(`Build error: ${(e as Error).message}`));
    log("ERROR", `Build failed: ${err.message}`);
    // Nothing of a failed build stays (its source, what its commands wrote).
    await removeFailedBuild(dir).catch(() => {});
    throw err;
  }
}

/**
 * `"env": ".env"` names a file deploys keep out of the upload (its values travel as the deployment's secrets,
 * which the build and the Agent Server get as environment variables, and those win over the file). When the
 * file is not in the source, an empty one stands in for it, so the project loads as it does on the machine
 * it came from.
 */
function placeholderEnvFile(configPath: string, root: string, log: BuildInput["log"]): void {
  let env: unknown;
  try {
    env = (JSON.parse(readFileSync(configPath, "utf8")) as { env?: unknown }).env;
  } catch {
    return; // hangar check reports an unreadable langgraph.json
  }
  if (typeof env !== "string" || !env.trim()) return;
  const file = resolve(dirname(configPath), env);
  if (!inside(root, file) || existsSync(file)) return;
  log(
    "INFO",
    `env file "${env}" is not in the source (deploys keep it on the machine and send its values as secrets): ` +
      "the secrets stand in for it",
  );
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, "# Hangar: this file was not uploaded; its values are the deployment's secrets.\n");
}

function commandFailure(what: string, r: CommandResult, timeoutMs: number): string {
  if (r.aborted) return "Build interrupted";
  if (r.timedOut) return `${what} did not finish within ${Math.round(timeoutMs / MINUTE)} min`;
  if (r.spawnError) return oneLine(`${what} could not start: ${r.spawnError}`);
  const last = [...r.tail].reverse().find((l) => l.trim());
  return oneLine(`${what} failed (exit code ${r.code ?? "signal"})${last ? `: ${last}` : ""}`);
}

/** The reason `hangar check` gave: its error message up to the stack trace, on one line. */
function checkFailure(r: CommandResult): string {
  if (r.aborted) return "Build interrupted";
  if (r.timedOut) return `hangar check did not finish within ${STEP_TIMEOUT_MS / MINUTE} min`;
  const start = r.tail.findIndex((l) => l.startsWith("hangar check: "));
  if (start < 0) return commandFailure("hangar check", r, STEP_TIMEOUT_MS);
  const lines: string[] = [];
  for (const line of r.tail.slice(start, start + 8)) {
    if (/^\s+at\s/.test(line)) break;
    lines.push(line);
  }
  return oneLine(lines.join(" ").slice("hangar check: ".length));
}

/** Fetches the source into `srcDir`; returns the source root (where langgraph_config_path is relative to). */
async function fetchSource(input: BuildInput, srcDir: string): Promise<string> {
  const { deployment, revision, dataDir, log, signal } = input;
  if (deployment.source === "internal_source") {
    const rel =
      revision.source_revision_config.source_tarball_path ??
      deployment.source_revision_config.source_tarball_path;
    if (!rel) throw new BuildError("source_revision_config.source_tarball_path is not set");
    const file = resolve(dataDir, rel);
    if (!inside(dataDir, file)) throw new BuildError(`source tarball "${rel}" is outside the data directory`);
    if (!existsSync(file)) throw new BuildError(`source tarball "${rel}" not found`);
    log("INFO", `Unpacking source tarball ${rel} (${statSync(file).size} bytes)`);
    try {
      // Capped (HANGAR_CP_MAX_EXTRACTED_MB), entries and links leaving the folder refused.
      await extractSourceTarball(file, srcDir);
    } catch (e) {
      const why = (e as Error).message;
      throw new BuildError(
        oneLine(e instanceof TarballError ? why : `could not unpack the source tarball: ${why}`),
      );
    }
    return tarballRoot(revision, deployment, srcDir);
  }
  if (deployment.source === "github") {
    const url = deployment.source_config.repo_url;
    if (!url) throw new BuildError("source_config.repo_url is not set");
    const local = localPathOf(url);
    if (local !== null) {
      // Checked again at build time (the create checked it too): the roots, or a link on the path, may have
      // changed since. The copy runs outside the sandbox, so it reads only what the operator opened.
      let roots: string[];
      try {
        roots = parseSourceRoots(settings().controlPlane.sourceRoots);
      } catch (e) {
        throw new BuildError((e as Error).message);
      }
      const checked = checkLocalSource(local, roots, [dataDir]);
      if (!checked.ok) {
        throw new BuildError(`repo_url "${url}" is not a directory under HANGAR_CP_SOURCE_ROOTS`);
      }
      // A file:// URL names a git repository (cloned below, at repo_ref); a path is copied as it is.
      if (/^file:/i.test(url)) {
        await gitClone(input, url, srcDir, signal, log);
        return srcDir;
      }
      const from = checked.path;
      log("INFO", `Copying ${url} (without node_modules, .git, .hangar*)`);
      await cp(from, srcDir, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (s) => {
          if (s === from) return true;
          const name = basename(s);
          return name !== "node_modules" && name !== ".git" && !name.startsWith(".hangar");
        },
      });
      return srcDir;
    }
    await gitClone(input, url, srcDir, signal, log);
    return srcDir;
  }
  throw new BuildError(`source "${deployment.source}" is not built locally (it needs a listener)`);
}

async function gitClone(
  input: BuildInput,
  url: string,
  srcDir: string,
  signal: AbortSignal,
  log: BuildInput["log"],
): Promise<void> {
  const ref = input.revision.source_revision_config.repo_ref;
  const sha = input.revision.source_revision_config.repo_commit_sha;
  // Never wait for credentials on a terminal nobody watches.
  const env = childEnv({ GIT_TERMINAL_PROMPT: "0" });
  const git = async (args: string[], cwd: string) => {
    log("INFO", `$ git ${args.join(" ")}`);
    const r = await runCommand("git", args, {
      cwd,
      env,
      timeoutMs: STEP_TIMEOUT_MS,
      signal,
      onLine: (line) => log("INFO", line),
    });
    if (r.code !== 0) throw new BuildError(commandFailure(`git ${args[0]}`, r, STEP_TIMEOUT_MS));
    return r;
  };
  // No value reaches git where it could be read as an option: "--" (or --end-of-options) before positional
  // arguments, and a ref only as the argument of --branch. The API refuses values beginning with "-" too.
  await git(["clone", "--depth", "1", ...(ref ? ["--branch", ref] : []), "--", url, srcDir], dirname(srcDir));
  if (sha) {
    await git(["fetch", "--depth", "1", "--", "origin", sha], srcDir);
    // For checkout "--" ends the revision (a path would follow it); the revision is a constant.
    await git(["checkout", "--detach", "FETCH_HEAD", "--"], srcDir);
  }
  await git(["rev-parse", "--verify", "--end-of-options", "HEAD"], srcDir);
}

/**
 * Where the tarball's project is: its top level, or the single directory it holds (archives made of a folder,
 * e.g. `project/langgraph.json`) when langgraph_config_path is found only there.
 */
function tarballRoot(revision: Revision, deployment: Deployment, srcDir: string): string {
  const configRel =
    revision.source_revision_config.langgraph_config_path ||
    deployment.source_revision_config.langgraph_config_path ||
    "langgraph.json";
  if (existsSync(join(srcDir, configRel))) return srcDir;
  const entries = readdirSync(srcDir, { withFileTypes: true });
  if (entries.length === 1 && entries[0].isDirectory()) {
    const nested = join(srcDir, entries[0].name);
    if (existsSync(join(nested, configRel))) return nested;
  }
  return srcDir;
}
