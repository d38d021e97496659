// Every environment variable Hangar reads, declared once (name, type, default, doc) and parsed once into typed
// settings; docs/configuration.md is generated from these declarations (src/lib/settings/doc.ts).
import {
  SettingsError,
  envVar,
  flag,
  intAtLeast,
  list,
  oneOf,
  port,
  positiveInt,
  positiveSeconds,
  readGroup,
  text,
} from "./settings/env.js";
import type { Env, EnvVar, ValuesOf } from "./settings/env.js";
import { SECTION_VARS } from "./settings/section-vars.js";
import { z } from "zod";

export { SettingsError, type Env, type EnvVar } from "./settings/env.js";

// ---- the official Agent Server's names (its images, compose files and Helm values set them), read as aliases

/** An official true/false variable's text (as `flag` reads it) as `whenTrue` or `whenFalse` (LOG_JSON as LOG_FORMAT). */
const officialFlag = (name: string, whenTrue: string, whenFalse: string) => (raw: string) => {
  const parsed = flag.safeParse(raw);
  if (!parsed.success) throw new SettingsError(`${name} must be true or false, got '${raw}'`);
  return parsed.data ? whenTrue : whenFalse;
};

/** BG_JOB_MAX_RETRIES (retries after the first attempt) as HANGAR_MAX_ATTEMPTS (attempts in all). */
const retriesAsAttempts = (raw: string) => {
  const parsed = intAtLeast(0).safeParse(raw);
  if (!parsed.success)
    throw new SettingsError(`BG_JOB_MAX_RETRIES must be an integer of at least 0, got '${raw}'`);
  return String(parsed.data + 1);
};

// ---- variables shared by several commands

const PORT = envVar("PORT", port, {
  doc: "port to listen on when `--port` is not given",
  type: "0-65535",
  shownDefault: "2024 (`dev`), 8123 (`serve`), 8300 (`control-plane`)",
});
const DATABASE_URL = envVar("DATABASE_URL", text, {
  doc:
    "PostgreSQL connection URL. `serve`: with `REDIS_URL`, the scale-out backend; `control-plane`: its store, " +
    "and the database of `prod` deployments",
  type: "URL",
  secret: true,
  aliases: [{ name: "DATABASE_URI" }, { name: "POSTGRES_URI" }, { name: "POSTGRES_URI_CUSTOM" }],
});
const REDIS_URL = envVar("REDIS_URL", text, {
  doc: "Redis connection URL (event logs and signals of the scale-out backend; `prod` deployments of the control plane)",
  type: "URL",
  secret: true,
  aliases: [{ name: "REDIS_URI" }, { name: "REDIS_URI_CUSTOM" }],
});
const API_KEY = envVar("HANGAR_API_KEY", text, {
  doc: "API key of the control plane, when `--api-key` is not given (`deploy` also reads it from the project's `.env`)",
  type: "string",
  secret: true,
});

// ---- the Agent Server (`hangar dev`, `hangar serve`)

