// Docker for the tests of test/docker: whether it can run here (with HANGAR_REQUIRE_DOCKER=1, as .ci/run sets it,
// a missing Docker fails the file instead of skipping it), the local images they build on (no registry can be
// pulled from: a Debian root made by debootstrap, holding this machine's Node, imported once and cached by the
// hash of what it holds), and docker commands bounded in time. Each test removes the containers, volumes and
// images it made; the base images and the build cache stay for the next run.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import * as tar from "tar";
import { afterAll, beforeAll } from "vitest";
import { noRetryClient, ROOT } from "./server.ts";
import { waitFor } from "./wait.ts";

export const DOCKER_REQUIRED = process.env.HANGAR_REQUIRE_DOCKER === "1";

/** Why Docker tests cannot run here (no client, no daemon, no Compose, no debootstrap), or undefined. */
export function dockerMissing(): string | undefined {
  const v = spawnSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" });
  if (v.error) return "no docker command (apt-get install docker.io docker-compose)";
  if (v.status !== 0)
    return `the Docker daemon does not answer (start dockerd): ${v.stderr.trim().split("\n").pop()}`;
  const compose =
    spawnSync("docker", ["compose", "version"]).status === 0 ||
    spawnSync("docker-compose", ["version", "--short"]).status === 0;
  if (!compose) return "no Docker Compose (apt-get install docker-compose)";
  if (spawnSync("debootstrap", ["--version"]).error) {
    return "no debootstrap, which makes the tests' base image (apt-get install debootstrap)";
  }
  return undefined;
}

/**
 * Whether the calling file skips: when Docker is missing it says which file it skips and why, or, with
 * HANGAR_REQUIRE_DOCKER=1, throws (the file fails).
 */
export function skipWithoutDocker(file: string): boolean {
  const why = dockerMissing();
  if (!why) return false;
  if (DOCKER_REQUIRED) throw new Error(`${file}: HANGAR_REQUIRE_DOCKER=1 but ${why}`);
  console.warn(`skipping ${file}: ${why} (HANGAR_REQUIRE_DOCKER=1 makes this a failure)`);
  return true;
}

/** Upper bound of one docker command (an image build on a loaded machine included). */
const COMMAND_BOUND_MS = 15 * 60_000;

/** Upper bound of a wait that spans an image build (a test's own bound stays under the test timeout of 15 min). */
export const BUILD_BOUND_MS = 10 * 60_000;

export interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (killed after the bound); its exit code and output. */
export function exec(
  cmd: string,
  args: string[],
  opts: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; boundMs?: number } = {},
): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: "pipe" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.boundMs ?? COMMAND_BOUND_MS);
    child.stdin.on("error", () => {}); // a command that exits without reading its input
    child.stdin.end(opts.input ?? "");
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

/** `docker ...`, which must succeed: its stdout (trimmed). */
export async function docker(
  args: string[],
  opts: { input?: string; boundMs?: number } = {},
): Promise<string> {
  const r = await exec("docker", args, opts);
  if (r.code !== 0) throw new Error(`docker ${args.join(" ")} exited ${r.code}:\n${r.stdout}\n${r.stderr}`);
  return r.stdout.trim();
}

/** The output of a shell script run in a throwaway container of `image` (its entry point set aside). */
export const shellIn = (image: string, script: string) =>
  docker(["run", "--rm", "--entrypoint", "sh", image, "-c", script]);

/** `docker ...` whose failure does not matter (cleanup). */
export const dockerQuiet = (args: string[]) =>
  exec("docker", args, { boundMs: 120_000 }).catch(() => undefined);

const imageExists = (tag: string) =>
  spawnSync("docker", ["image", "inspect", tag], { stdio: "ignore" }).status === 0;

// ---- the base image

/**
 * What the Debian root holds besides minbase: PostgreSQL and Redis (the images `hangar up` starts in the test). No
 * compilers: better-sqlite3's prebuilt binding is in npm's cache (see baseImage), so the build stage compiles
 * nothing; images for users are built on `node:<version>-bookworm`, which has them.
 */
const PACKAGES = ["postgresql-15", "redis-server"];
/** Bumped when the way the root is made changes. */
const RECIPE = 2;

const sha = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const NODE = process.execPath;
const NODE_PREFIX = dirname(dirname(NODE));
const npmConfig = (key: string) => execFileSync("npm", ["config", "get", key], { encoding: "utf8" }).trim();

