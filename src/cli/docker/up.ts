// `hangar up`: builds the project's image, then runs it under Docker Compose (1 or 2) as an API and a worker
// process with PostgreSQL and Redis. Compose 1 has neither `--wait` nor `watch`, so both are done here: --wait
// polls the containers' health and the API's /ok until all are up; --watch rebuilds the image when a project file
// changes and lets Compose recreate the servers on it.
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, writeFileSync } from "node:fs";
import { basename, join, relative, resolve, sep } from "node:path";
import { watch } from "chokidar";
import { VERSION } from "../../lib/version.js";
import { buildImage } from "./build.js";
import { composeCommand, dockerProblem, loadForDocker, output, run, type ImageOptions } from "./common.js";
import { composeYaml } from "./compose.js";
import { PACKAGE_DIR } from "./dockerfile.js";
import type { DockerProject } from "./project.js";

export interface UpOptions extends ImageOptions {
  port: string;
  host: string;
  wait?: boolean;
  watch?: boolean;
  dockerCompose?: string;
  postgresUri?: string;
  postgresImage?: string;
  redisImage?: string;
  waitTimeout: string;
}

/** The Compose project's name: the directory's, and a hash of its path (two projects of one name stay apart). */
export function composeProjectName(projectDir: string): string {
  const base =
    basename(projectDir)
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, "-")
      .replace(/^[-_]+/, "") || "app";
  const hash = createHash("sha256").update(resolve(projectDir)).digest("hex").slice(0, 8);
  return `hangar-${base}-${hash}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The containers of a Compose project: service, state and health (empty when the image has no HEALTHCHECK). */
function containers(project: string): { service: string; state: string; health: string }[] {
  const ids = (
    output("docker", ["ps", "-aq", "--filter", `label=com.docker.compose.project=${project}`]) ?? ""
  )
    .split("\n")
    .filter(Boolean);
  if (!ids.length) return [];
  const format =
    '{{index .Config.Labels "com.docker.compose.service"}}|{{.State.Status}}|{{if .State.Health}}{{.State.Health.Status}}{{end}}';
  return (output("docker", ["inspect", "--format", format, ...ids]) ?? "")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [service, state, health] = line.split("|");
      return { service, state, health };
    });
}

/** Whether the API answers /ok on the published port. */
async function apiOk(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/ok`, { signal: AbortSignal.timeout(5000) });
    return res.ok;
  } catch {
    return false;
  }
}

/**
 * Waits until every service of the project runs (healthy where it has a health check) and the API answers /ok,
 * for at most `timeoutMs`. Undefined when up, else what is not (a service that exited, or what was still
 * starting when the time ran out).
 */
async function waitUp(
  project: string,
  services: string[],
  url: string,
  timeoutMs: number,
): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    const now = containers(project);
    const exited = now.find((c) => c.state === "exited" || c.state === "dead");
    if (exited) return `${exited.service} exited`;
    const unhealthy = now.find((c) => c.health === "unhealthy");
    if (unhealthy) return `${unhealthy.service} is unhealthy`;
    const waiting = services.filter((s) => {
      const c = now.find((x) => x.service === s);
      return !c || c.state !== "running" || (c.health !== "" && c.health !== "healthy");
    });
    if (!waiting.length && (await apiOk(url))) return undefined;
    last = waiting.length ? `waiting for ${waiting.join(", ")}` : `waiting for ${url}/ok`;
    if (Date.now() > deadline) return `not up after ${Math.round(timeoutMs / 1000)} s (${last})`;
    await sleep(1000);
  }
}

/** The services the Compose files define (`config --services`). */
function servicesOf(base: string[]): string[] {
  const [cmd, ...args] = base;
  return (output(cmd, [...args, "config", "--services"]) ?? "").split("\n").filter(Boolean);
}