const SERVER = {
  port: PORT,
  apiKeys: envVar("HANGAR_API_KEYS", list(","), {
    doc: "without custom auth: comma-separated keys; every request must then send one as `x-api-key`",
    type: "comma-separated list",
    secret: true,
    default: [] as string[],
    shownDefault: "",
  }),
  console: envVar("HANGAR_CONSOLE", flag, {
    doc: "`true`: `hangar serve` serves the web console at `/console` (behind the API's auth; `hangar dev` always does)",
    type: "true or false",
    default: false,
  }),
  jobsPerWorker: envVar("N_JOBS_PER_WORKER", positiveInt, {
    doc: "runs executing at once in a process, when `--n-jobs-per-worker` is not given (the official server's name)",
    type: "positive integer",
    default: 10,
  }),
  maxAttempts: envVar("HANGAR_MAX_ATTEMPTS", positiveInt, {
    doc: "how many times a run interrupted by a crash is started before it is marked `error`",
    type: "positive integer",
    default: 3,
    aliases: [{ name: "BG_JOB_MAX_RETRIES", map: retriesAsAttempts }],
  }),
  resumableTtlSeconds: envVar("HANGAR_RESUMABLE_TTL_SECONDS", positiveInt, {
    doc: "how long the events of a `stream_resumable` run stay joinable after it ends",
    type: "positive integer",
    default: 600,
    aliases: [{ name: "RESUMABLE_STREAM_TTL_SECONDS" }],
  }),
  threadLogsCacheBytes: envVar("HANGAR_THREAD_LOGS_CACHE_BYTES", intAtLeast(0), {
    doc:
      "embedded backend: memory for the event logs of idle threads (no run in progress, no open thread stream), " +
      "which thread streams replay with `Last-Event-ID`; past it, the logs of the threads idle longest are dropped " +
      "(on the scale-out backend thread logs live in Redis)",
    type: "integer ≥ 0 (bytes)",
    default: 8 * 1024 * 1024,
  }),
  stateCacheBytes: envVar("HANGAR_STATE_CACHE_BYTES", intAtLeast(0), {
    doc: "memory for thread states and histories already serialized, served again while the thread is unchanged",
    type: "integer ≥ 0 (bytes)",
    default: 16 * 1024 * 1024,
  }),
  streamBufferBytes: envVar("HANGAR_STREAM_BUFFER_BYTES", positiveInt, {
    doc:
      "bytes an event stream writes ahead of what its client has read (beyond the kernel's socket buffers); past " +
      "them it waits for the client before it reads more of the run's events, so a client that does not read " +
      "costs at most this much",
    type: "positive integer",
    default: 65536,
  }),
  streamStallSeconds: envVar("HANGAR_STREAM_STALL_SECONDS", positiveInt, {
    doc:
      "an event stream whose client reads nothing of what waits for it for this long is closed; the run goes on, " +
      "and a `stream_resumable` client can rejoin with `Last-Event-ID`",
    type: "positive integer",
    default: 30,
  }),
  sqliteSync: envVar("HANGAR_SQLITE_SYNC", oneOf(["OFF", "NORMAL", "FULL", "EXTRA"] as const), {
    doc:
      "embedded backend: `FULL`: nothing is acknowledged before it is fsynced (group commit: one fsync, off the " +
      "event loop, covers every write made before it); `NORMAL`: acknowledged once committed (survives a process " +
      "crash, may lose the last writes on power loss)",
    type: "`OFF`, `NORMAL`, `FULL` or `EXTRA`",
    default: "FULL",
  }),
  sweepIntervalMs: envVar("HANGAR_SWEEP_INTERVAL_MS", positiveInt, {
    doc: "interval of the thread TTL sweep in milliseconds, instead of `checkpointer.ttl.sweep_interval_minutes`",
    type: "positive integer",
    shownDefault: "5 minutes",
  }),
  recoverOnStart: envVar("HANGAR_RECOVER_ON_START", flag, {
    doc:
      "`false`: do not resume the runs a previous process left unfinished, nor start crons and sweeps, until " +
      "`POST /internal/recover` (set by the control plane for a successor revision)",
    type: "true or false",
    default: true,
  }),
  internalToken: envVar("HANGAR_INTERNAL_TOKEN", text, {
    doc: "token of `POST /internal/recover` (header `x-hangar-internal-token`); unset: the route does not exist",
    type: "string",
    secret: true,
  }),
  schemasAhead: envVar("HANGAR_SCHEMAS_AHEAD", flag, {
    doc:
      "`false`: `dev` and `serve` extract the graphs' schemas from their types on the first request that needs " +
      "them, instead of in the background once listening (the cache file is used either way); a control plane " +
      "passes its own value on to its deployments",
    type: "true or false",
    default: true,
  }),
  schemasCacheDir: envVar("HANGAR_SCHEMAS_CACHE_DIR", text, {
    doc:
      "directory where the schemas extracted from the graphs' types are kept across restarts (an entry holds " +
      "while the files it was computed from are unchanged; projects and processes can share one)",
    type: "path",
    shownDefault:
      "`schemas-cache` in the data directory; `~/.cache/hangar/schemas` for `serve` on PostgreSQL",
  }),
  graphThreads: envVar("HANGAR_GRAPH_THREADS", intAtLeast(0), {
    doc:
      "threads that execute the graphs' runs (each loads the project's graphs), so a node that computes for " +
      "seconds holds up neither the API nor runs on other threads; `0`: runs execute on the API's thread. " +
      "Runs at once stay `--n-jobs-per-worker`. The threads load the graphs after the server listens (a run waits " +
      "for a ready thread), and each holds its own copy of the graphs' modules (about 100 MB resident with the " +
      "example project); a control plane passes its own value on to its deployments",
    type: "integer ≥ 0",
    default: 2,
  }),
  graphCancelGraceSeconds: envVar("HANGAR_GRAPH_CANCEL_GRACE_SECONDS", positiveInt, {
    doc:
      "with graph threads: how long a cancelled run's thread has to stop it; a thread still busy then (a node in " +
      "synchronous code) is ended and replaced, and its other runs end in `error`",
    type: "positive integer",
    default: 5,
  }),
  runTimeoutSeconds: envVar("BG_JOB_TIMEOUT_SECS", positiveSeconds, {
    doc:
      "as in the official server: how long one attempt of a run may execute; past it the run is stopped as a " +
      "cancel stops it and ends `timeout` (an `error` event on its stream names the limit), its thread `error`",
    type: "positive number (seconds)",
    default: 3600,
  }),
  aesKey: envVar("LANGGRAPH_AES_KEY", text, {
    doc:
      "as in the official server: the key of encryption at rest (16, 24 or 32 bytes: that many characters, or hex, " +
      "or base64 as `openssl rand -base64 32` prints). Set, conversations are stored encrypted: checkpoints and " +
      "pending writes, thread values and interrupts, run inputs, crons' runs, Redis event logs, checkpoint metadata " +
      "but for its identifiers (docs/encryption.md)",
    type: "key",
    secret: true,
  }),
  aesJsonKeys: envVar("LANGGRAPH_AES_JSON_KEYS", list(","), {
    doc:
      "as in the official server: JSON keys also encrypted wherever they appear in the metadata, config and " +
      "context of assistants, threads, runs and crons and in store values; they can no longer be filtered on " +
      "(`langgraph_*` system keys are never encrypted)",
    type: "comma-separated list",
    default: [] as string[],
    shownDefault: "",
  }),
  aesPreviousKeys: envVar("HANGAR_AES_PREVIOUS_KEYS", list(","), {
    doc:
      "older keys of encryption at rest, newest first: they still decrypt (key rotation); values read under one " +
      "are encrypted again with `LANGGRAPH_AES_KEY`, and `hangar encryption reencrypt` does it for everything",
    type: "comma-separated list of keys",
    secret: true,
    default: [] as string[],
    shownDefault: "",
  }),
  apiUrl: envVar("LANGGRAPH_API_URL", text, {
    doc: "as in the official server: this deployment's public URL, recorded as `langgraph_api_url` in each run's metadata",
    type: "URL",
  }),
  langgraphConfig: envVar("LANGGRAPH_CONFIG", text, {
    doc:
      'as in the official server: a JSON object `{"<graph_id>": {<config>, "context": {...}}}` giving the system ' +
      "assistant of each graph it names that config and context",
    type: "JSON object",
  }),
};

