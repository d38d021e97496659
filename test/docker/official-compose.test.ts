// The compose file the official CLI writes (`langgraphjs dockerfile --add-docker-compose`, kept unedited in
// test/fixtures/docker/official-compose with how it was made) runs Hangar's image, with Compose 1.29 here: only
// the image names change (the API's build becomes the image `hangar build` made; PostgreSQL's and Redis's are the
// tests' local stand-ins), its port is published on 127.0.0.1, and the stand-ins' health checks may take longer
// than the file's 1 s (see below). The API answers /ok and runs a graph on the PostgreSQL (POSTGRES_URI) and Redis
// (REDIS_URI) the file gives it; `down -v` removes all it made.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dump, load } from "js-yaml";
import {
  baseImage,
  chatRun,
  composeLeftovers,
  docker,
  dockerQuiet,
  exec,
  freePort,
  oneDockerFileAtATime,
  removeComposeProject,
  serviceImages,
  skipWithoutDocker,
  waitForOk,
} from "../helpers/docker.ts";
import { BIN, cleanupDir, noRetryClient, ROOT, tempDir } from "../helpers/server.ts";

const FILE = "test/docker/official-compose.test.ts";
const skip = skipWithoutDocker(FILE);
oneDockerFileAtATime();
const FIXTURE = join(ROOT, "test/fixtures/docker/official-compose/docker-compose.yml");
const run = `${process.pid}`;
const TAG = `hangar-test/official-compose:${run}`;
const NAME = `hangar-official-${run}`;
let tmp = "";
let project = "";
let port = 0;
let composeFile = "";
let pgvector = "";

type Compose = {
  services: Record<string, Record<string, unknown>>;
  volumes?: Record<string, unknown>;
};

/**
 * A stand-in for `pgvector/pgvector:pg16` (the official `postgres` image's entry point: a database initialized
 * from POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB on first start, password authentication over TCP, the
 * command `postgres ...` run as the user postgres; `pg_isready` answers on the default socket), made from the base
 * image's PostgreSQL 15. Debian bookworm has no pgvector package, so `shared_preload_libraries=vector`, which the
 * compose file gives, is dropped with a line saying so (Hangar does not use the extension). The cluster Debian's
 * package made is removed, as the official image has none (pg_isready would ask its port, not 5432).
 */
async function pgvectorStandIn(): Promise<string> {
  const from = await baseImage();
  const tag = `hangar-test/pgvector-standin:${from.split(":")[1]}`;
  const entrypoint = [
    "#!/bin/sh",
    "set -e",
    "BIN=/usr/lib/postgresql/15/bin",
    "PGDATA=${PGDATA:-/var/lib/postgresql/data}",
    '[ "$1" = postgres ] || exec "$@"',
    "shift",
    'mkdir -p "$PGDATA" /var/run/postgresql',
    'chown postgres:postgres "$PGDATA" /var/run/postgresql && chmod 700 "$PGDATA"',
    'if [ ! -s "$PGDATA/PG_VERSION" ]; then',
    '  printf %s "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}" > /tmp/pw && chown postgres /tmp/pw',
    '  runuser -u postgres -- "$BIN/initdb" -D "$PGDATA" -U "${POSTGRES_USER:-postgres}" --pwfile=/tmp/pw \\',
    "    --auth-local=trust --auth-host=scram-sha-256 >/dev/null",
    "  rm -f /tmp/pw",
    '  echo "listen_addresses = \'*\'" >> "$PGDATA/postgresql.conf"',
    '  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"',
    '  DB="${POSTGRES_DB:-${POSTGRES_USER:-postgres}}"',
    '  if [ "$DB" != postgres ]; then',
    '    runuser -u postgres -- "$BIN/postgres" --single -D "$PGDATA" postgres <<SQL >/dev/null',
    'CREATE DATABASE "$DB";',
    "SQL",
    "  fi",
    "fi",
    'for a in "$@"; do shift; case "$a" in shared_preload_libraries=vector) echo \'stand-in: no pgvector, shared_preload_libraries=vector dropped\'; set -- "$@" shared_preload_libraries=;; *) set -- "$@" "$a";; esac; done',
    'exec runuser -u postgres -- "$BIN/postgres" -D "$PGDATA" "$@"',
  ].join("\n");
  const dockerfile = [
    `FROM ${from}`,
    `RUN echo ${Buffer.from(entrypoint).toString("base64")} | base64 -d > /usr/local/bin/docker-entrypoint.sh \\
    && chmod +x /usr/local/bin/docker-entrypoint.sh \\
    && rm -rf /etc/postgresql/15/main /var/lib/postgresql/15/main`,
    "EXPOSE 5432",
    "STOPSIGNAL SIGINT",
    'ENTRYPOINT ["/usr/local/bin/docker-entrypoint.sh"]',
    'CMD ["postgres"]',
  ].join("\n");
  await docker(["build", "-q", "-t", tag, "-"], { input: dockerfile });
  return tag;
}

/** docker-compose (Compose 1 here; the plugin where installed) on the test's file and project name. */
async function compose(...args: string[]) {
  const plugin = (await exec("docker", ["compose", "version"])).code === 0;
  const [cmd, pre] = plugin ? ["docker", ["compose"]] : ["docker-compose", []];
  return exec(cmd, [...pre, "-p", NAME, "-f", composeFile, ...args], { cwd: project });
}

