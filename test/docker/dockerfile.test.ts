// `hangar dockerfile` and what it writes, without Docker: the Dockerfile for each kind of project (npm, yarn,
// pnpm, none; node_version, dockerfile_lines, local dependencies, the sections as the official image's variables),
// the .hangar-docker/ folder it builds from, the .dockerignore, the Compose file of --add-docker-compose, and the
// image's entry point turning a container's command into `hangar` arguments.
import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import yaml from "js-yaml";
import { afterAll, describe, expect, it } from "vitest";
import { composeObject, toYaml } from "../../src/cli/docker/compose.ts";
import { dockerfile, envValue } from "../../src/cli/docker/dockerfile.ts";
import { hangarArgs } from "../../src/cli/docker/entrypoint.ts";
import { readDockerProject } from "../../src/cli/docker/project.ts";
import { BIN, cleanupDir, ROOT, tempDir } from "../helpers/server.ts";

const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const dirs: string[] = [];
afterAll(() => dirs.forEach(cleanupDir));

/** A project folder with these files (a langgraph.json naming one graph unless given). */
function project(files: Record<string, string | object>): string {
  const dir = tempDir("hangar-dockerfile-");
  dirs.push(dir);
  const all = { "langgraph.json": { graphs: { agent: "./agent.ts:graph" } }, "agent.ts": "", ...files };
  for (const [path, content] of Object.entries(all)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), typeof content === "string" ? content : JSON.stringify(content));
  }
  return dir;
}

const generate = (dir: string, o: { baseImage?: string; buildImage?: string } = {}) =>
  dockerfile(readDockerProject(join(dir, "langgraph.json")), { version: VERSION, lockfile: true, ...o });

/**
 * Runs the CLI in `cwd`: its exit status and output. Asynchronous: `hangar dockerfile` packs Hangar and resolves a
 * lock file, which on a loaded machine takes long enough that a synchronous wait stalls this worker's link to vitest.
 */
const cli = (cwd: string, ...args: string[]) =>
  new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) =>
        resolve({ status: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr }),
    );
  });