/** better-sqlite3's binding as its prebuilt tarball, with the name prebuild-install's download cache gives it. */
function betterSqlitePrebuild(): { file: string; data: Buffer } {
  const req = createRequire(join(ROOT, "package.json"));
  const util = req("prebuild-install/util") as {
    getDownloadUrl(o: object): string;
    cachedPrebuild(url: string): string;
  };
  const pkgDir = dirname(req.resolve("better-sqlite3/package.json"));
  const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as object;
  const url = util.getDownloadUrl({
    pkg,
    platform: process.platform,
    arch: process.arch,
    runtime: "node",
    abi: process.versions.modules,
    "tag-prefix": "v",
  });
  const file = util.cachedPrebuild(url).split("/").pop()!;
  const out = join(tmpdir(), `hangar-test-prebuild-${process.pid}.tgz`);
  tar.c({ gzip: true, sync: true, cwd: pkgDir, portable: true, file: out }, [
    "build/Release/better_sqlite3.node",
  ]);
  const data = readFileSync(out);
  rmSync(out, { force: true });
  return { file, data };
}

/**
 * Takes a lock shared by the test files of this machine: a directory made atomically, holding the taker's pid (a
 * lock whose taker is gone is taken over). Waits for it at most `boundMs`; returns what releases it.
 */
async function takeLock(name: string, boundMs: number): Promise<() => void> {
  const dir = join(tmpdir(), `hangar-test-${name}.lock`);
  await waitFor(
    `the lock ${dir}`,
    () => {
      try {
        mkdirSync(dir);
        writeFileSync(join(dir, "pid"), String(process.pid));
        return true;
      } catch {
        let pid = 0;
        try {
          pid = Number(readFileSync(join(dir, "pid"), "utf8"));
        } catch {
          return false; // being made or removed
        }
        try {
          process.kill(pid, 0);
        } catch {
          rmSync(dir, { recursive: true, force: true }); // its holder is gone
        }
        return false;
      }
    },
    boundMs,
    500,
  );
  return () => rmSync(dir, { recursive: true, force: true });
}

/** Runs `fn` under the lock `name` (at most 20 min of waiting for it). */
async function withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const release = await takeLock(name, 20 * 60_000);
  try {
    return await fn();
  } finally {
    release();
  }
}

/** How long a Docker file may wait for its turn: the other Docker files, one after the other, on a loaded machine. */
const TURN_BOUND_MS = 60 * 60_000;

/**
 * One Docker file at a time, from its first hook to its last (call at the top of the file, before its describe):
 * each builds images and starts containers of Hangar, PostgreSQL and Redis whose CPU the machine pays beside the
 * other files'. It also keeps the files' builds apart: the first installs the layers of Hangar's dependencies, which
 * the others then take from the build cache, and no file removes an image while another's build uses its layers
 * as cache (that failed a build: "failed to get destination image"). The four at once, as the suite started them,
 * loaded 2 cores 25 deep: health checks timed out, a rebuilt container was marked unhealthy after its 120 s start
 * period, and the rest of the suite slowed with them.
 */
export function oneDockerFileAtATime(): void {
  let release: (() => void) | undefined;
  beforeAll(async () => {
    release = await takeLock("docker-file", TURN_BOUND_MS);
  }, TURN_BOUND_MS + 60_000);
  afterAll(() => release?.());
}

let base: Promise<string> | undefined;
let runtime: Promise<string> | undefined;

/** Debian bookworm minbase (with `include`) in a new folder `root`, debootstrap's downloads removed. */
async function debootstrapRoot(root: string, include: string[]): Promise<void> {
  rmSync(root, { recursive: true, force: true });
  const boot = await exec(
    "debootstrap",
    [
      "--variant=minbase",
      ...(include.length ? [`--include=${include.join(",")}`] : []),
      "bookworm",
      root,
      "http://deb.debian.org/debian",
    ],
    { boundMs: 15 * 60_000 },
  );
  if (boot.code !== 0) throw new Error(`debootstrap failed:\n${boot.stdout.slice(-3000)}\n${boot.stderr}`);
  rmSync(join(root, "var/cache/apt/archives"), { recursive: true, force: true });
  mkdirSync(join(root, "var/cache/apt/archives/partial"), { recursive: true });
}

/** Copies `from` (this machine's) to `to` in `root`, without blocking this worker (npm's cache is large). */
async function copyInto(root: string, from: string, to = from.slice(1)): Promise<void> {
  mkdirSync(dirname(join(root, to)), { recursive: true });
  const r = await exec("cp", ["-a", from, join(root, to)]);
  if (r.code !== 0) throw new Error(`cp -a ${from} failed: ${r.stderr}`);
}

