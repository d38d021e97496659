// The control plane console's access to the API: JSON calls to the control plane it is served by (the folder it
// is served from, or `?api=`), with the key the user entered (X-Api-Key or Authorization: Bearer) and an optional
// workspace (X-Tenant-Id), kept in this browser's localStorage for that API URL only (a link naming another API
// with `?api=` never gets a key entered for this one). Also the API's shapes the pages use.
import { authHeaders, baseUrl, readCredential, writeCredential, type StoredCredential } from "../api.ts";
import { detailText } from "../load.ts";

export type CpCredential = StoredCredential | null;

/** The localStorage key of the credential for the API the console talks to. */
const key = (): string => `hangar-cp-console-credential:${cpApiUrl()}`;

/** The API's base URL: the folder the console is served from (the control plane's root). */
export const cpApiUrl = (): string => baseUrl("./");

export const savedCpCredential = (): CpCredential => readCredential(key());

export const saveCpCredential = (c: CpCredential): void => writeCredential(key(), c);

/** Headers that carry the credential (and the workspace). */
export function cpAuthHeaders(c: CpCredential): Record<string, string> {
  return { ...authHeaders(c), ...(c?.tenant ? { "X-Tenant-Id": c.tenant } : {}) };
}

/** An answer of the API that is not a success: its status and its `detail` as text. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export type CpApi = <T = unknown>(method: string, path: string, body?: unknown) => Promise<T>;

/** A function calling the API with the credential; throws ApiError for an answer of 400 or more. */
export function makeCpApi(c: CpCredential): CpApi {
  const base = cpApiUrl();
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const headers: Record<string, string> = { ...cpAuthHeaders(c) };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (!res.ok) throw new ApiError(res.status, detailText(parsed) ?? `HTTP ${res.status}`);
    return parsed as T;
  };
}

export const statusOf = (e: unknown): number | undefined => (e instanceof ApiError ? e.status : undefined);

// ---- the API's shapes (what the pages read of them)

export interface Page<T> {
  resources: T[];
  offset: number;
}

export interface Deployment {
  id: string;
  name: string;
  source: string;
  source_config: { repo_url?: string | null; deployment_type?: string | null; custom_url?: string | null };
  source_revision_config: Record<string, string | null | undefined>;
  secrets: { name: string; value: string }[];
  status: string;
  latest_revision_id: string | null;
  active_revision_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface Revision {
  id: string;
  status: string;
  source: string;
  status_message?: string | null;
  created_at: string;
  updated_at: string;
}

export interface LogLine {
  timestamp: string;
  level: string;
  message: string;
  revision_id?: string | null;
}

export interface Listener {
  id: string;
  compute_type: string;
  compute_id: string;
  version: string | null;
  compute_config: { k8s_namespaces: string[] | null };
  created_at: string;
  updated_at: string;
}

/** A revision's statuses on its way to DEPLOYED (or a failure): while in one, the console keeps polling. */
export const IN_PROGRESS = new Set([
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
]);