describe("hangar dockerfile", () => {
  it("prints the example project's Dockerfile and writes what it builds from", async () => {
    const dir = tempDir("hangar-dockerfile-example-");
    dirs.push(dir);
    cpSync(join(ROOT, "examples"), dir, { recursive: true });
    const r = await cli(dir, "dockerfile", "-");
    expect(r.status, r.stderr).toBe(0);
    const text = r.stdout;
    const name = dir.split("/").pop();
    const lines = text.split("\n");
    expect(lines.filter((l) => l.startsWith("FROM "))).toEqual([
      "FROM node:20-bookworm AS build",
      "FROM node:20-bookworm-slim",
    ]);
    expect(text).toContain(`COPY .hangar-docker/hangar-${VERSION}.tgz /tmp/hangar.tgz`);
    expect(text).toContain(`WORKDIR /deps/${name}`);
    // No package.json: the graphs import Hangar's packages, as ES modules.
    expect(text).toContain("ln -s /opt/hangar/node_modules node_modules");
    expect(text).toContain("USER hangar");
    expect(text).toContain("VOLUME /data");
    expect(text).toContain("EXPOSE 8000");
    expect(text).toContain("ENV PORT=8000");
    const graphs = lines.find((l) => l.startsWith("ENV LANGSERVE_GRAPHS="))!;
    expect(JSON.parse(graphs.slice("ENV LANGSERVE_GRAPHS='".length, -1))).toEqual({
      chat: `/deps/${name}/src/chat.ts:graph`,
      research: `/deps/${name}/src/research.ts:graph`,
      approval: `/deps/${name}/src/approval.ts:makeGraph`,
    });
    expect(text).toMatch(/^HEALTHCHECK .* CMD \["node", "-e", ".*\/ok.*"\]$/m);
    const entry = lines.find((l) => l.startsWith("ENTRYPOINT "))!;
    expect(JSON.parse(entry.slice("ENTRYPOINT ".length))).toEqual([
      "node",
      "--max-semi-space-size=4",
      "/opt/hangar/dist/cli/docker/entrypoint.js",
      "--config",
      `/deps/${name}/langgraph.json`,
      "--data-dir",
      "/data",
      "--host",
      "0.0.0.0",
      "--",
    ]);
    expect(lines).toContain('CMD ["serve"]');

    // Hangar's package, and its dependencies' manifest without scripts or devDependencies.
    expect(existsSync(join(dir, `.hangar-docker/hangar-${VERSION}.tgz`))).toBe(true);
    const manifest = JSON.parse(readFileSync(join(dir, ".hangar-docker/package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.devDependencies).toBeUndefined();
    expect(Object.keys(manifest.dependencies as object)).toContain("better-sqlite3");
    expect(existsSync(join(dir, ".hangar-docker/package-lock.json"))).toBe(true);
    expect(readFileSync(join(dir, ".hangar-docker/.gitignore"), "utf8")).toContain("*");
    const ignore = readFileSync(join(dir, ".dockerignore"), "utf8").split("\n");
    expect(ignore).toEqual(expect.arrayContaining([".env", ".env.*", ".hangar", "node_modules", ".git"]));
    expect(ignore.join("\n")).not.toContain(".hangar-docker");
    // `-`: nothing but the Dockerfile on stdout.
    expect(existsSync(join(dir, "Dockerfile"))).toBe(false);
  });

  it("--add-docker-compose writes the Dockerfile and a Compose file: API, worker, PostgreSQL, Redis", async () => {
    const dir = project({
      ".env": "A=1\n",
      "langgraph.json": { graphs: { agent: "./agent.ts:graph" }, env: ".env" },
    });
    const r = await cli(dir, "dockerfile", "--add-docker-compose");
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(dir, "Dockerfile"), "utf8")).toContain("FROM node:20-bookworm-slim");
    const compose = yaml.load(readFileSync(join(dir, "docker-compose.yml"), "utf8")) as {
      services: Record<string, Record<string, unknown>>;
      volumes: Record<string, unknown>;
    };
    expect(Object.keys(compose.services).sort()).toEqual([
      "hangar-api",
      "hangar-postgres",
      "hangar-redis",
      "hangar-worker",
    ]);
    const api = compose.services["hangar-api"];
    expect(api.build).toEqual({ context: ".", dockerfile: "Dockerfile" });
    expect(api.command).toEqual(["--mode", "api"]);
    expect(api.ports).toEqual(["127.0.0.1:8123:8000"]);
    expect(api.env_file).toEqual([".env"]);
    expect(api.environment).toEqual({
      DATABASE_URI: "postgres://postgres:postgres@hangar-postgres:5432/postgres?sslmode=disable",
      REDIS_URI: "redis://hangar-redis:6379",
    });
    expect(api.depends_on).toEqual({
      "hangar-redis": { condition: "service_healthy" },
      "hangar-postgres": { condition: "service_healthy" },
    });
    expect(compose.services["hangar-worker"].command).toEqual(["--mode", "worker"]);
    expect(compose.services["hangar-worker"].ports).toBeUndefined();
    expect(compose.services["hangar-postgres"].image).toBe("postgres:16");
    expect(compose.services["hangar-redis"].image).toBe("redis:7");
    expect(Object.keys(compose.volumes)).toEqual(["hangar-data", "hangar-postgres-data"]);
    expect(api.volumes).toEqual(["hangar-data:/data"]);
  });

  it("keeps a .dockerignore of the project, warning about what it lets in; refuses one leaving out .hangar-docker/", async () => {
    const dir = project({ ".dockerignore": "node_modules\n" });
    const r = await cli(dir, "dockerfile", "-");
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(dir, ".dockerignore"), "utf8")).toBe("node_modules\n");
    expect(r.stderr).toContain("does not leave out .env");
    expect(r.stderr).toContain("does not leave out .hangar");
    const blocked = project({ ".dockerignore": ".*\n" });
    const b = await cli(blocked, "dockerfile", "-");
    expect(b.status).toBe(1);
    expect(b.stderr).toContain("leaves out .hangar-docker/");
  });

  it("refuses what the image could not be built from, naming it", async () => {
    const old = await cli(
      project({ "langgraph.json": { node_version: "18", graphs: { a: "./agent.ts:g" } } }),
      "dockerfile",
      "-",
    );
    expect(old.status).toBe(2);
    expect(old.stderr).toContain("node_version must be a Node version of at least 20");
    const outside = await cli(
      project({ "langgraph.json": { dependencies: [".."], graphs: { a: "./agent.ts:g" } } }),
      "dockerfile",
      "-",
    );
    expect(outside.status).toBe(2);
    expect(outside.stderr).toContain("dependencies: '..' is outside the project's directory");
  });
});

