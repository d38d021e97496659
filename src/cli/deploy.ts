// `hangar deploy`: packs the project directory, uploads it to a control plane and creates (or updates, by
// exact name) an `internal_source` deployment, following its revision until it serves; plus `deploy list`,
// `deploy logs`, `deploy delete` and `deploy revisions list`. Errors are one sentence and an exit code
// (see EXIT in ./deploy/client.ts), never a stack trace; `--json` prints JSON lines for scripts.
import { existsSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve, sep } from "node:path";
import { createInterface } from "node:readline/promises";
import { loadSettings, SettingsError, type Env } from "../lib/settings.js";
import { ConfigError, loadProjectConfig, readEnvFile, type ProjectConfig } from "../lib/settings/project.js";
import {
  CpApi,
  DEFAULT_HOST_URL,
  DeployError,
  EXIT,
  findByName,
  listDeployments,
  normalizeName,
  resolveDeployment,
  type Deployment,
  type LogLine,
  type Revision,
} from "./deploy/client.js";
import { packProject } from "./deploy/pack.js";
import { IN_PROGRESS_REVISION_STATUSES } from "../control-plane/domain/types.js";

/** Revision statuses of work in progress; anything else is final. */
const IN_PROGRESS = new Set<string>(IN_PROGRESS_REVISION_STATUSES);
/** Keys of a project's .env that configure the CLI, not the deployment. */
const CLI_KEYS = new Set(["HANGAR_API_KEY", "HANGAR_HOST_URL", "HANGAR_TENANT_ID"]);