const WEBHOOKS = {
  allowLoopback: envVar("HANGAR_WEBHOOK_ALLOW_LOOPBACK", flag, {
    doc:
      "`true` lets run webhooks reach loopback and this host (`127.0.0.0/8`, `::1`, `0.0.0.0`, `localhost`, also " +
      "as IPv4-mapped/NAT64/6to4 IPv6). A relative webhook (`/path`, this server) is always allowed",
    type: "true or false",
    default: false,
  }),
  allowPrivate: envVar("HANGAR_WEBHOOK_ALLOW_PRIVATE", flag, {
    doc:
      "`true` lets run webhooks reach private, link-local, CGNAT and unique-local addresses (`10/8`, `172.16/12`, " +
      "`192.168/16`, `169.254/16`, `100.64/10`, `fc00::/7`, `fe80::/10`, ...), not the cloud metadata addresses",
    type: "true or false",
    default: false,
  }),
  allowAddresses: envVar("HANGAR_WEBHOOK_ALLOW_ADDRESSES", list(","), {
    doc:
      "exceptions webhooks may reach whatever their kind: an address or CIDR range with an optional port " +
      "(`10.1.2.3:8080`, `10.0.0.0/8`, `[fd00::1]:443`). Multicast, broadcast and reserved addresses are never " +
      "reached; the checks apply to the resolved address of every connection and every redirect (at most 5)",
    type: "comma-separated list",
    default: [] as string[],
    shownDefault: "",
  }),
};

// ---- the scale-out backend (`hangar serve` with DATABASE_URL and REDIS_URL)