/** This machine's Node, npm and corepack in `root` (node-gyp's headers too, with `headers`). */
async function installNode(root: string, headers: boolean): Promise<void> {
  await copyInto(root, NODE, "usr/bin/node");
  for (const m of ["npm", "corepack"]) {
    const from = join(NODE_PREFIX, "lib/node_modules", m);
    if (existsSync(from)) await copyInto(root, from, `usr/lib/node_modules/${m}`);
  }
  if (headers && existsSync(join(NODE_PREFIX, "include/node")))
    await copyInto(root, join(NODE_PREFIX, "include/node"), "usr/include/node");
  for (const [bin, target] of [
    ["npm", "npm/bin/npm-cli.js"],
    ["npx", "npm/bin/npx-cli.js"],
    ["corepack", "corepack/dist/corepack.js"],
  ]) {
    rmSync(join(root, "usr/bin", bin), { force: true });
    execFileSync("ln", ["-s", `../lib/node_modules/${target}`, join(root, "usr/bin", bin)]);
  }
}

/** `root` imported as the image `tag`, then removed. */
async function importRoot(root: string, tag: string): Promise<void> {
  const imported = await exec("sh", [
    "-c",
    `tar -C "${root}" -c . | docker import --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' - ${tag}`,
  ]);
  if (imported.code !== 0) throw new Error(`docker import failed: ${imported.stderr}`);
}