export interface CommonOptions {
  apiKey?: string;
  hostUrl?: string;
  tenantId?: string;
  json?: boolean;
  /** The project directory (default: the working directory). */
  dir?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The project's .env, parsed (empty when absent). */
function readDotenv(root: string): Record<string, string> {
  return readEnvFile(join(root, ".env")) ?? {};
}

/** The CLI's settings (HANGAR_API_KEY, HANGAR_HOST_URL, HANGAR_TENANT_ID): the environment, then the .env. */
function deploySettings(root: string) {
  const env: Record<string, string | undefined> = { ...readDotenv(root) };
  for (const [k, v] of Object.entries(process.env as Env)) if (v) env[k] = v;
  try {
    return loadSettings(env).deploy;
  } catch (e) {
    if (e instanceof SettingsError) throw new DeployError(e.message, EXIT.usage);
    throw e;
  }
}

/** langgraph.json, read and checked as the Agent Server reads it (its env file's values included). */
function loadProject(configPath: string): ProjectConfig {
  try {
    return loadProjectConfig(configPath);
  } catch (e) {
    if (e instanceof ConfigError) throw new DeployError(e.message, EXIT.usage);
    throw e;
  }
}

/** The client from the options, the environment, then the project's .env. */
function connect(opts: CommonOptions, root: string): CpApi {
  const env = deploySettings(root);
  const apiKey = opts.apiKey || env.apiKey;
  if (!apiKey) {
    throw new DeployError(
      `No API key: pass --api-key, set HANGAR_API_KEY, or put HANGAR_API_KEY=<key> in ${join(root, ".env")}.`,
      EXIT.usage,
    );
  }
  const hostUrl = opts.hostUrl || env.hostUrl || DEFAULT_HOST_URL;
  try {
    new URL(hostUrl);
  } catch {
    throw new DeployError(`Invalid control plane URL "${hostUrl}".`, EXIT.usage);
  }
  const tenantId = opts.tenantId || env.tenantId;
  return new CpApi({ hostUrl, apiKey, tenantId: tenantId || undefined });
}

/** The deployment's name: `--name` (else the directory's) normalized as the official CLI does, told when changed. */
function deploymentName(given: string | undefined, root: string, out: Out): string {
  const name = normalizeName(given ?? basename(root));
  if (!name) {
    throw new DeployError(
      given
        ? `--name "${given}" has no letter or digit.`
        : "The project directory's name has no letter or digit: give --name.",
      EXIT.usage,
    );
  }
  if (given !== undefined && name !== given) out.info(`Deployment name: '${name}' (from '${given}')`);
  return name;
}

/** Output: human lines, or JSON lines with `--json`. */
class Out {
  constructor(private readonly json: boolean) {}
  info(text: string, event?: Record<string, unknown>): void {
    if (this.json) {
      if (event) console.log(JSON.stringify(event));
    } else console.log(text);
  }
  /** A warning (human output only). */
  warn(text: string): void {
    if (!this.json) console.error(`hangar deploy: warning: ${text}`);
  }
  error(e: DeployError): void {
    if (this.json) {
      console.log(
        JSON.stringify({ event: "error", message: e.message, exit_code: e.exitCode, logs: e.lines }),
      );
    } else {
      console.error(`hangar deploy: ${e.message}`);
      for (const l of e.lines) console.error(`  | ${l}`);
    }
  }
}

/** Runs a command body, turning DeployErrors into their message and exit code. */
async function run(json: boolean | undefined, body: (out: Out) => Promise<number>): Promise<never> {
  const out = new Out(!!json);
  let code: number;
  try {
    code = await body(out);
  } catch (e) {
    if (!(e instanceof DeployError)) throw e;
    out.error(e);
    code = e.exitCode;
  }
  process.exit(code);
}

// ---- deploy

export interface DeployOptions extends CommonOptions {
  name?: string;
  deploymentType?: string;
  config: string;
  wait: boolean;
  timeout: string;
  /** A prebuilt image, deployed through a k8s listener instead of uploading the project. */
  image?: string;
  listenerId?: string;
  namespace?: string;
}

/**
 * Secrets: langgraph.json's `env` (an object, or the path of an env file) as the project loader reads it, then
 * the project's .env; never the CLI's own keys.
 */
function collectSecrets(project: ProjectConfig | undefined, root: string) {
  const values: Record<string, string> = { ...project?.env, ...readDotenv(root) };
  return Object.entries(values)
    .filter(([name]) => !CLI_KEYS.has(name))
    .map(([name, value]) => ({ name, value }));
}

function timeLabel(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)}s` : `${Math.round(ms / 1000)}s`;
}

/** Reads a revision's logs of one kind from an offset (at most 1000 lines). */
async function readLogs(
  api: CpApi,
  deploymentId: string,
  kind: "build" | "deploy",
  body: Record<string, unknown>,
): Promise<{ logs: LogLine[]; offset: number }> {
  const path =
    kind === "build"
      ? `/v1/projects/${deploymentId}/revisions/${body.revision_id}/build_logs`
      : `/v1/projects/${deploymentId}/deploy_logs`;
  const { revision_id, ...rest } = body;
  return api.post(path, kind === "build" ? rest : { ...rest, revision_id });
}

/** Follows a revision to a final status, printing its statuses and its build log as it grows. */
async function follow(
  api: CpApi,
  out: Out,
  deployment: Deployment,
  revisionId: string,
  timeoutMs: number,
): Promise<Revision> {
  const started = Date.now();
  let status = "";
  let buildOffset = 0;
  const buildLines: string[] = [];
  for (;;) {
    const rev = await api.get<Revision>(`/v2/deployments/${deployment.id}/revisions/${revisionId}`);
    // The build log first, so its lines come before the status that ends the build.
    for (;;) {
      const page = await readLogs(api, deployment.id, "build", {
        revision_id: revisionId,
        offset: buildOffset,
        limit: 1000,
      });
      for (const l of page.logs) {
        buildLines.push(l.message);
        out.info(`  | ${l.message}`, { event: "log", kind: "build", ...l });
      }
      buildOffset = page.offset;
      if (page.logs.length < 1000) break;
    }
    if (rev.status !== status) {
      status = rev.status;
      out.info(`${status.padEnd(16)} ${timeLabel(Date.now() - started)}`, {
        event: "status",
        deployment_id: deployment.id,
        revision_id: revisionId,
        status,
      });
    }
    if (!IN_PROGRESS.has(rev.status)) {
      if (rev.status === "DEPLOYED") return rev;
      let lines = buildLines.slice(-30);
      if (rev.status !== "BUILD_FAILED") {
        const deployLogs = await readLogs(api, deployment.id, "deploy", {
          revision_id: revisionId,
          limit: 30,
          order: "desc",
        });
        lines = deployLogs.logs.reverse().map((l) => l.message);
      }
      throw new DeployError(
        `Revision ${revisionId} of '${deployment.name}' ended ${rev.status}` +
          (rev.status_message ? `: ${rev.status_message}` : ".") +
          (deployment.active_revision_id ? " The previous revision keeps serving." : ""),
        EXIT.failed,
        lines,
      );
    }
    if (Date.now() - started > timeoutMs) {
      throw new DeployError(
        `Revision ${revisionId} is still ${rev.status} after ${timeLabel(timeoutMs)}; follow it with ` +
          `\`hangar deploy logs --deployment-id ${deployment.id} --type build --follow\`.`,
        EXIT.failed,
      );
    }
    await sleep(500);
  }
}

