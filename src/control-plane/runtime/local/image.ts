// The image of a revision built for a listener: the sandboxed build's output copied onto the base image
// (HANGAR_CP_IMAGE_BASE) by a Dockerfile of COPY and metadata lines only, so nothing of the tenant runs in the
// Docker daemon, then pushed to the registry (HANGAR_CP_IMAGE_REGISTRY) with the credentials of a Docker config.
import { existsSync, lstatSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { cp, mkdir, rm, symlink, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, join, relative } from "node:path";
import { HANGAR_HOME, IMAGE_PORT, imageEntrypoint } from "../../../lib/image-layout.js";
import { BuildError } from "../../domain/errors.js";
import type { Deployment, LogLevel, Revision } from "../../domain/types.js";
import type { BuildOutput } from "./builder.js";
import { childEnv, HANGAR_ROOT, runCommand, type CommandResult } from "./proc.js";

/** Longest a docker build or push may take. */
const DOCKER_TIMEOUT_MS = 15 * 60_000;

export interface ImageSettings {
  /** Registry host and repository prefix: images are `<registry>/<deployment id>:<revision id>`. */
  registry: string;
  /** The image assembled on: Node, and Hangar in HANGAR_HOME with `hangar` on PATH. */
  base: string;
  /** Docker's configuration directory with the registry's credentials (default: Docker's own). */
  dockerConfig?: string;
}

/** The registry's host (the first part of the image name). */
export const registryHost = (registry: string) => registry.split("/")[0];

/** The image of a revision. */
export const imageOf = (s: ImageSettings, d: Deployment, r: Revision) =>
  `${s.registry.replace(/\/+$/, "")}/${d.id.toLowerCase()}:${r.id.toLowerCase()}`;

/**
 * What a Kubernetes Secret of type kubernetes.io/dockerconfigjson needs to pull from the registry: the entry of
 * `auths` for its host in the Docker config, alone (nothing else of the file). Undefined when it has none (an
 * open registry, or credentials in a helper, which cannot be handed on).
 */
export function pullConfig(s: Pick<ImageSettings, "registry" | "dockerConfig">): string | undefined {
  const file = join(s.dockerConfig ?? join(homedir(), ".docker"), "config.json");
  if (!existsSync(file)) return undefined;
  let config: { auths?: Record<string, unknown> };
  try {
    config = JSON.parse(readFileSync(file, "utf8")) as typeof config;
  } catch (e) {
    throw new Error(`${file} is not JSON: ${(e as Error).message}`);
  }
  const host = registryHost(s.registry);
  const entry = config.auths?.[host] ?? config.auths?.[`https://${host}`] ?? config.auths?.[`http://${host}`];
  return entry ? JSON.stringify({ auths: { [host]: entry } }) : undefined;
}

/** The folder name of the project in the image, from the deployment's name. */
const appName = (d: Deployment) => d.name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-") || "app";

/** A JSON array of a Dockerfile's exec form. */
const execForm = (args: string[]) => JSON.stringify(args);

/** The Dockerfile: the base image, the project copied in (owned by root, read-only to the server), metadata. */
export function imageDockerfile(
  s: ImageSettings,
  d: Deployment,
  r: Revision,
  build: Pick<BuildOutput, "root" | "configPath">,
): string {
  const workdir = `/deps/${appName(d)}`;
  const config = relative(build.root, build.configPath);
  const entrypoint = imageEntrypoint(`${workdir}/${config}`);
  return [
    `# Revision ${r.id} of deployment ${d.name} (${d.id}), assembled by the Hangar control plane from its`,
    "# sandboxed build: files copied onto the base image, nothing run.",
    `FROM ${s.base}`,
    `COPY --chown=0:0 app/ ${workdir}/`,
    `WORKDIR ${workdir}`,
    `ENV PORT=${IMAGE_PORT}`,
    `LABEL dev.hangar.deployment-id="${d.id}" dev.hangar.revision-id="${r.id}"`,
    `ENTRYPOINT ${execForm(entrypoint)}`,
    'CMD ["serve"]',
    "",
  ].join("\n");
}

const oneLine = (s: string, max = 500) => {
  const line = s.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
};

/**
 * Builds the revision's image from its build output, pushes it, removes the local copy; returns its name.
 * `workDir` (removed after) holds the build context: the Dockerfile and `app/`, a copy of the source root without
 * `.git`, where a `node_modules` link to this Hangar's modules (a project without package.json) points to the
 * base image's instead.
 */
export async function buildAndPushImage(input: {
  settings: ImageSettings;
  deployment: Deployment;
  revision: Revision;
  build: Pick<BuildOutput, "root" | "configPath">;
  workDir: string;
  log: (level: LogLevel, message: string) => void;
  signal: AbortSignal;
}): Promise<string> {
  const { settings: s, deployment: d, revision: r, build, workDir, log, signal } = input;
  const image = imageOf(s, d, r);
  const app = join(workDir, "app");
  await rm(workDir, { recursive: true, force: true });
  await mkdir(workDir, { recursive: true });
  try {
    await cp(build.root, app, {
      recursive: true,
      verbatimSymlinks: true,
      filter: (src) => basename(src) !== ".git",
    });
    const modules = join(app, "node_modules");
    if (existsSync(modules) || isLink(modules)) {
      if (isLink(modules) && readlinkSync(modules) === join(HANGAR_ROOT, "node_modules")) {
        await unlink(modules);
        await symlink(`${HANGAR_HOME}/node_modules`, modules);
      }
    }
    writeFileSync(join(workDir, "Dockerfile"), imageDockerfile(s, d, r, build));
    const docker = async (what: string, args: string[]) => {
      if (signal.aborted) throw new BuildError("Build interrupted");
      const full = [...(s.dockerConfig ? ["--config", s.dockerConfig] : []), ...args];
      log("INFO", `$ docker ${full.join(" ")}`);
      const res = await runCommand("docker", full, {
        cwd: workDir,
        env: childEnv(s.dockerConfig ? { DOCKER_CONFIG: s.dockerConfig } : {}),
        timeoutMs: DOCKER_TIMEOUT_MS,
        signal,
        onLine: (line) => log("INFO", line),
      });
      if (res.code !== 0) throw new BuildError(dockerFailure(what, res));
    };
    log("INFO", `Assembling image ${image} on ${s.base} (files only: nothing of the project runs)`);
    // No network for the build: it runs nothing anyway.
    await docker("docker build", ["build", "--network", "none", "-t", image, "."]);
    log("INFO", `Pushing ${image}`);
    try {
      await docker("docker push", ["push", image]);
    } finally {
      await runCommand("docker", ["rmi", image], {
        cwd: workDir,
        env: childEnv(),
        timeoutMs: 120_000,
        signal: new AbortController().signal,
        onLine: () => {},
      }).catch(() => undefined);
    }
    log("INFO", `Pushed ${image}`);
    return image;
  } finally {
    await rm(workDir, { recursive: true, force: true }).catch(() => {});
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

function dockerFailure(what: string, r: CommandResult): string {
  if (r.aborted) return "Build interrupted";
  if (r.timedOut) return `${what} did not finish within ${DOCKER_TIMEOUT_MS / 60_000} min`;
  if (r.spawnError) return oneLine(`${what} could not start (is the docker CLI installed?): ${r.spawnError}`);
  const last = [...r.tail].reverse().find((l) => l.trim());
  return oneLine(`${what} failed (exit code ${r.code ?? "signal"})${last ? `: ${last}` : ""}`);
}