/** Makes the image `tag` once (under a lock shared by the test files) from a root that `make` fills. */
async function imageOnce(tag: string, make: (root: string) => Promise<void>): Promise<string> {
  if (imageExists(tag)) return tag;
  return withLock("base-image", async () => {
    if (imageExists(tag)) return tag;
    const root = join(tmpdir(), `hangar-test-root-${process.pid}`);
    try {
      await make(root);
      await importRoot(root, tag);
      return tag;
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
}

/**
 * The tests' base image (`--base-image`, or `--build-image` beside runtimeImage, of their builds): Debian bookworm
 * (debootstrap minbase) with PACKAGES, this machine's Node and npm (with its npm config and CA bundle, so npm reaches
 * the registry from inside; and its cache), and better-sqlite3's binding in npm's prebuilt-download cache (so the
 * image's install takes it as the download it would get from GitHub, which is not reachable here). Made once per
 * content: its tag is the hash of all that but the npm cache and the binding's bytes (its name stands for it).
 */
export function baseImage(): Promise<string> {
  base ??= (async () => {
    const npmrc = npmConfig("globalconfig");
    const cafile = npmConfig("cafile");
    const prebuild = betterSqlitePrebuild();
    const key = sha(
      JSON.stringify({
        RECIPE,
        PACKAGES,
        node: sha(readFileSync(NODE)),
        npm: readFileSync(join(NODE_PREFIX, "lib/node_modules/npm/package.json"), "utf8"),
        npmrc: existsSync(npmrc) ? readFileSync(npmrc, "utf8") : "",
        ca: existsSync(cafile) ? sha(readFileSync(cafile)) : "",
        // Its name (better-sqlite3's version, Node's ABI, platform), not its bytes: each checkout compiles the binding
        // anew, to a different file (a clean clone's differed in every run), and a new key made CI build the whole
        // image again (debootstrap and all, ~5 min of a suite run's critical path). Any build of that name serves.
        prebuild: prebuild.file,
      }),
    ).slice(0, 16);
    return imageOnce(`hangar-test/base:${key}`, async (root) => {
      await debootstrapRoot(root, PACKAGES);
      await installNode(root, true);
      // npm's global config of this machine (its registry, CA) where this Node's npm reads it.
      if (existsSync(npmrc)) await copyInto(root, npmrc);
      if (existsSync(cafile)) await copyInto(root, cafile);
      // This machine's npm cache, when it has one (CI's `npm install` fills it), as a head start for the builds'
      // installs: what it lacks comes from the registry, so it is not part of the image's key.
      const cache = join(npmConfig("cache"), "_cacache");
      if (existsSync(cache)) await copyInto(root, cache, "root/.npm/_cacache");
      mkdirSync(join(root, "root/.npm/_prebuilds"), { recursive: true });
      writeFileSync(join(root, "root/.npm/_prebuilds", prebuild.file), prebuild.data);
    });
  })();
  return base;
}

/**
 * The tests' runtime image (`--base-image` of the builds whose images are pushed or kept, with baseImage as
 * `--build-image`), as `node:<version>-bookworm-slim` is for users: Debian bookworm minbase and this machine's Node
 * and npm, nothing else. A third the size of the base image (~300 MB: no PostgreSQL, Redis, npm cache, headers), so
 * pushing an image built on it to a registry and pulling it back costs Docker a fraction of the CPU (gzip of every
 * layer).
 */
export function runtimeImage(): Promise<string> {
  runtime ??= (async () => {
    const key = sha(
      JSON.stringify({
        RECIPE,
        node: sha(readFileSync(NODE)),
        npm: readFileSync(join(NODE_PREFIX, "lib/node_modules/npm/package.json"), "utf8"),
      }),
    ).slice(0, 16);
    return imageOnce(`hangar-test/runtime:${key}`, async (root) => {
      await debootstrapRoot(root, []);
      await installNode(root, false);
    });
  })();
  return runtime;
}

/**
 * Images standing in for the public `postgres:16` and `redis:7` that `hangar up` starts, made from the base
 * image's Debian packages: PostgreSQL initialized on first start in its volume (trust authentication, as the
 * tests' host PostgreSQL), Redis without persistence.
 */
export async function serviceImages(): Promise<{ postgres: string; redis: string }> {
  const from = await baseImage();
  const key = from.split(":")[1];
  const postgres = `hangar-test/postgres:${key}`;
  const redis = `hangar-test/redis:${key}`;
  const pgStart = [
    "#!/bin/sh",
    "set -e",
    "PGDATA=/var/lib/postgresql/data",
    'mkdir -p "$PGDATA" && chown postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"',
    'if [ ! -s "$PGDATA/PG_VERSION" ]; then',
    '  runuser -u postgres -- /usr/lib/postgresql/15/bin/initdb -D "$PGDATA" -U postgres --auth=trust >/dev/null',
    '  echo "listen_addresses = \'*\'" >> "$PGDATA/postgresql.conf"',
    '  echo "host all all 0.0.0.0/0 trust" >> "$PGDATA/pg_hba.conf"',
    "fi",
    'exec runuser -u postgres -- /usr/lib/postgresql/15/bin/postgres -D "$PGDATA" -c unix_socket_directories=/tmp',
  ].join("\n");
  const images: [string, string][] = [
    [
      postgres,
      [
        `FROM ${from}`,
        `RUN echo ${Buffer.from(pgStart).toString("base64")} | base64 -d > /usr/local/bin/postgres-start \\
    && chmod +x /usr/local/bin/postgres-start`,
        "EXPOSE 5432",
        "STOPSIGNAL SIGINT",
        'CMD ["/usr/local/bin/postgres-start"]',
      ].join("\n"),
    ],
    [
      redis,
      [
        `FROM ${from}`,
        "EXPOSE 6379",
        'CMD ["redis-server", "--protected-mode", "no", "--save", "", "--appendonly", "no"]',
      ].join("\n"),
    ],
  ];
  await withLock("service-images", async () => {
    for (const [tag, dockerfile] of images) {
      if (!imageExists(tag)) await docker(["build", "-q", "-t", tag, "-"], { input: dockerfile });
    }
  });
  return { postgres, redis };
}

/** A free TCP port on 127.0.0.1 (for containers on the host's network). */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/** Containers, networks and volumes Compose made for a project (by its label): their ids. */
export async function composeLeftovers(project: string): Promise<string[]> {
  const label = `label=com.docker.compose.project=${project}`;
  const lists = await Promise.all([
    docker(["ps", "-aq", "--filter", label]),
    docker(["network", "ls", "-q", "--filter", label]),
    docker(["volume", "ls", "-q", "--filter", label]),
  ]);
  return lists.flatMap((l) => l.split("\n").filter(Boolean));
}

/** Removes what a failed test left of a Compose project: its containers (with their volumes), networks, volumes. */
export async function removeComposeProject(project: string): Promise<void> {
  const label = `label=com.docker.compose.project=${project}`;
  const ids = (await exec("docker", ["ps", "-aq", "--filter", label])).stdout.split("\n").filter(Boolean);
  if (ids.length) await dockerQuiet(["rm", "-f", "-v", ...ids]);
  for (const kind of ["network", "volume"]) {
    const list = (await exec("docker", [kind, "ls", "-q", "--filter", label])).stdout
      .split("\n")
      .filter(Boolean);
    if (list.length) await dockerQuiet([kind, "rm", ...list]);
  }
}

/** Waits until `url`/ok answers; on timeout the failure shows what `logs` gives (the containers' logs). */
export async function waitForOk(url: string, logs: () => Promise<string>): Promise<void> {
  let last = "";
  await waitFor(
    () => `${url}/ok to answer; logs:\n${last}`,
    async () => {
      if ((await fetch(`${url}/ok`).catch(() => undefined))?.ok) return true;
      last = await logs();
      return false;
    },
  );
}

/** A run of the example project's chat graph through `url` (the official SDK): its thread and reply. */
export async function chatRun(url: string): Promise<{ threadId: string; reply: string }> {
  const client = noRetryClient(url);
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, "chat", {
    input: { messages: [{ role: "human", content: "hi" }] },
  })) as { messages: { content: string }[] };
  return { threadId: thread.thread_id, reply: values.messages.at(-1)!.content };
}