/**
 * `--image`: no upload and no build here; the deployment (source `external_docker`) runs that image on the
 * Kubernetes cluster of a listener (`hangar listener`), which reports its revisions' statuses.
 */
async function deployImage(opts: DeployOptions, out: Out, root: string): Promise<Deployment> {
  if (!opts.listenerId) {
    throw new DeployError(
      "--image deploys through a listener: give --listener-id (see GET /v2/listeners).",
      EXIT.usage,
    );
  }
  const name = deploymentName(opts.name, root, out);
  const api = connect(opts, root);
  const configPath = resolve(root, opts.config);
  const secrets = collectSecrets(existsSync(configPath) ? loadProject(configPath) : undefined, root);
  const existing = await findByName(api, name);
  if (existing && existing.source !== "external_docker") {
    throw new DeployError(
      `The deployment '${name}' (${existing.id}) has source '${existing.source}', not an image: deploy under another --name.`,
      EXIT.usage,
    );
  }
  const deployment = existing
    ? await api.patch<Deployment>(`/v2/deployments/${existing.id}`, {
        source_revision_config: { image_uri: opts.image },
        secrets,
      })
    : await api.post<Deployment>("/v2/deployments", {
        name,
        source: "external_docker",
        source_config: {
          deployment_type: opts.deploymentType ?? "dev",
          listener_id: opts.listenerId,
          ...(opts.namespace ? { listener_config: { k8s_namespace: opts.namespace } } : {}),
        },
        source_revision_config: { image_uri: opts.image },
        secrets,
      });
  out.info(
    `${existing ? "Updating" : "Created"} deployment '${name}' (${deployment.id}) with image ${opts.image}: ` +
      `revision ${deployment.latest_revision_id}, for listener ${opts.listenerId}`,
    {
      event: existing ? "updated" : "created",
      deployment_id: deployment.id,
      revision_id: deployment.latest_revision_id,
    },
  );
  return deployment;
}