const CLUSTER = {
  databaseUrl: DATABASE_URL,
  redisUrl: REDIS_URL,
  databaseSchema: envVar("HANGAR_DATABASE_SCHEMA", text, {
    doc: "PostgreSQL schema of this deployment",
    type: "schema name",
    default: "public",
  }),
  redisPrefix: envVar("HANGAR_REDIS_PREFIX", text, {
    doc: "prefix of this deployment's Redis keys and channels",
    type: "string",
    default: "hangar:",
    keepEmpty: true,
    aliases: [{ name: "REDIS_KEY_PREFIX" }],
  }),
  poolSize: envVar("HANGAR_DATABASE_POOL_SIZE", positiveInt, {
    doc:
      "PostgreSQL connections of each pool: a process has two (statements; checkpoints), and its graph threads " +
      "(HANGAR_GRAPH_THREADS) two more that they share (each thread this many divided by the threads, at least 2), " +
      "so a worker holds about 4 × this many",
    type: "positive integer",
    default: 10,
    aliases: [{ name: "LANGGRAPH_POSTGRES_POOL_MAX_SIZE" }],
  }),
  preparedStatements: envVar("HANGAR_DATABASE_PREPARED", flag, {
    doc:
      "`false`: send every PostgreSQL statement unnamed, planned each time (for a connection pooler in " +
      "transaction mode that cannot keep prepared statements, e.g. PgBouncer before 1.21)",
    type: "true or false",
    default: true,
  }),
  leaseSeconds: envVar("HANGAR_LEASE_SECONDS", positiveInt, {
    doc: "how long a worker holds a run without a heartbeat",
    type: "positive integer",
    default: 30,
  }),
  queuePollMs: envVar("HANGAR_QUEUE_POLL_MS", positiveInt, {
    doc: "how often an idle worker checks the queue without a wake-up (milliseconds)",
    type: "positive integer",
    default: 1000,
  }),
  shutdownGraceSeconds: envVar("HANGAR_SHUTDOWN_GRACE_SECONDS", positiveInt, {
    doc:
      "how long a stopping `serve` lets running runs finish (SIGTERM, SIGINT); then the scale-out backend hands the " +
      "rest back to the queue, the embedded one stops them and resumes them at the next start. `dev` stops them at once",
    type: "positive integer",
    default: 20,
    aliases: [{ name: "BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS" }],
  }),
  connectTimeoutSeconds: envVar("HANGAR_CONNECT_TIMEOUT_SECONDS", positiveInt, {
    doc: "how long start-up retries an unreachable PostgreSQL or Redis",
    type: "positive integer",
    default: 60,
  }),
};

// ---- the control plane (`hangar control-plane`)

