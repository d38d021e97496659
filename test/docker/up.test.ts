// `hangar up` for real, with the Compose of this machine (Debian's docker-compose 1.29 here; `docker compose` where
// the plugin is installed): a project with its own package.json and lockfile (its production dependencies
// installed in the image) brought up with --wait as an API, a worker, PostgreSQL and Redis (the tests' local
// images standing in for postgres:16 and redis:7); a run through the port published on 127.0.0.1; --watch builds
// again after an edit and the servers serve the new code; the printed `down` removes everything Compose made.
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { composeProjectName } from "../../src/cli/docker/up.ts";
import {
  baseImage,
  BUILD_BOUND_MS,
  composeLeftovers,
  docker,
  dockerQuiet,
  exec,
  freePort,
  oneDockerFileAtATime,
  removeComposeProject,
  serviceImages,
  shellIn,
  skipWithoutDocker,
} from "../helpers/docker.ts";
import { BIN, cleanupDir, noRetryClient, ROOT, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const skip = skipWithoutDocker("test/docker/up.test.ts");
oneDockerFileAtATime();
let tmp = "";
let project = "";
let name = "";
let port = 0;
let images: { base: string; postgres: string; redis: string };
let down = "";
const children: ChildProcess[] = [];

/** `hangar up` with the tests' images; more arguments after. */
const upArgs = (...more: string[]) => [
  BIN,
  "up",
  "--port",
  String(port),
  "--base-image",
  images.base,
  "--postgres-image",
  images.postgres,
  "--redis-image",
  images.redis,
  ...more,
];

/** Runs the graph through the published port; its answer. */
async function answer(): Promise<string> {
  const client = noRetryClient(`http://127.0.0.1:${port}`);
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, "agent", { input: {} })) as { answer: string };
  return values.answer;
}

describe.skipIf(skip)("hangar up", () => {
  beforeAll(async () => {
    const base = await baseImage();
    images = { base, ...(await serviceImages()) };
    port = await freePort();
    // A fixed directory name (the project's folder in the image): a later run builds on the cached layers.
    tmp = tempDir("hangar-docker-up-");
    project = join(tmp, "hangar-npm-app");
    cpSync(join(ROOT, "test/fixtures/docker/npm-project"), project, { recursive: true });
    writeFileSync(join(project, ".env"), "DOCKER_TEST_WORD=from-dotenv\n");
    name = composeProjectName(project);
  });

  afterAll(async () => {
    for (const c of children) c.kill("SIGKILL");
    if (name) {
      // What a failed test left: every container, network and volume of the project, then its image.
      await removeComposeProject(name);
      // Leaving the untagged layers, the next Docker file's build cache.
      await dockerQuiet(["rmi", "--no-prune", `hangar-up/${name}:latest`]);
    }
    if (tmp) cleanupDir(tmp);
  });

  it("--wait: API, worker, PostgreSQL and Redis up; a run through 127.0.0.1; production dependencies only", async () => {
    const r = await exec(process.execPath, upArgs("--wait"), { cwd: project });
    expect(r.code, `hangar up --wait:\n${r.stdout}\n${r.stderr}`).toBe(0);
    expect(r.stderr).toContain("Ready!");
    down = /Stop and remove it: (.*?) {3}/.exec(r.stderr)![1];
    const services = await docker([
      "ps",
      "--filter",
      `label=com.docker.compose.project=${name}`,
      "--format",
      '{{.Label "com.docker.compose.service"}} {{.Status}} {{.Ports}}',
    ]);
    const lines = services.split("\n").sort();
    expect(lines.map((l) => l.split(" ")[0])).toEqual([
      "hangar-api",
      "hangar-postgres",
      "hangar-redis",
      "hangar-worker",
    ]);
    expect(lines.find((l) => l.startsWith("hangar-api"))).toContain(`127.0.0.1:${port}->8000/tcp`);
    expect(await answer()).toBe("from-dotenv first");

    // The image holds the project's dependencies but not its devDependencies, and not its .env.
    const ls = await shellIn(`hangar-up/${name}:latest`, "ls -A; ls node_modules node_modules/@langchain");
    expect(ls).toContain("langgraph");
    expect(ls).not.toContain("left-pad");
    expect(ls.split("\n")).not.toContain(".env");
  });

  it("--watch: an edit of the graph is built and served", async () => {
    const child = spawn(process.execPath, upArgs("--watch"), {
      cwd: project,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    let out = "";
    child.stdout!.on("data", (d) => (out += d));
    child.stderr!.on("data", (d) => (out += d));
    // Each wait ends early, with the output, when the command exits.
    const exited = new Promise<never>((_, reject) =>
      child.once("exit", (code) => reject(new Error(`hangar up --watch exited ${code}:\n${out}`))),
    );
    exited.catch(() => {});
    // A wait spans an image build (npm install in the image included): on a loaded machine (a fresh clone's suite
    // building the Docker base image beside it) the rebuild after the edit took over the usual 180 s bound.
    const until = (what: string, text: string) =>
      Promise.race([
        waitFor(
          () => `${what}; its output:\n${out}`,
          () => out.includes(text),
          BUILD_BOUND_MS,
        ),
        exited,
      ]);
    await until("hangar up --watch to watch", "watching");
    const file = join(project, "src/agent.ts");
    writeFileSync(file, readFileSync(file, "utf8").replace('"first"', '"second"'));
    await until("the servers to be reloaded", "reloaded");
    expect(await answer()).toBe("from-dotenv second");
    child.kill("SIGINT");
    const code = await new Promise<number | null>((done) => child.once("exit", done));
    expect(code, out).toBe(0);
  });

  it("the printed down command removes what Compose made", async () => {
    expect(down).toContain(`-p ${name}`);
    const [cmd, ...args] = down.split(" ");
    expect(down.endsWith(" down")).toBe(true);
    const r = await exec(cmd, [...args, "-v"]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await composeLeftovers(name)).toEqual([]);
  });
});