/** What Compose made for the project, and which of the anonymous volumes of its containers are still there. */
async function leftovers(anonymous: string[]): Promise<string[]> {
  const volumes = (await docker(["volume", "ls", "-q"])).split("\n");
  return [...(await composeLeftovers(NAME)), ...volumes.filter((v) => anonymous.includes(v))];
}

describe.skipIf(skip)("the official CLI's compose file runs Hangar's image", () => {
  const official = load(readFileSync(FIXTURE, "utf8")) as Compose;

  beforeAll(async () => {
    const base = await baseImage();
    const { redis } = await serviceImages();
    port = await freePort();
    tmp = tempDir("hangar-docker-official-");
    // The project the fixture was written for: the example project in a directory named `examples`.
    project = join(tmp, "examples");
    mkdirSync(project);
    cpSync(join(ROOT, "examples/src"), join(project, "src"), { recursive: true });
    cpSync(join(ROOT, "examples/langgraph.json"), join(project, "langgraph.json"));
    pgvector = await pgvectorStandIn();
    const built = await exec(process.execPath, [BIN, "build", "-t", TAG, "--base-image", base], {
      cwd: project,
    });
    expect(built.code, `hangar build:\n${built.stdout}\n${built.stderr}`).toBe(0);

    // The fixture with the image names replaced and the port on loopback; nothing else.
    const file = structuredClone(official);
    const api = file.services["langgraph-api"];
    delete api.build;
    delete api.pull_policy;
    api.image = TAG;
    api.ports = [`127.0.0.1:${port}:8000`];
    file.services["langgraph-postgres"].image = pgvector;
    file.services["langgraph-redis"].image = redis;
    // The file's checks give `pg_isready` and `redis-cli ping` 1 s each, 5 failures in a row making the service
    // unhealthy: on a loaded 2-core machine (a clean clone's suite, Docker builds beside it) the exec alone took
    // longer, the daemon logged "Health check ... context deadline exceeded" and `up` refused to start the API.
    // What is checked is the stand-ins, not Hangar: the timeout is raised, the checks themselves unchanged.
    for (const service of ["langgraph-postgres", "langgraph-redis"]) {
      const check = file.services[service].healthcheck as Record<string, unknown>;
      expect(check.timeout).toBe("1s");
      check.timeout = "30s";
    }
    composeFile = join(project, "docker-compose.yml");
    writeFileSync(composeFile, dump(file));
  });

  afterAll(async () => {
    if (composeFile) await removeComposeProject(NAME);
    // Leaving the untagged layers, the next Docker file's build cache.
    await dockerQuiet(["rmi", "--no-prune", TAG]);
    if (tmp) cleanupDir(tmp);
  });

  it("is the CLI's file: the API built from the official image, PostgreSQL and Redis by the official names", () => {
    const api = official.services["langgraph-api"];
    expect(api.build).toMatchObject({ context: "." });
    expect((api.build as { dockerfile_inline: string }).dockerfile_inline).toContain(
      "FROM langchain/langgraphjs-api:20",
    );
    expect(api.environment).toMatchObject({
      REDIS_URI: "redis://langgraph-redis:6379",
      POSTGRES_URI: expect.stringContaining("@langgraph-postgres:5432/postgres?sslmode=disable"),
    });
    expect(api.ports).toEqual(["8000"]);
    expect(official.services["langgraph-postgres"].image).toBe("pgvector/pgvector:pg16");
    expect(official.services["langgraph-redis"].image).toBe("redis:6");
  });

  it("up: /ok and a run through the port published on 127.0.0.1; down -v removes everything", async () => {
    const up = await compose("up", "-d");
    expect(up.code, `compose up:\n${up.stdout}\n${up.stderr}`).toBe(0);
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(url, async () => {
      const r = await compose("logs", "--no-color", "--tail", "40");
      return r.stdout + r.stderr;
    });
    // The API is Hangar's on the compose file's PostgreSQL (POSTGRES_URI) and Redis (REDIS_URI), with its env.
    const { threadId, reply } = await chatRun(url);
    expect(reply).toContain("Hello from Hangar!");
    const state = await noRetryClient(url).threads.getState(threadId);
    expect((state.values as { messages: unknown[] }).messages).toHaveLength(2);
    // The thread is in the compose file's PostgreSQL.
    const pg = (await compose("ps", "-q", "langgraph-postgres")).stdout.trim();
    const psql = (sql: string) => docker(["exec", "-u", "postgres", pg, "psql", "-Atc", sql]);
    const schema = await psql(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'threads'",
    );
    expect(schema).not.toBe("");
    expect(await psql(`SELECT count(*) FROM "${schema}".threads WHERE thread_id = '${threadId}'`)).toBe("1");

    const container = (await compose("ps", "-q", "langgraph-api")).stdout.trim();
    const mounts = JSON.parse(await docker(["inspect", "--format", "{{json .Mounts}}", container])) as {
      Name?: string;
    }[];
    const anonymous = mounts.map((m) => m.Name ?? "").filter(Boolean);
    const down = await compose("down", "-v");
    expect(down.code, `compose down -v:\n${down.stdout}\n${down.stderr}`).toBe(0);
    expect(await leftovers(anonymous)).toEqual([]);
  });
});
