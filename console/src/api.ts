// The console's access to the Agent Server: the official SDK's Client on the API the console is served beside
// (the folder above /console/, or `?api=`), with the credential the user entered (an API key or a bearer token),
// kept in this browser's localStorage for that API URL only: a link naming another API (`?api=`) never gets a
// credential entered for this one.
import { Client } from "@langchain/langgraph-sdk";

export type Credential = { kind: "api-key" | "bearer"; value: string } | null;

/** A credential as kept in localStorage (the control plane's console adds a workspace, `tenant`). */
export interface StoredCredential {
  kind: "api-key" | "bearer";
  value: string;
  tenant?: string;
}

/** The credential kept under `storageKey`, if one of the right shape is there. */
export function readCredential(storageKey: string): StoredCredential | null {
  try {
    const c = JSON.parse(localStorage.getItem(storageKey) ?? "null") as StoredCredential | null;
    if (!c || (c.kind !== "api-key" && c.kind !== "bearer") || typeof c.value !== "string") return null;
    return { kind: c.kind, value: c.value, ...(typeof c.tenant === "string" ? { tenant: c.tenant } : {}) };
  } catch {
    return null;
  }
}

/** Keeps `c` under `storageKey` (null forgets it). */
export function writeCredential(storageKey: string, c: StoredCredential | null): void {
  if (c) localStorage.setItem(storageKey, JSON.stringify(c));
  else localStorage.removeItem(storageKey);
}

/** An API's base URL: `?api=`, else `folder` relative to the page (no trailing slash). */
export function baseUrl(folder: string): string {
  const fromQuery = new URLSearchParams(location.search).get("api");
  return (fromQuery ?? new URL(folder, location.href).href).replace(/\/+$/, "");
}

/** The localStorage key of the credential for the API the console talks to. */
const key = (): string => `hangar-console-credential:${apiUrl()}`;

/** The API's base URL: where the console is served from, one folder up (`/console/` -> `/`). */
export const apiUrl = (): string => baseUrl("../");

export const savedCredential = (): Credential => readCredential(key());

export const saveCredential = (c: Credential): void => writeCredential(key(), c);

/** Headers that carry the credential. */
export function authHeaders(c: Credential): Record<string, string> {
  if (!c) return {};
  return c.kind === "api-key" ? { "x-api-key": c.value } : { Authorization: `Bearer ${c.value}` };
}

export function makeClient(c: Credential): Client {
  // apiKey: null keeps the SDK from reading an API key of its own from the environment.
  return new Client({ apiUrl: apiUrl(), apiKey: null, defaultHeaders: authHeaders(c) });
}

/** An error's status, when it is an HTTP answer (the SDK's errors carry it). */
export function statusOf(e: unknown): number | undefined {
  const s = (e as { status?: unknown } | null)?.status;
  return typeof s === "number" ? s : undefined;
}
