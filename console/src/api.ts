// The console's access to the Agent Server: the official SDK's Client on the API the console is served beside
// (the folder above /console/, or `?api=`), with the credential the user entered (an API key or a bearer token),
// kept in this browser's localStorage for that API URL only: a link naming another API (`?api=`) never gets a
// credential entered for this one.
import { Client } from "@langchain/langgraph-sdk";

export type Credential = { kind: "api-key" | "bearer"; value: string } | null;

/** The localStorage key of the credential for the API the console talks to. */
const key = (): string => `hangar-console-credential:${apiUrl()}`;

/** The API's base URL: where the console is served from, one folder up (`/console/` -> `/`). */
export function apiUrl(): string {
  const fromQuery = new URLSearchParams(location.search).get("api");
  return (fromQuery ?? new URL("../", location.href).href).replace(/\/+$/, "");
}

export function savedCredential(): Credential {
  try {
    const c = JSON.parse(localStorage.getItem(key()) ?? "null") as Credential;
    return c && (c.kind === "api-key" || c.kind === "bearer") && typeof c.value === "string" ? c : null;
  } catch {
    return null;
  }
}

export function saveCredential(c: Credential): void {
  if (c) localStorage.setItem(key(), JSON.stringify(c));
  else localStorage.removeItem(key());
}

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