async function runDeploy(opts: DeployOptions, out: Out): Promise<number> {
  const root = resolve(opts.dir ?? process.cwd());
  if (opts.image) {
    const deployment = await deployImage(opts, out, root);
    if (!opts.wait) return 0;
    await follow(
      connect(opts, root),
      out,
      deployment,
      deployment.latest_revision_id!,
      Number(opts.timeout) * 1000,
    );
    out.info(`Deployed '${deployment.name}' on the listener's cluster`, {
      event: "deployed",
      deployment_id: deployment.id,
      revision_id: deployment.latest_revision_id,
    });
    return 0;
  }
  const configPath = resolve(root, opts.config);
  if (!existsSync(configPath)) {
    throw new DeployError(
      `No ${opts.config} in ${root}: run \`hangar deploy\` in a LangGraph project directory (or give --config).`,
      EXIT.usage,
    );
  }
  // The project is the directory packed (--dir, default the working directory): its langgraph.json must be inside,
  // or the build would only find out after the deployment was made.
  const inside = relative(root, configPath);
  if (inside.startsWith("..") || isAbsolute(inside)) {
    throw new DeployError(
      `--config ${opts.config} is outside the directory deployed (${root}): run \`hangar deploy\` in the project's ` +
        `directory, or give it as --dir.`,
      EXIT.usage,
    );
  }
  const project = loadProject(configPath);
  for (const w of project.warnings) out.warn(w);
  const name = deploymentName(opts.name, root, out);
  if (opts.deploymentType && !["dev", "prod"].includes(opts.deploymentType)) {
    throw new DeployError(`--deployment-type must be dev or prod, not "${opts.deploymentType}".`, EXIT.usage);
  }
  const timeout = Number(opts.timeout);
  if (!(timeout > 0)) throw new DeployError(`--timeout must be a positive number of seconds.`, EXIT.usage);
  const api = connect(opts, root);
  const secrets = collectSecrets(project, root);
  const configRel = inside.split(sep).join("/");

  const existing = await findByName(api, name);
  if (existing) {
    if (existing.source !== "internal_source") {
      throw new DeployError(
        `The deployment '${name}' (${existing.id}) has source '${existing.source}', not an uploaded project: ` +
          "deploy under another --name.",
        EXIT.usage,
      );
    }
    if (opts.listenerId && opts.listenerId !== existing.source_config.listener_id) {
      throw new DeployError(
        `The deployment '${name}' is not on listener ${opts.listenerId}; its listener cannot change: deploy under another --name.`,
        EXIT.usage,
      );
    }
    const type = existing.source_config.deployment_type ?? "dev";
    if (opts.deploymentType && opts.deploymentType !== type) {
      throw new DeployError(
        `The deployment '${name}' is of type ${type}; its type cannot change: deploy under another --name.`,
        EXIT.usage,
      );
    }
  }

  const packStart = Date.now();
  const { data, files } = await packProject(root);
  out.info(
    `Packed ${files.length} file${files.length === 1 ? "" : "s"} (${(data.length / 1024).toFixed(1)} KiB) from ${root} in ${timeLabel(Date.now() - packStart)}`,
    { event: "packed", files: files.length, bytes: data.length },
  );
  const upload = await api.post<{ upload_url: string; source_tarball_path: string }>(
    existing ? `/v2/deployments/${existing.id}/upload-url` : "/v2/uploads/upload-url",
  );
  await api.upload(upload.upload_url, data);
  out.info(`Uploaded to ${api.hostUrl}`, {
    event: "uploaded",
    source_tarball_path: upload.source_tarball_path,
  });

  const revisionConfig = {
    langgraph_config_path: configRel,
    source_tarball_path: upload.source_tarball_path,
  };
  let deployment: Deployment;
  if (existing) {
    deployment = await api.patch<Deployment>(`/v2/deployments/${existing.id}`, {
      source_revision_config: revisionConfig,
      secrets,
    });
    out.info(`Updating deployment '${name}' (${deployment.id}): revision ${deployment.latest_revision_id}`, {
      event: "updated",
      deployment_id: deployment.id,
      revision_id: deployment.latest_revision_id,
    });
  } else {
    deployment = await api.post<Deployment>("/v2/deployments", {
      name,
      source: "internal_source",
      source_config: {
        deployment_type: opts.deploymentType ?? "dev",
        // Built by the control plane into an image its registry holds, rolled out by the listener.
        ...(opts.listenerId ? { listener_id: opts.listenerId } : {}),
        ...(opts.listenerId && opts.namespace ? { listener_config: { k8s_namespace: opts.namespace } } : {}),
      },
      source_revision_config: revisionConfig,
      secrets,
    });
    out.info(`Created deployment '${name}' (${deployment.id}): revision ${deployment.latest_revision_id}`, {
      event: "created",
      deployment_id: deployment.id,
      revision_id: deployment.latest_revision_id,
    });
  }
  const revisionId = deployment.latest_revision_id!;
  // A listener's deployment is reached through its cluster (its Service), not the control plane's router.
  const listener = deployment.source_config.listener_id;
  const url = listener ? null : deployment.source_config.custom_url;
  const where = listener ? `on the cluster of listener ${listener}` : `at ${url}`;
  if (!opts.wait) {
    out.info(`Not waiting (--no-wait): the deployment will be ${where}`, {
      event: "queued",
      deployment_id: deployment.id,
      revision_id: revisionId,
      url,
    });
    return 0;
  }
  await follow(api, out, deployment, revisionId, timeout * 1000);
  // A listener's cluster reports the address it serves the deployment at (its Service) once it rolled it out.
  const served = listener
    ? (await api.get<Deployment>(`/v2/deployments/${deployment.id}`)).source_config.custom_url
    : url;
  const line = listener
    ? `Deployed '${name}' ${where}${served ? `: ${served}` : ""}`
    : `Deployed '${name}': ${url}`;
  out.info(line, { event: "deployed", deployment_id: deployment.id, revision_id: revisionId, url: served });
  return 0;
}