const CONTROL_PLANE = {
  port: PORT,
  databaseUrl: DATABASE_URL,
  redisUrl: REDIS_URL,
  databaseSchema: envVar("HANGAR_CP_DATABASE_SCHEMA", text, {
    doc: "PostgreSQL schema of the control plane's store (with `DATABASE_URL`)",
    type: "schema name",
    shownDefault: "hangar_control_plane",
  }),
  publicUrl: envVar("HANGAR_CP_PUBLIC_URL", text, {
    doc: "URL clients reach the control plane at, when `--public-url` is not given (in `custom_url` and upload URLs)",
    type: "URL",
    shownDefault: "from host and port",
  }),
  bootstrapApiKey: envVar("HANGAR_CP_BOOTSTRAP_API_KEY", text, {
    doc: 'on a store without organizations: create organization and workspace "default" with this API key',
    type: "string",
    secret: true,
  }),
  bootstrapPlan: envVar("HANGAR_CP_BOOTSTRAP_PLAN", text, {
    doc: "plan of the bootstrapped organization: `free`, `plus`, `enterprise` or `self_hosted_enterprise`",
    type: "plan",
    default: "plus",
  }),
  maxUploadBytes: envVar("HANGAR_CP_MAX_UPLOAD_BYTES", positiveInt, {
    doc: "largest accepted source upload, in bytes",
    type: "positive integer",
    default: 200 * 1024 * 1024,
  }),
  maxExtractedMb: envVar("HANGAR_CP_MAX_EXTRACTED_MB", positiveInt, {
    doc: "what a source tarball may expand to, in megabytes",
    type: "positive integer",
    default: 1024,
  }),
  sourceRoots: envVar("HANGAR_CP_SOURCE_ROOTS", list(":"), {
    doc: "absolute directories local `repo_url`s may be under (resolved with realpath); none: local paths are refused",
    type: "`:`-separated paths",
    default: [] as string[],
    shownDefault: "",
  }),
  secretKey: envVar("HANGAR_CP_SECRET_KEY", text, {
    doc:
      "key of deployments' secrets at rest (32 bytes: base64 or 64 hex digits); unset: generated in " +
      "`<data-dir>/secret.key`",
    type: "key",
    secret: true,
  }),
  sandboxEnv: envVar("HANGAR_CP_SANDBOX_ENV", list(","), {
    doc: "names of more variables of the control plane's environment passed to builds and deployments (not `HANGAR_*`)",
    type: "comma-separated list",
    default: [] as string[],
    shownDefault: "",
  }),
  imageRegistry: envVar("HANGAR_CP_IMAGE_REGISTRY", text, {
    doc:
      "where the control plane pushes the images it builds for `github` and `internal_source` deployments assigned " +
      "to a listener, as `<this>/<deployment id>:<revision id>`; unset: such deployments cannot be assigned to a " +
      "listener (docs/listener.md)",
    type: "registry host and repository prefix",
  }),
  imageBase: envVar("HANGAR_CP_IMAGE_BASE", text, {
    doc:
      "the image those images are assembled on (only files copied in): Node and Hangar, as `hangar build " +
      "--base-only` makes it; required with `HANGAR_CP_IMAGE_REGISTRY`",
    type: "image",
  }),
  imageDockerConfig: envVar("HANGAR_CP_IMAGE_DOCKER_CONFIG", text, {
    doc:
      "Docker's configuration directory (`docker --config`) whose `config.json` holds the registry's credentials " +
      "(`auths`); its entry for the registry is given to listeners as the deployments' image pull secret",
    type: "directory",
    shownDefault: "Docker's (`~/.docker`)",
  }),
};

const uidRange = z
  .string()
  .trim()
  .regex(/^\d+-\d+$/, "must be a range FIRST-LAST of uids from 1000 up")
  .transform((s) => s.split("-").map(Number))
  .refine(([a, b]) => a >= 1000 && b >= a && b < 2 ** 31, "must be a range FIRST-LAST of uids from 1000 up")
  .transform(([first, last]) => ({ first, last }));

const SANDBOX = {
  mode: envVar("HANGAR_CP_SANDBOX", oneOf(["auto", "on", "off"] as const), {
    doc:
      "sandbox of tenants' builds and deployments: `auto`: where the host can; `on`: a host that cannot is a " +
      "start-up error; `off`: never (one tenant)",
    type: "`auto`, `on` or `off`",
    default: "auto",
  }),
  uids: envVar("HANGAR_CP_SANDBOX_UIDS", uidRange, {
    doc: "uids given to deployments' sandboxes, one each",
    type: "FIRST-LAST",
    default: { first: 600000, last: 699999 },
    shownDefault: "600000-699999",
  }),
  memoryMb: envVar("HANGAR_CP_SANDBOX_MEMORY_MB", intAtLeast(64), {
    doc: "memory limit of a sandboxed process tree, in megabytes",
    type: "integer ≥ 64",
    default: 2048,
  }),
  cpus: envVar("HANGAR_CP_SANDBOX_CPUS", intAtLeast(1), {
    doc: "CPU limit of a sandboxed process tree",
    type: "positive integer",
    default: 1,
  }),
  pids: envVar("HANGAR_CP_SANDBOX_PIDS", intAtLeast(16), {
    doc: "process limit of a sandboxed process tree",
    type: "integer ≥ 16",
    default: 1024,
  }),
  hide: envVar("HANGAR_CP_SANDBOX_HIDE", list(":"), {
    doc: "more host paths hidden from sandboxes (absolute paths)",
    type: "`:`-separated paths",
    default: [] as string[],
    shownDefault: "",
  }),
};

// ---- the clients of a control plane (`hangar deploy`, `hangar listener`)