export async function runUp(opts: UpOptions): Promise<number> {
  const cmd = "hangar up";
  const p = loadForDocker(cmd, opts.config);
  if (!p) return 2;
  const port = Number(opts.port);
  const timeout = Number(opts.waitTimeout);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    console.error(`${cmd}: --port must be a port number (1-65535), got '${opts.port}'`);
    return 2;
  }
  if (!(timeout > 0)) {
    console.error(`${cmd}: --wait-timeout must be a positive number of seconds, got '${opts.waitTimeout}'`);
    return 2;
  }
  const problem = dockerProblem();
  if (problem) {
    console.error(`${cmd}: ${problem}`);
    return 1;
  }
  const compose = composeCommand();
  if (!compose) {
    console.error(
      `${cmd}: Docker Compose is not installed (apt-get install docker-compose, or the compose plugin)`,
    );
    return 1;
  }
  const project = composeProjectName(p.projectDir);
  const tag = `hangar-up/${project}:latest`;
  const built = await buildImage(cmd, p, tag, opts);
  if (built !== 0) return built;

  const file = join(p.projectDir, PACKAGE_DIR, "docker-compose.yml");
  writeFileSync(
    file,
    composeYaml(
      p,
      {
        image: tag,
        port,
        host: opts.host,
        postgresUri: opts.postgresUri,
        postgresImage: opts.postgresImage,
        redisImage: opts.redisImage,
        envFileExists: !!p.envFile && existsSync(join(p.projectDir, p.envFile)),
      },
      [
        `Written by \`hangar up\` (Hangar ${VERSION}) for ${p.projectDir}; written again by each \`hangar up\`.`,
      ],
    ),
  );
  const files = ["-f", file];
  const extra = opts.dockerCompose ?? p.composeFile;
  if (extra) files.push("-f", resolve(p.projectDir, extra));
  const base = [...compose, "--project-directory", p.projectDir, "-p", project, ...files];
  const [exe, ...pre] = base;
  const host = opts.host === "0.0.0.0" ? "127.0.0.1" : opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  const url = `http://${host}:${port}`;
  const down = `${base.join(" ")} down`;

  if (!opts.wait && !opts.watch) {
    // In the foreground, as `docker compose up` is: its logs, until a container exits or Ctrl-C.
    const child = spawn(exe, [...pre, "up", "--remove-orphans", "--abort-on-container-exit"], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    const services = servicesOf(base);
    void waitUp(project, services, url, timeout * 1000).then((why) => {
      if (!why) console.error(ready(url, down));
    });
    return new Promise((done) => {
      const forward = () => child.kill("SIGINT");
      process.once("SIGINT", forward);
      process.once("SIGTERM", forward);
      child.once("error", () => done(1));
      child.once("exit", (code) => done(code ?? 1));
    });
  }

  const code = await run(exe, [...pre, "up", "-d", "--remove-orphans"]);
  if (code !== 0) {
    console.error(`${cmd}: ${compose.join(" ")} up failed (exit code ${code})`);
    return 1;
  }
  const services = servicesOf(base);
  const why = await waitUp(project, services, url, timeout * 1000);
  if (why) {
    console.error(`${cmd}: ${why}. Its last log lines:`);
    await run(exe, [...pre, "logs", "--tail", "30"]);
    console.error(`Stop and remove it: ${down}`);
    return 1;
  }
  console.error(ready(url, down));
  if (!opts.watch) return 0;
  return watchProject(p, { exe, pre, project, services, url, tag, opts, timeoutMs: timeout * 1000 });
}

const ready = (url: string, down: string) =>
  [
    "Ready!",
    `- API: ${url}`,
    `- Docs: ${url}/docs`,
    `Stop and remove it: ${down}   (add -v to remove the database's volume too)`,
  ].join("\n");

interface Watching {
  exe: string;
  pre: string[];
  project: string;
  services: string[];
  url: string;
  tag: string;
  opts: UpOptions;
  timeoutMs: number;
}

/**
 * Watches the project's files: after a change (and a quiet half second), builds the image again and lets Compose
 * recreate the servers on it. Prints the servers' logs meanwhile; Ctrl-C stops the containers (down removes them).
 */
function watchProject(p: DockerProject, w: Watching): Promise<number> {
  const cmd = "hangar up";
  const logs: ChildProcess = spawn(
    w.exe,
    [...w.pre, "logs", "-f", "--tail", "0", "hangar-api", "hangar-worker"],
    {
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
  const envFile = p.envFile ? resolve(p.projectDir, p.envFile) : undefined;
  const watcher = watch(p.projectDir, {
    ignoreInitial: true,
    ignored: (path: string) => {
      if (path === envFile) return false;
      const rel = relative(p.projectDir, path);
      return rel !== "" && rel.split(sep).some((part) => part === "node_modules" || part.startsWith("."));
    },
  });
  let timer: NodeJS.Timeout | undefined;
  let busy: Promise<void> = Promise.resolve();
  let pending = false;
  const rebuild = async () => {
    pending = false;
    console.error(`${cmd}: files changed; building ${w.tag} again`);
    if ((await buildImage(cmd, p, w.tag, w.opts, [], "quiet")) !== 0) {
      console.error(`${cmd}: the build failed; the servers run the previous image (save again to retry)`);
      return;
    }
    if ((await run(w.exe, [...w.pre, "up", "-d", "--remove-orphans"])) !== 0) {
      console.error(`${cmd}: compose up failed`);
      return;
    }
    const why = await waitUp(w.project, w.services, w.url, w.timeoutMs);
    console.error(why ? `${cmd}: ${why}` : `${cmd}: reloaded; ${w.url} serves the new image`);
  };
  watcher.on("all", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (pending) return;
      pending = true;
      busy = busy.then(rebuild);
    }, 500);
  });
  watcher.once("ready", () =>
    console.error(`${cmd}: watching ${p.projectDir} (Ctrl-C stops the containers)`),
  );
  return new Promise((done) => {
    const stop = async () => {
      clearTimeout(timer);
      await watcher.close();
      logs.kill();
      await busy;
      await run(w.exe, [...w.pre, "stop"]);
      done(0);
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
