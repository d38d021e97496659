// The control plane client of `hangar deploy`: JSON requests with the API key, and errors turned into one
// sentence with an exit code (DeployError) instead of a stack trace.
import { HangarError } from "../../lib/errors.js";
import { isUuid } from "../../lib/uuid.js";

/** Exit codes of `hangar deploy`. */
export const EXIT = {
  /** The deployment failed (build or start), or the control plane refused the request. */
  failed: 1,
  /** Usage: no langgraph.json, no API key, a bad option, an unknown deployment. */
  usage: 2,
  /** The control plane refused the key (401) or the action (403, e.g. the plan). */
  auth: 3,
  /** The control plane could not be reached. */
  unreachable: 4,
} as const;

/** An error reported as one sentence, with the exit code of the command. */
export class DeployError extends HangarError {
  static override readonly code = "deploy_failed";
  constructor(
    message: string,
    readonly exitCode: number = EXIT.failed,
    /** Log lines shown with it (a failed revision's build or deploy log). */
    readonly lines: string[] = [],
  ) {
    super(message);
  }
}

export const DEFAULT_HOST_URL = "http://127.0.0.1:8300";

export interface ClientOptions {
  hostUrl: string;
  apiKey: string;
  tenantId?: string;
}

/** What the control plane answered in `detail`, as text. */
function detailOf(body: unknown, status: number): string {
  const d = (body as { detail?: unknown } | undefined)?.detail;
  if (typeof d === "string") return d;
  if (Array.isArray(d)) {
    return d
      .map((i: { loc?: unknown[]; msg?: string }) => `${(i.loc ?? []).join(".")}: ${i.msg ?? ""}`)
      .join("; ");
  }
  return typeof body === "string" && body ? body.slice(0, 200) : `HTTP ${status}`;
}

export class CpApi {
  readonly hostUrl: string;
  constructor(private readonly opts: ClientOptions) {
    this.hostUrl = opts.hostUrl.replace(/\/+$/, "");
  }

  private headers(json: boolean): Record<string, string> {
    return {
      "x-api-key": this.opts.apiKey,
      "x-hangar-client": "cli",
      ...(this.opts.tenantId ? { "x-tenant-id": this.opts.tenantId } : {}),
      ...(json ? { "content-type": "application/json" } : {}),
    };
  }

  /** fetch, with an unreachable control plane turned into a DeployError. */
  async fetch(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, init);
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (e as Error).message;
      throw new DeployError(
        `Cannot reach the control plane at ${this.hostUrl} (${why}): is \`hangar control-plane\` running there? ` +
          "Set it with --host-url or HANGAR_HOST_URL.",
        EXIT.unreachable,
      );
    }
  }

  async request<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await this.fetch(`${this.hostUrl}${path}`, {
      method,
      headers: this.headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    if (res.ok) return parsed as T;
    const detail = detailOf(parsed, res.status);
    if (res.status === 401) {
      throw new DeployError(
        `The control plane at ${this.hostUrl} refused the API key (${detail}): check --api-key, or HANGAR_API_KEY in the environment or .env.`,
        EXIT.auth,
      );
    }
    if (res.status === 403) {
      const plan = /plan/i.test(detail)
        ? ""
        : " (deploying from the CLI needs an organization on the plus plan or above)";
      throw new DeployError(`The control plane refused: ${detail}${plan}`, EXIT.auth);
    }
    if (res.status === 404) throw new DeployError(detail, EXIT.usage);
    throw new DeployError(`The control plane answered ${res.status}: ${detail}`, EXIT.failed);
  }

  get = <T = any>(path: string) => this.request<T>("GET", path);
  post = <T = any>(path: string, body?: unknown) => this.request<T>("POST", path, body ?? {});
  patch = <T = any>(path: string, body: unknown) => this.request<T>("PATCH", path, body);
  del = <T = any>(path: string) => this.request<T>("DELETE", path);

  /** PUTs a tarball to an upload URL (no key: the URL's token is the credential). */
  async upload(uploadUrl: string, data: Buffer): Promise<void> {
    const res = await this.fetch(uploadUrl, {
      method: "PUT",
      headers: { "content-type": "application/gzip", "content-length": String(data.length) },
      // a Buffer is a valid body; the DOM typings of BodyInit do not say so
      body: data as unknown as NonNullable<RequestInit["body"]>,
    });
    if (!res.ok) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // text
      }
      throw new DeployError(`The upload was refused (${res.status}): ${detailOf(body, res.status)}`);
    }
  }
}

export interface Deployment {
  id: string;
  name: string;
  source: string;
  source_config: { deployment_type: string | null; custom_url: string | null; listener_id?: string | null };
  latest_revision_id: string | null;
  active_revision_id: string | null;
  status: string;
}

export interface Revision {
  id: string;
  status: string;
  created_at: string;
  status_message?: string | null;
}

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  revision_id: string | null;
}

/** Every deployment of the workspace (paged). */
export async function listDeployments(api: CpApi, nameContains?: string): Promise<Deployment[]> {
  const out: Deployment[] = [];
  for (let offset = 0; ;) {
    const q = new URLSearchParams({ limit: "100", offset: String(offset) });
    if (nameContains) q.set("name_contains", nameContains);
    const page = await api.get<{ resources: Deployment[] }>(`/v2/deployments?${q}`);
    out.push(...page.resources);
    if (page.resources.length < 100) return out;
    offset += page.resources.length;
  }
}

/** The deployment named exactly `name`, if any. */
export async function findByName(api: CpApi, name: string): Promise<Deployment | undefined> {
  return (await listDeployments(api, name)).find((d) => d.name === name);
}

/**
 * A name as a deployment name, as the official CLI makes it: lowercase letters, digits and dashes, every other run
 * of characters one dash, none at either end.
 */
export function normalizeName(raw: string): string {
  return raw
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/**
 * A deployment by id, or by name when the argument is not a UUID: the name as given, else as `hangar deploy` makes
 * it (`--name Chat_Prod` deploys `chat-prod`).
 */
export async function resolveDeployment(api: CpApi, idOrName: string): Promise<Deployment> {
  if (isUuid(idOrName)) return api.get<Deployment>(`/v2/deployments/${idOrName}`);
  const normalized = normalizeName(idOrName);
  const d =
    (await findByName(api, idOrName)) ??
    (normalized && normalized !== idOrName ? await findByName(api, normalized) : undefined);
  if (!d) throw new DeployError(`No deployment named '${idOrName}' on ${api.hostUrl}.`, EXIT.usage);
  return d;
}