const DEPLOY = {
  apiKey: API_KEY,
  hostUrl: envVar("HANGAR_HOST_URL", text, {
    doc: "the control plane's URL for `deploy`, when `--host-url` is not given (also read from the project's `.env`)",
    type: "URL",
    shownDefault: "http://127.0.0.1:8300",
  }),
  tenantId: envVar("HANGAR_TENANT_ID", text, {
    doc: "the workspace `deploy` acts in, for an organization key reaching several (also read from `.env`)",
    type: "workspace id",
  }),
};

const LISTENER = {
  apiKey: API_KEY,
  controlPlaneUrl: envVar("HANGAR_CONTROL_PLANE_URL", text, {
    doc: "the control plane's URL for `listener`, when `--control-plane` is not given",
    type: "URL",
  }),
  listenerId: envVar("HANGAR_LISTENER_ID", text, {
    doc: "the listener's id, when `--listener-id` is not given",
    type: "id",
  }),
};

// ---- logging (read by src/lib/logger.ts)

const LOGGING = {
  level: envVar("LOG_LEVEL", oneOf(["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const), {
    doc: "lowest level logged",
    type: "`trace`, `debug`, `info`, `warn`, `error`, `fatal` or `silent`",
    default: "info",
  }),
  format: envVar("LOG_FORMAT", oneOf(["json", "pretty"] as const), {
    doc: "`json`: one JSON object per line; `pretty`: for people",
    type: "`json` or `pretty`",
    shownDefault: "`pretty` for `dev` and `check`; `json` in other commands",
    aliases: [{ name: "LOG_JSON", map: officialFlag("LOG_JSON", "json", "pretty") }],
  }),
};

/** The groups of variables, each parsed (and its errors reported) when first used, with who reads it. */
const GROUPS = {
  server: { vars: SERVER, usedBy: "dev, serve" },
  webhooks: { vars: WEBHOOKS, usedBy: "dev, serve" },
  sections: { vars: SECTION_VARS, usedBy: "dev, serve, check" },
  cluster: { vars: CLUSTER, usedBy: "serve" },
  controlPlane: { vars: CONTROL_PLANE, usedBy: "control-plane" },
  sandbox: { vars: SANDBOX, usedBy: "control-plane" },
  deploy: { vars: DEPLOY, usedBy: "deploy" },
  listener: { vars: LISTENER, usedBy: "listener" },
  logging: { vars: LOGGING, usedBy: "all" },
} as const;

type Groups = typeof GROUPS;
export type Settings = { readonly [G in keyof Groups]: ValuesOf<Groups[G]["vars"]> };
export type ServerSettings = Settings["server"];
export type WebhookSettings = Settings["webhooks"];
export type ClusterSettings = Settings["cluster"];
export type ControlPlaneSettings = Settings["controlPlane"];
export type DeploySettings = Settings["deploy"];
export type ListenerSettings = Settings["listener"];

/** Every variable once, with the commands that read it (for the docs and their check). */
export function envVars(): { v: EnvVar; usedBy: string[] }[] {
  const byName = new Map<string, { v: EnvVar; usedBy: string[] }>();
  for (const { vars, usedBy } of Object.values(GROUPS)) {
    for (const v of Object.values(vars) as EnvVar[]) {
      const seen = byName.get(v.name) ?? byName.set(v.name, { v, usedBy: [] }).get(v.name)!;
      for (const u of usedBy.split(", ")) if (!seen.usedBy.includes(u)) seen.usedBy.push(u);
    }
  }
  return [...byName.values()];
}

/**
 * The settings of `env` (a copy is taken: later changes to it are not seen). Each group is parsed on first use
 * and kept; a malformed variable of a group throws a SettingsError naming it, then and on every later use.
 */
export function loadSettings(env: Env = process.env): Settings {
  const snapshot: Env = { ...env };
  const parsed = new Map<string, unknown>();
  const out = {};
  for (const [name, group] of Object.entries(GROUPS)) {
    Object.defineProperty(out, name, {
      enumerable: true,
      get: () => {
        if (!parsed.has(name)) parsed.set(name, readGroup(group.vars, snapshot));
        return parsed.get(name);
      },
    });
  }
  return out as Settings;
}

let current: Settings | undefined;

/** This process's settings: those installed with useSettings, else process.env's, parsed on first use. */
export function settings(): Settings {
  return (current ??= loadSettings(process.env));
}

/** Installs `s` as this process's settings (the Agent Server does once the project's env is applied). */
export function useSettings(s: Settings): Settings {
  current = s;
  return s;
}
