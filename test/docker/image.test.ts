// `hangar build` for real: the example project (with a graph that waits to be released) built on the tests' local
// base image, then run as containers on the host's network: on PostgreSQL + Redis with the official variable names
// (an API and a worker container; a streamed run through the official SDK; a restart keeps the thread), and on the
// embedded backend in a volume (threads kept across `docker rm` and a new container; `docker stop` drains a run).
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dropCluster, REDIS_URL, DATABASE_URL, type ClusterTarget } from "../helpers/backend.ts";
import {
  baseImage,
  docker,
  dockerQuiet,
  exec,
  freePort,
  oneDockerFileAtATime,
  runtimeImage,
  shellIn,
  skipWithoutDocker,
} from "../helpers/docker.ts";
import { BIN, cleanupDir, noRetryClient, ROOT, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const skip = skipWithoutDocker("test/docker/image.test.ts");
oneDockerFileAtATime();
const run = `${process.pid}`;
const TAG = `hangar-test/app:${run}`;
const containers: string[] = [];
const volumes: string[] = [];
const cluster: ClusterTarget = {
  databaseUrl: DATABASE_URL,
  redisUrl: REDIS_URL,
  schema: `t_docker_${run}`,
  redisPrefix: `t_docker_${run}:`,
};
let tmp = "";
let project = "";
let workdir = "";

/** Starts a container of the image on the host's network; its name. */
async function container(name: string, args: string[], command: string[] = []): Promise<string> {
  const full = `hangar-test-${run}-${name}`;
  containers.push(full);
  await docker([
    "run",
    "-d",
    "--name",
    full,
    "--network",
    "host",
    // The first health check at once, not after the image's 30 s.
    "--health-interval",
    "1s",
    "-e",
    "HANGAR_SCHEMAS_AHEAD=false",
    ...args,
    TAG,
    ...command,
  ]);
  return full;
}

const ok = async (url: string) => (await fetch(`${url}/ok`).catch(() => undefined))?.ok === true;
const logs = async (name: string) => {
  const r = await exec("docker", ["logs", name]);
  return r.stdout + r.stderr;
};
/** Waits until the container's server answers /ok (its logs in the failure's message). */
async function up(name: string, url: string): Promise<void> {
  let last = "";
  await waitFor(
    () => `${name} to answer ${url}/ok; its logs:\n${last}`,
    async () => {
      if (await ok(url)) return true;
      last = await logs(name);
      return false;
    },
  );
}

describe.skipIf(skip)("hangar build: the example project's image", () => {
  beforeAll(async () => {
    // The server's stage on the slim runtime image, as users' images are on node:<version>-bookworm-slim: the image
    // needs nothing of the build stage's.
    const [runtime, build] = [await runtimeImage(), await baseImage()];
    // A fixed directory name (the project's folder in the image): a later run builds on the cached layers.
    tmp = tempDir("hangar-docker-image-");
    project = join(tmp, "hangar-example-app");
    mkdirSync(project);
    cpSync(join(ROOT, "examples/src"), join(project, "src"), { recursive: true });
    cpSync(join(ROOT, "test/fixtures/docker/slow.ts"), join(project, "src/slow.ts"));
    const config = JSON.parse(readFileSync(join(ROOT, "examples/langgraph.json"), "utf8")) as {
      graphs: Record<string, string>;
    };
    config.graphs.slow = "./src/slow.ts:graph";
    writeFileSync(join(project, "langgraph.json"), JSON.stringify(config, null, 2));
    // What must never reach the image: a secret file and a data folder.
    writeFileSync(join(project, ".env"), "SECRET_TOKEN=do-not-ship\n");
    mkdirSync(join(project, ".hangar"));
    writeFileSync(join(project, ".hangar/hangar.sqlite"), "local data");
    workdir = `/deps/${project.split("/").pop()}`;
    const r = await exec(
      process.execPath,
      [BIN, "build", "-t", TAG, "--base-image", runtime, "--build-image", build],
      { cwd: project },
    );
    expect(r.code, `hangar build:\n${r.stdout}\n${r.stderr}`).toBe(0);
  });

  afterAll(async () => {
    for (const c of containers) await dockerQuiet(["rm", "-f", "-v", c]);
    for (const v of volumes) await dockerQuiet(["volume", "rm", "-f", v]);
    // Leaving the untagged layers, the next Docker file's build cache.
    await dockerQuiet(["rmi", "--no-prune", TAG]);
    await dropCluster(cluster).catch(() => {});
    if (tmp) cleanupDir(tmp);
  });

  it("holds the project and Hangar, runs as an unprivileged user on 8000, and leaves .env and data out", async () => {
    const [inspected] = JSON.parse(await docker(["image", "inspect", TAG])) as {
      Config: {
        User: string;
        Env: string[];
        ExposedPorts: Record<string, unknown>;
        Healthcheck: { Test: string[] };
        Volumes: Record<string, unknown>;
        WorkingDir: string;
      };
    }[];
    const cfg = inspected.Config;
    expect(cfg.User).toBe("hangar");
    expect(Object.keys(cfg.ExposedPorts)).toEqual(["8000/tcp"]);
    expect(Object.keys(cfg.Volumes)).toEqual(["/data"]);
    expect(cfg.WorkingDir).toBe(workdir);
    expect(cfg.Env).toContain("PORT=8000");
    const graphs = cfg.Env.find((e) => e.startsWith("LANGSERVE_GRAPHS="))!;
    expect(JSON.parse(graphs.slice("LANGSERVE_GRAPHS=".length))).toMatchObject({
      chat: `${workdir}/src/chat.ts:graph`,
      slow: `${workdir}/src/slow.ts:graph`,
    });
    expect(cfg.Healthcheck.Test.join(" ")).toContain("/ok");
    const listing = await shellIn(TAG, "id -u; id -g; stat -c %U /data; ls -A; hangar --version");
    const [uid, gid, owner, ...rest] = listing.split("\n");
    expect(uid).toBe("10001");
    expect(gid).toBe("10001");
    expect(owner).toBe("hangar");
    expect(rest).toEqual(expect.arrayContaining(["langgraph.json", "src", "package.json", "node_modules"]));
    for (const never of [".env", ".hangar", ".hangar-docker"]) expect(rest).not.toContain(never);
    expect(rest).toContain(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version);
    // No file where the project and its user live holds the secret.
    const secret = await shellIn(TAG, "grep -rl do-not-ship /deps /home /data /tmp; true");
    expect(secret).toBe("");
  });

  it("serves on PostgreSQL + Redis from the official variables: an API and a worker container, a streamed run, a restart keeps the thread", async () => {
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    const env = [
      "-e",
      `DATABASE_URI=${cluster.databaseUrl}`,
      "-e",
      `REDIS_URI=${cluster.redisUrl}`,
      "-e",
      `HANGAR_DATABASE_SCHEMA=${cluster.schema}`,
      "-e",
      `REDIS_KEY_PREFIX=${cluster.redisPrefix}`,
    ];
    const api = await container("api", [...env, "-e", `PORT=${apiPort}`], ["--mode", "api"]);
    const worker = await container(
      "worker",
      [...env, "-e", `PORT=${workerPort}`],
      ["serve", "--mode", "worker"],
    );
    const url = `http://127.0.0.1:${apiPort}`;
    await up(api, url);
    await up(worker, `http://127.0.0.1:${workerPort}`);
    expect(await logs(worker)).toContain("worker");

    const client = noRetryClient(url);
    const graphs = (await client.assistants.search({ limit: 100 })).map((a) => a.graph_id).sort();
    expect(graphs).toEqual(["approval", "chat", "research", "slow"]);
    const thread = await client.threads.create();
    const events: { event: string; data: unknown }[] = [];
    for await (const chunk of client.runs.stream(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
      streamMode: ["values", "messages-tuple"],
    })) {
      events.push(chunk);
    }
    expect(events[0].event).toBe("metadata");
    expect(events.some((e) => e.event === "messages")).toBe(true);
    const last = events.filter((e) => e.event === "values").pop()!.data as {
      messages: { content: string }[];
    };
    expect(last.messages.at(-1)!.content).toContain("Hello from Hangar");
    // The run executed in the worker container (the API container runs none).
    expect(await logs(worker)).toContain(thread.thread_id);

    await waitFor(
      `${api} healthy`,
      async () => (await docker(["inspect", "-f", "{{.State.Health.Status}}", api])) === "healthy",
    );
    await docker(["restart", api]);
    await up(api, url);
    const after = noRetryClient(url);
    const state = await after.threads.getState<{ messages: unknown[] }>(thread.thread_id);
    expect(state.values.messages).toHaveLength(2);

    // `docker stop` of the worker while a run waits in its node: the worker stops taking requests and runs, and
    // lets the run end (released while it drains) before it exits.
    const slowThread = await after.threads.create();
    const slow = await after.runs.create(slowThread.thread_id, "slow", { input: {} });
    await waitFor(
      "the slow run to start",
      async () => (await after.runs.get(slowThread.thread_id, slow.run_id)).status === "running",
    );
    const stopping = exec("docker", ["stop", "-t", "300", worker]);
    await waitFor(
      "the stopping worker to refuse requests",
      async () => !(await ok(`http://127.0.0.1:${workerPort}`)),
    );
    expect(await docker(["inspect", "-f", "{{.State.Running}}", worker])).toBe("true");
    await docker(["exec", worker, "touch", "/tmp/hangar-release"]);
    expect((await stopping).code).toBe(0);
    expect(await docker(["inspect", "-f", "{{.State.ExitCode}}", worker])).toBe("0");
    const ended = await after.runs.get(slowThread.thread_id, slow.run_id);
    expect(ended.status).toBe("success");
    expect((await after.threads.getState<{ released: boolean }>(slowThread.thread_id)).values.released).toBe(
      true,
    );
    expect(await logs(worker)).not.toContain("resumes from its last checkpoint");
  });

  it("its health check follows a --port given after the image's name", async () => {
    const port = await freePort();
    const name = await container("port", [], ["--port", String(port), "--host", "127.0.0.1"]);
    await up(name, `http://127.0.0.1:${port}`);
    await waitFor(
      `${name} healthy`,
      async () => (await docker(["inspect", "-f", "{{.State.Health.Status}}", name])) === "healthy",
    );
  });

  it("runs the migrations alone (`serve --migrate-only`), for a Kubernetes Job", async (ctx) => {
    const help = await docker(["run", "--rm", TAG, "serve", "--help"]);
    if (!help.includes("--migrate-only")) ctx.skip(); // the command is not in this Hangar yet
    const schema = `${cluster.schema}_m`;
    const r = await exec("docker", [
      "run",
      "--rm",
      "--network",
      "host",
      "-e",
      `DATABASE_URI=${cluster.databaseUrl}`,
      "-e",
      `HANGAR_DATABASE_SCHEMA=${schema}`,
      TAG,
      "serve",
      "--migrate-only",
    ]);
    await dropCluster({ ...cluster, schema, redisPrefix: `${schema}:` }).catch(() => {});
    expect(r.code, r.stdout + r.stderr).toBe(0);
  });

  it("embedded: threads and runs stay in the volume across `docker stop`, `docker rm` and a new container", async () => {
    const volume = `hangar-test-${run}-data`;
    volumes.push(volume);
    await docker(["volume", "create", volume]);
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // A short grace: the held run below outlasts it on purpose.
    const args = ["-v", `${volume}:/data`, "-e", `PORT=${port}`, "-e", "HANGAR_SHUTDOWN_GRACE_SECONDS=1"];
    const first = await container("embedded-1", args);
    await up(first, url);
    const client = noRetryClient(url);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    // A run waiting in its node when the container stops: the embedded server lets it go on for the grace period,
    // then stops it with the process and takes it up again at the next start, on the same volume.
    const slowThread = await client.threads.create();
    const slow = await client.runs.create(slowThread.thread_id, "slow", { input: {} });
    await waitFor(
      "the slow run to start",
      async () => (await client.runs.get(slowThread.thread_id, slow.run_id)).status === "running",
    );
    await docker(["stop", "-t", "300", first]);
    expect(await docker(["inspect", "-f", "{{.State.ExitCode}}", first])).toBe("0");
    await docker(["rm", first]);

    const second = await container("embedded-2", args);
    await up(second, url);
    const again = noRetryClient(url);
    expect(
      (await again.threads.getState<{ messages: unknown[] }>(thread.thread_id)).values.messages,
    ).toHaveLength(2);
    await waitFor("the slow run to be taken up again", async () =>
      (await logs(second)).includes("taken up again"),
    );
    await docker(["exec", second, "touch", "/tmp/hangar-release"]);
    await waitFor(
      "the slow run to end",
      async () => (await again.runs.get(slowThread.thread_id, slow.run_id)).status === "success",
    );
    expect((await again.threads.getState<{ released: boolean }>(slowThread.thread_id)).values.released).toBe(
      true,
    );
  });
});
