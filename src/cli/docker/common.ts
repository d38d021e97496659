// What `hangar dockerfile`, `build` and `up` share: reading the project (its problems said in one line), and
// running the docker and Compose commands of this machine (Compose 2's `docker compose` plugin, else Compose 1's
// `docker-compose`).
import { spawn, spawnSync, type StdioOptions } from "node:child_process";
import { ConfigError } from "../../lib/settings/project.js";
import { readDockerProject, type DockerProject } from "./project.js";

export interface ImageOptions {
  config: string;
  baseImage?: string;
  buildImage?: string;
}

/** The project of `config`, its warnings printed; undefined (after printing why) when it cannot be read. */
export function loadForDocker(cmd: string, config: string): DockerProject | undefined {
  try {
    const p = readDockerProject(config);
    for (const w of p.warnings) console.error(`${cmd}: warning: ${w}`);
    return p;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    console.error(`${cmd}: ${e.message}`);
    return undefined;
  }
}

/** Runs a command to its end; its exit code (127 when it could not start). */
export function run(
  command: string,
  args: string[],
  opts: { cwd?: string; stdio?: StdioOptions; input?: string } = {},
): Promise<number> {
  return new Promise((done) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      stdio: opts.stdio ?? ["ignore", "inherit", "inherit"],
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    child.once("error", () => done(127));
    child.once("exit", (code, signal) => done(code ?? (signal ? 128 : 1)));
  });
}

/** A command's output, or undefined when it fails. */
export function output(command: string, args: string[], cwd?: string): string | undefined {
  const r = spawnSync(command, args, { cwd, encoding: "utf8" });
  return r.status === 0 ? r.stdout : undefined;
}

/** Why Docker cannot be used here (no client, no daemon), or undefined when it can. */
export function dockerProblem(): string | undefined {
  const r = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" });
  if (r.error) return "the docker command is not installed (apt-get install docker.io)";
  if (r.status !== 0) {
    const why = (r.stderr || r.stdout).trim().split("\n").pop() ?? "";
    return `the Docker daemon does not answer (${why})`;
  }
  return undefined;
}

/** The Compose command of this machine: `docker compose` (Compose 2) or `docker-compose` (Compose 1). */
export function composeCommand(): string[] | undefined {
  if (output("docker", ["compose", "version", "--short"]) !== undefined) return ["docker", "compose"];
  if (output("docker-compose", ["version", "--short"]) !== undefined) return ["docker-compose"];
  return undefined;
}
