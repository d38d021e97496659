// `hangar build -t TAG [--base-image IMG] [--build-image IMG] [-- docker build args]`: the project's image, built
// by the local Docker with the Dockerfile `hangar dockerfile` writes (the legacy builder and BuildKit alike).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { VERSION } from "../../lib/version.js";
import { dockerProblem, loadForDocker, run, type ImageOptions } from "./common.js";
import { baseDockerfile, dockerfile, PACKAGE_DIR } from "./dockerfile.js";
import { prepareContext, writeHangarPackage } from "./package.js";
import type { DockerProject } from "./project.js";

export interface BuildOptions extends ImageOptions {
  tag: string;
  /** Hangar without a project (no langgraph.json read): the control plane's HANGAR_CP_IMAGE_BASE. */
  baseOnly?: boolean;
}

/**
 * Builds the image of `p` as `tag`: writes .hangar-docker/ (Hangar's package and the Dockerfile), checks the
 * .dockerignore (writing one when missing), runs `docker build`. Returns the exit code; `cmd` names the command in
 * its messages.
 */
export async function buildImage(
  cmd: string,
  p: DockerProject,
  tag: string,
  opts: ImageOptions,
  extraArgs: string[] = [],
  stdio: "inherit" | "quiet" = "inherit",
): Promise<number> {
  const files = prepareContext(cmd, p);
  if (!files) return 1;
  const file = join(p.projectDir, PACKAGE_DIR, "Dockerfile");
  writeFileSync(
    file,
    dockerfile(p, {
      version: VERSION,
      lockfile: files.lockfile,
      baseImage: opts.baseImage,
      buildImage: opts.buildImage,
    }),
  );
  const args = ["build", "-t", tag, "-f", file, ...extraArgs, p.projectDir];
  console.error(`$ docker ${args.join(" ")}`);
  const code = await run("docker", args, {
    stdio: stdio === "inherit" ? ["ignore", "inherit", "inherit"] : ["ignore", "ignore", "inherit"],
  });
  if (code !== 0) console.error(`${cmd}: docker build failed (exit code ${code})`);
  return code === 0 ? 0 : 1;
}

/**
 * `--base-only`: Hangar's image without a project, on Node of this process's major version (the control plane
 * installs projects' dependencies with this Node, so their native modules fit the image's), built from a
 * temporary context holding Hangar's package.
 */
async function buildBase(cmd: string, opts: BuildOptions, extraArgs: string[]): Promise<number> {
  const context = mkdtempSync(join(tmpdir(), "hangar-base-"));
  try {
    let files;
    try {
      files = writeHangarPackage(context, (line) => console.error(line));
    } catch (e) {
      console.error(`${cmd}: ${(e as Error).message}`);
      return 1;
    }
    const file = join(context, PACKAGE_DIR, "Dockerfile");
    writeFileSync(
      file,
      baseDockerfile({
        version: VERSION,
        lockfile: files.lockfile,
        baseImage: opts.baseImage,
        buildImage: opts.buildImage,
        nodeVersion: process.versions.node.split(".")[0],
      }),
    );
    const args = ["build", "-t", opts.tag, "-f", file, ...extraArgs, context];
    console.error(`$ docker ${args.join(" ")}`);
    const code = await run("docker", args);
    if (code !== 0) console.error(`${cmd}: docker build failed (exit code ${code})`);
    else console.error(`Built ${opts.tag}: Hangar ${VERSION} without a project (HANGAR_CP_IMAGE_BASE)`);
    return code === 0 ? 0 : 1;
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
}

export async function runBuild(opts: BuildOptions, extraArgs: string[]): Promise<number> {
  const cmd = "hangar build";
  if (opts.baseOnly) {
    const problem = dockerProblem();
    if (problem) {
      console.error(`${cmd}: ${problem}`);
      return 1;
    }
    return buildBase(cmd, opts, extraArgs);
  }
  const p = loadForDocker(cmd, opts.config);
  if (!p) return 2;
  const problem = dockerProblem();
  if (problem) {
    console.error(`${cmd}: ${problem}`);
    return 1;
  }
  const code = await buildImage(cmd, p, opts.tag, opts, extraArgs);
  if (code === 0) {
    console.error(
      `Built ${opts.tag}. Run it: docker run -p 127.0.0.1:8000:8000 -v ${p.workdir.slice(6)}-data:/data ${opts.tag}`,
    );
  }
  return code;
}