describe("the Dockerfile", () => {
  it("installs production dependencies with the package manager of the lockfile", async () => {
    const pkg = { "package.json": { name: "p" } };
    const cases: [Record<string, string | object>, string, string][] = [
      [
        { ...pkg, "package-lock.json": "{}" },
        "COPY package.json package-lock.json ./",
        "RUN npm ci --omit=dev",
      ],
      [pkg, "COPY package.json ./", "RUN npm install --omit=dev"],
      [
        { ...pkg, "yarn.lock": "" },
        "COPY package.json yarn.lock ./",
        "RUN yarn install --frozen-lockfile --production --non-interactive",
      ],
      [
        { ...pkg, "yarn.lock": "", ".yarnrc.yml": "" },
        "COPY package.json yarn.lock .yarnrc.yml ./",
        "RUN corepack enable && yarn workspaces focus --all --production",
      ],
      [
        { ...pkg, "pnpm-lock.yaml": "" },
        "COPY package.json pnpm-lock.yaml ./",
        "RUN corepack enable && pnpm install --frozen-lockfile --prod",
      ],
    ];
    for (const [files, copy, install] of cases) {
      const lines = generate(project(files)).split("\n");
      const at = lines.indexOf(copy);
      expect(at, copy).toBeGreaterThan(0);
      expect(lines[at + 1]).toBe(install);
      // Dependencies before the project's files, so an edit of the code does not install them again.
      expect(lines.indexOf("COPY . ./")).toBeGreaterThan(at + 1);
      expect(lines).toContain("RUN rm -rf .hangar-docker");
      expect(lines.join("\n")).not.toContain("ln -s /opt/hangar/node_modules");
    }
  });

  it("follows node_version, dockerfile_lines, local dependencies, the base images and every section", async () => {
    const dir = project({
      "package.json": {},
      "libs/tools/package.json": {},
      "libs/tools/package-lock.json": "{}",
      "langgraph.json": {
        node_version: 22,
        dockerfile_lines: ["RUN echo one > /one", "ENV FROM_LINES=1"],
        dependencies: [".", "./libs/tools", "some-registry-package"],
        graphs: { agent: { path: "./agent.ts:graph", description: "it's an agent" } },
        ui: { agent: "./ui.tsx" },
        ui_config: { shared: ["nuqs"] },
        http: { disable_meta: true },
        auth: { path: "./auth.ts:auth" },
        store: { index: { dims: 2, embed: "./embed.ts:embed" } },
        checkpointer: { ttl: { strategy: "delete", default_ttl: 60 } },
      },
    });
    const text = generate(dir);
    const lines = text.split("\n");
    expect(lines.filter((l) => l.startsWith("FROM "))).toEqual([
      "FROM node:22-bookworm AS build",
      "FROM node:22-bookworm-slim",
    ]);
    // dockerfile_lines right after each FROM, as in the official image.
    for (const from of lines.filter((l) => l.startsWith("FROM "))) {
      const at = lines.indexOf(from);
      expect(lines.slice(at + 2, at + 4)).toEqual(["RUN echo one > /one", "ENV FROM_LINES=1"]);
    }
    expect(lines).toContain("COPY libs/tools/package.json libs/tools/package-lock.json ./libs/tools/");
    expect(lines).toContain("RUN cd libs/tools && npm ci --omit=dev");
    const env = (name: string) =>
      lines.find((l) => l.startsWith(`ENV ${name}=`))?.slice(`ENV ${name}=`.length);
    // A value with a single quote is double-quoted.
    expect(env("LANGSERVE_GRAPHS")).toBe(
      envValue(
        JSON.stringify({
          agent: { path: `/deps/${dir.split("/").pop()}/agent.ts:graph`, description: "it's an agent" },
        }),
      ),
    );
    expect(env("LANGSERVE_GRAPHS")!.startsWith('"')).toBe(true);
    const json = (name: string) => JSON.parse(env(name)!.slice(1, -1)) as unknown;
    expect(json("LANGGRAPH_UI")).toEqual({ agent: "./ui.tsx" });
    expect(json("LANGGRAPH_UI_CONFIG")).toEqual({ shared: ["nuqs"] });
    expect(json("LANGGRAPH_HTTP")).toEqual({ disable_meta: true });
    expect(json("LANGGRAPH_AUTH")).toEqual({ path: "./auth.ts:auth" });
    expect(json("LANGGRAPH_STORE")).toEqual({ index: { dims: 2, embed: "./embed.ts:embed" } });
    expect(json("LANGGRAPH_CHECKPOINTER")).toEqual({ ttl: { strategy: "delete", default_ttl: 60 } });

    const custom = generate(dir, { baseImage: "local/base:1" }).split("\n");
    expect(custom.filter((l) => l.startsWith("FROM "))).toEqual([
      "FROM local/base:1 AS build",
      "FROM local/base:1",
    ]);
    const both = generate(dir, { baseImage: "local/run:1", buildImage: "local/build:1" }).split("\n");
    expect(both.filter((l) => l.startsWith("FROM "))).toEqual([
      "FROM local/build:1 AS build",
      "FROM local/run:1",
    ]);
    const p = readDockerProject(join(dir, "langgraph.json"));
    expect(p.warnings.join("\n")).toContain("some-registry-package not installed");
  });

  it("quotes ENV values so the builder takes them as they are", async () => {
    expect(envValue('{"a":"b"}')).toBe(`'{"a":"b"}'`);
    expect(envValue(`{"a":"it's $HOME \\\\"}`)).toBe(`"{\\"a\\":\\"it's \\$HOME \\\\\\\\\\"}"`);
  });
});

