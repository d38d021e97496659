// The Compose file of a project (`hangar up`, `hangar dockerfile --add-docker-compose`): the Agent Server's API and
// worker processes from the project's image, PostgreSQL (unless --postgres-uri names one) and Redis, written for
// Compose 1 (1.27+, the Compose Specification without `--wait`) and Compose 2 alike.
import type { DockerProject } from "./project.js";
import { IMAGE_PORT } from "./dockerfile.js";

export const DEFAULT_POSTGRES_IMAGE = "postgres:16";
export const DEFAULT_REDIS_IMAGE = "redis:7";
/** The database of the PostgreSQL service (its image's variables set user, password and database). */
const POSTGRES_URI = "postgres://postgres:postgres@hangar-postgres:5432/postgres?sslmode=disable";

export interface ComposeOptions {
  /** The image both server services run; with `build`, Compose builds it first (`dockerfile --add-docker-compose`). */
  image: string;
  /** Build it from this Dockerfile (relative to the project) instead of using an image `hangar up` built. */
  build?: { dockerfile: string };
  /** The API's port on the host. */
  port: number;
  /** The address the port is published on (default 127.0.0.1). */
  host?: string;
  /** An existing PostgreSQL: no PostgreSQL service. */
  postgresUri?: string;
  postgresImage?: string;
  redisImage?: string;
  /** Whether the project's env file exists (it is then passed to the servers). */
  envFileExists: boolean;
}

type Yaml = string | number | boolean | Yaml[] | { [k: string]: Yaml };

/**
 * How long one health check may take, as the image's own: starting the check's process (a Node probe, pg_isready,
 * redis-cli) took over 5 s on a loaded 2-core machine, Docker logged "context deadline exceeded" and marked a rebuilt
 * API unhealthy that answered /ok.
 */
const CHECK_TIMEOUT = "30s";

/** The Compose file as an object. */
export function composeObject(p: DockerProject, o: ComposeOptions): { [k: string]: Yaml } {
  const withPostgres = !o.postgresUri;
  // Every 5 s, as the official Compose file checks them (each check is a process started in the container, for the
  // stack's whole life: every 2 s cost a few percent of a core while idle); 24 failures (2 minutes) make one unhealthy.
  const health = (test: string[]) => ({ test, interval: "5s", timeout: CHECK_TIMEOUT, retries: 24 });
  const services: { [k: string]: Yaml } = {
    "hangar-redis": {
      image: o.redisImage ?? DEFAULT_REDIS_IMAGE,
      healthcheck: health(["CMD", "redis-cli", "ping"]),
    },
  };
  if (withPostgres) {
    services["hangar-postgres"] = {
      image: o.postgresImage ?? DEFAULT_POSTGRES_IMAGE,
      environment: { POSTGRES_DB: "postgres", POSTGRES_USER: "postgres", POSTGRES_PASSWORD: "postgres" },
      volumes: ["hangar-postgres-data:/var/lib/postgresql/data"],
      healthcheck: health(["CMD-SHELL", "pg_isready -U postgres -h 127.0.0.1"]),
    };
  }
  const dependsOn: { [k: string]: Yaml } = { "hangar-redis": { condition: "service_healthy" } };
  if (withPostgres) dependsOn["hangar-postgres"] = { condition: "service_healthy" };
  const server = (mode: "api" | "worker"): { [k: string]: Yaml } => {
    const s: { [k: string]: Yaml } = { image: o.image };
    if (o.build) s.build = { context: ".", dockerfile: o.build.dockerfile };
    s.command = ["--mode", mode];
    // An init as PID 1 forwards SIGTERM to `hangar serve` and reaps what its graphs leave behind.
    s.init = true;
    // Running runs get HANGAR_SHUTDOWN_GRACE_SECONDS (20 s by default) to finish before Compose kills.
    s.stop_grace_period = "30s";
    // The image's health check, more often than its 30 s: `hangar up --wait` waits for it.
    s.healthcheck = { interval: "5s", timeout: CHECK_TIMEOUT, retries: 3, start_period: "120s" };
    if (mode === "api") s.ports = [`${o.host ?? "127.0.0.1"}:${o.port}:${IMAGE_PORT}`];
    s.environment = {
      DATABASE_URI: o.postgresUri ?? POSTGRES_URI,
      REDIS_URI: "redis://hangar-redis:6379",
    };
    // The image's /data volume, named: `down -v` removes it, where Compose 1 leaves the anonymous volume of a
    // container it recreated behind. (Unused on PostgreSQL.)
    s.volumes = ["hangar-data:/data"];
    if (p.envFile && o.envFileExists) s.env_file = [p.envFile];
    // An existing PostgreSQL on the Docker host is reached as host.docker.internal.
    if (o.postgresUri) s.extra_hosts = ["host.docker.internal:host-gateway"];
    s.depends_on = dependsOn;
    return s;
  };
  services["hangar-api"] = server("api");
  services["hangar-worker"] = server("worker");
  const compose: { [k: string]: Yaml } = { services };
  compose.volumes = withPostgres ? { "hangar-data": {}, "hangar-postgres-data": {} } : { "hangar-data": {} };
  return compose;
}

const plainKey = (k: string) => (/^[A-Za-z0-9_.-]+$/.test(k) ? k : JSON.stringify(k));

/** YAML of a value made of strings, numbers, booleans, lists and maps (strings double-quoted: always valid YAML). */
export function toYaml(value: Yaml, indent = 0): string {
  const pad = " ".repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => typeof v !== "object")) return `[${value.map((v) => toYaml(v)).join(", ")}]`;
    return value.map((v) => `\n${pad}- ${toYaml(v, indent + 2).trimStart()}`).join("");
  }
  if (typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return entries
      .map(([k, v]) => {
        const inner = toYaml(v, indent + 2);
        return `\n${pad}${plainKey(k)}:${inner.startsWith("\n") ? inner : ` ${inner}`}`;
      })
      .join("");
  }
  return typeof value === "string" ? JSON.stringify(value) : String(value);
}

/** The Compose file's text, with a comment saying what wrote it. */
export function composeYaml(p: DockerProject, o: ComposeOptions, header: string[]): string {
  return `${header.map((l) => `# ${l}`).join("\n")}${toYaml(composeObject(p, o))}\n`;
}
