// `hangar dockerfile [PATH] [--add-docker-compose]`: writes the project's Dockerfile (`-`: prints it), the
// .hangar-docker/ folder with Hangar's package that it builds from, a .dockerignore when there is none, and with
// --add-docker-compose a docker-compose.yml running it with PostgreSQL and Redis.
import { existsSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { VERSION } from "../../lib/version.js";
import { composeYaml } from "./compose.js";
import { dockerfile } from "./dockerfile.js";
import { prepareContext } from "./package.js";
import { loadForDocker, type ImageOptions } from "./common.js";

export interface DockerfileCommandOptions extends ImageOptions {
  addDockerCompose?: boolean;
}

export async function runDockerfile(
  path: string | undefined,
  opts: DockerfileCommandOptions,
): Promise<number> {
  const cmd = "hangar dockerfile";
  const p = loadForDocker(cmd, opts.config);
  if (!p) return 2;
  const info = (line: string) => console.error(line);
  const files = prepareContext(cmd, p);
  if (!files) return 1;
  const text = dockerfile(p, {
    version: VERSION,
    lockfile: files.lockfile,
    baseImage: opts.baseImage,
    buildImage: opts.buildImage,
  });
  if (path === "-") {
    process.stdout.write(text);
    return 0;
  }
  const target = resolve(path ?? join(p.projectDir, "Dockerfile"));
  writeFileSync(target, text);
  info(`Created ${target}`);
  const rel = relative(p.projectDir, target);
  const buildCmd =
    dirname(target) === p.projectDir && rel === "Dockerfile"
      ? `docker build -t my-agent ${p.projectDir}`
      : `docker build -t my-agent -f ${target} ${p.projectDir}`;
  if (opts.addDockerCompose) {
    const composePath = join(dirname(target), "docker-compose.yml");
    if (dirname(target) !== p.projectDir) {
      console.error(
        `${cmd}: --add-docker-compose needs the Dockerfile in the project's directory (${p.projectDir})`,
      );
      return 2;
    }
    const yaml = composeYaml(
      p,
      {
        image: `${p.workdir.slice("/deps/".length).toLowerCase()}-hangar`,
        build: { dockerfile: rel },
        port: 8123,
        envFileExists: !!p.envFile && existsSync(join(p.projectDir, p.envFile)),
      },
      [
        `Written by \`hangar dockerfile --add-docker-compose\` (Hangar ${VERSION}): the Agent Server's API and worker`,
        "with PostgreSQL and Redis. Start: docker compose up -d (or docker-compose up -d); the API answers on",
        "http://127.0.0.1:8123. Stop and remove: docker compose down (-v also removes the database's volume).",
      ],
    );
    writeFileSync(composePath, yaml);
    info(`Created ${composePath}`);
  } else {
    info(`Build it with: ${buildCmd}`);
  }
  return 0;
}