// ---- list, revisions, logs, delete

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows
    .map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  "))
    .join("\n");
}

async function runList(opts: CommonOptions, out: Out): Promise<number> {
  const api = connect(opts, resolve(opts.dir ?? process.cwd()));
  const deployments = await listDeployments(api);
  const rows = await Promise.all(
    deployments.map(async (d) => {
      const rev = d.latest_revision_id
        ? await api.get<Revision>(`/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)
        : undefined;
      return {
        id: d.id,
        name: d.name,
        type: d.source_config.deployment_type ?? "dev",
        status: rev?.status ?? "-",
        url: d.source_config.custom_url ?? "-",
      };
    }),
  );
  if (opts.json) {
    for (const r of rows) console.log(JSON.stringify(r));
    return 0;
  }
  if (!rows.length) {
    console.log(`No deployments on ${api.hostUrl}.`);
    return 0;
  }
  console.log(
    table([
      ["ID", "NAME", "TYPE", "STATUS", "URL"],
      ...rows.map((r) => [r.id, r.name, r.type, r.status, r.url]),
    ]),
  );
  void out;
  return 0;
}

async function runRevisions(id: string, opts: CommonOptions): Promise<number> {
  const api = connect(opts, resolve(opts.dir ?? process.cwd()));
  const d = await resolveDeployment(api, id);
  const revisions: Revision[] = [];
  for (let offset = 0; ;) {
    const page = await api.get<{ resources: Revision[] }>(
      `/v2/deployments/${d.id}/revisions?limit=100&offset=${offset}`,
    );
    revisions.push(...page.resources);
    if (page.resources.length < 100) break;
    offset += 100;
  }
  if (opts.json) {
    for (const r of revisions) console.log(JSON.stringify({ ...r, active: r.id === d.active_revision_id }));
    return 0;
  }
  console.log(
    table([
      ["ID", "STATUS", "CREATED", "MESSAGE"],
      ...revisions.map((r) => [
        r.id + (r.id === d.active_revision_id ? " *" : ""),
        r.status,
        r.created_at,
        r.status_message ?? "",
      ]),
    ]),
  );
  return 0;
}

export interface LogsOptions extends CommonOptions {
  name?: string;
  deploymentId?: string;
  type: string;
  revisionId?: string;
  level?: string;
  limit: string;
  follow?: boolean;
}

async function runLogs(opts: LogsOptions): Promise<number> {
  const root = resolve(opts.dir ?? process.cwd());
  if (!["deploy", "build"].includes(opts.type)) {
    throw new DeployError(`--type must be deploy or build, not "${opts.type}".`, EXIT.usage);
  }
  const limit = Number(opts.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new DeployError("--limit must be a positive integer.", EXIT.usage);
  const level = opts.level?.toUpperCase();
  if (level && !["DEBUG", "INFO", "WARNING", "WARN", "ERROR"].includes(level)) {
    throw new DeployError(`--level must be DEBUG, INFO, WARNING or ERROR, not "${opts.level}".`, EXIT.usage);
  }
  const api = connect(opts, root);
  const d = opts.deploymentId
    ? await resolveDeployment(api, opts.deploymentId)
    : await resolveDeployment(api, opts.name ?? normalizeName(basename(root)));
  const kind = opts.type as "deploy" | "build";
  const revisionId = opts.revisionId ?? (kind === "build" ? (d.latest_revision_id ?? undefined) : undefined);
  if (kind === "build" && !revisionId) throw new DeployError(`'${d.name}' has no revision.`, EXIT.usage);
  const print = (l: LogLine) => {
    if (opts.json) console.log(JSON.stringify(l));
    else console.log(`${l.timestamp} ${l.level.padEnd(7)} ${l.message}`);
  };
  const base = { revision_id: revisionId, ...(level ? { level } : {}) };
  // Read everything once (ascending) keeping the last `limit` lines, so --follow knows where the end is.
  let offset = 0;
  let tail: LogLine[] = [];
  for (;;) {
    const page = await readLogs(api, d.id, kind, { ...base, offset, limit: 1000 });
    tail = [...tail, ...page.logs].slice(-limit);
    offset = page.offset;
    if (page.logs.length < 1000) break;
  }
  tail.forEach(print);
  if (!opts.follow) return 0;
  let stop = false;
  process.once("SIGINT", () => (stop = true));
  while (!stop) {
    await sleep(1000);
    const page = await readLogs(api, d.id, kind, { ...base, offset, limit: 1000 });
    page.logs.forEach(print);
    offset = page.offset;
  }
  return 0;
}

async function runDelete(id: string, opts: CommonOptions & { force?: boolean }, out: Out): Promise<number> {
  const api = connect(opts, resolve(opts.dir ?? process.cwd()));
  const d = await resolveDeployment(api, id);
  if (!opts.force) {
    if (!process.stdin.isTTY) {
      throw new DeployError(
        `Deleting '${d.name}' (${d.id}) needs confirmation: run it in a terminal or pass --force.`,
        EXIT.usage,
      );
    }
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    const answer = await rl.question(
      `Delete deployment '${d.name}' (${d.id}) and its data? Type its name to confirm: `,
    );
    rl.close();
    if (answer.trim() !== d.name) {
      console.error("hangar deploy: not deleted.");
      return EXIT.failed;
    }
  }
  await api.del(`/v2/deployments/${d.id}`);
  out.info(`Deleted deployment '${d.name}' (${d.id}).`, {
    event: "deleted",
    deployment_id: d.id,
    name: d.name,
  });
  return 0;
}

// ---- commands

/** One `deploy` subcommand with its parsed flags (the flags are declared in ./main.ts). */
export type DeployCommand =
  | { sub: "deploy"; opts: DeployOptions }
  | { sub: "list"; opts: CommonOptions }
  | { sub: "logs"; opts: LogsOptions }
  | { sub: "delete"; id: string; opts: CommonOptions & { force?: boolean } }
  | { sub: "revisions list"; id: string; opts: CommonOptions };

/** Runs a `deploy` subcommand, then exits with its code. */
export function runDeployCommand(c: DeployCommand): Promise<never> {
  switch (c.sub) {
    case "deploy":
      return run(c.opts.json, (out) => runDeploy(c.opts, out));
    case "list":
      return run(c.opts.json, (out) => runList(c.opts, out));
    case "logs":
      return run(c.opts.json, () => runLogs(c.opts));
    case "delete":
      return run(c.opts.json, (out) => runDelete(c.id, c.opts, out));
    case "revisions list":
      return run(c.opts.json, () => runRevisions(c.id, c.opts));
  }
}