describe("the Compose file", () => {
  it("with --postgres-uri has no PostgreSQL service and reaches the host", async () => {
    const dir = project({});
    const written = composeObject(readDockerProject(join(dir, "langgraph.json")), {
      image: "x",
      port: 9000,
      host: "0.0.0.0",
      postgresUri: "postgres://u@host.docker.internal:5432/db",
      envFileExists: false,
    });
    const c = written as { services: Record<string, Record<string, unknown>>; volumes?: unknown };
    expect(Object.keys(c.services).sort()).toEqual(["hangar-api", "hangar-redis", "hangar-worker"]);
    expect(c.volumes).toEqual({ "hangar-data": {} });
    expect(c.services["hangar-api"].ports).toEqual(["0.0.0.0:9000:8000"]);
    expect(c.services["hangar-api"].extra_hosts).toEqual(["host.docker.internal:host-gateway"]);
    // Checked every 5 s for the stack's whole life (a process started in the container each time), not every 2 s.
    expect(c.services["hangar-redis"].healthcheck).toEqual({
      test: ["CMD", "redis-cli", "ping"],
      interval: "5s",
      timeout: "30s",
      retries: 24,
    });
    expect((c.services["hangar-worker"].environment as Record<string, string>).DATABASE_URI).toBe(
      "postgres://u@host.docker.internal:5432/db",
    );
    expect(yaml.load(toYaml(written))).toEqual(written);
  });

  it("is YAML that reads back as written", async () => {
    const value = {
      a: { "b-c": ["x", { y: 1, z: [true, 'q"uote'] }], empty: {}, none: [] },
      "with space": "v: w",
    };
    expect(yaml.load(toYaml(value))).toEqual(value);
  });
});

describe("the image's entry point", () => {
  const defaults = ["--config", "/deps/app/langgraph.json", "--data-dir", "/data", "--host", "0.0.0.0", "--"];
  const serve = ["serve", "--config", "/deps/app/langgraph.json", "--data-dir", "/data", "--host", "0.0.0.0"];

  it("runs `hangar serve` with the image's defaults, without the data directory on PostgreSQL", async () => {
    expect(hangarArgs([...defaults, "serve"], false)).toEqual(serve);
    expect(hangarArgs([...defaults], false)).toEqual(serve);
    expect(hangarArgs([...defaults, "--mode", "worker"], true)).toEqual([
      "serve",
      "--config",
      "/deps/app/langgraph.json",
      "--host",
      "0.0.0.0",
      "--mode",
      "worker",
    ]);
    expect(hangarArgs([...defaults, "serve", "--migrate-only"], false)).not.toContain("--data-dir");
  });

  it("lets the command's own options win, and passes other commands through", async () => {
    expect(hangarArgs([...defaults, "serve", "--host=127.0.0.1", "-c", "other.json"], false)).toEqual([
      "serve",
      "--data-dir",
      "/data",
      "--host=127.0.0.1",
      "-c",
      "other.json",
    ]);
    expect(hangarArgs([...defaults, "check"], false)).toEqual([
      "check",
      "--config",
      "/deps/app/langgraph.json",
    ]);
    expect(hangarArgs([...defaults, "--version"], false)).toEqual(["--version"]);
    expect(hangarArgs([...defaults, "-h"], false)).toEqual(["-h"]);
    expect(hangarArgs([...defaults, "control-plane", "--port", "1"], false)).toEqual([
      "control-plane",
      "--port",
      "1",
    ]);
  });
});
