// The in-process loopback address of this Agent Server: the SDK's `new Client()` without `apiUrl` (in a
// custom route or a graph node) and relative webhook URLs reach the server through it. With HANGAR_API_KEYS,
// those requests carry this process's own key (random, never sent anywhere else), which the API accepts.
import { randomBytes } from "node:crypto";

/** The globals the official SDK reads for its default `apiUrl` and `fetch` (see the SDK's BaseClient). */
const URL_SYMBOL = Symbol.for("langgraph_api:url");
const FETCH_SYMBOL = Symbol.for("langgraph_api:fetch");

type LoopbackGlobal = typeof globalThis & { [URL_SYMBOL]?: string; [FETCH_SYMBOL]?: typeof fetch };

/** This process's key for its requests to itself. */
const KEY = randomBytes(32).toString("base64url");

/** The key the API accepts, beside HANGAR_API_KEYS, from this process's own requests to itself. */
export function loopbackKey(): string {
  return KEY;
}

/** The request's URL as a string, whatever `fetch` was given. */
const urlOf = (input: Parameters<typeof fetch>[0]): string =>
  typeof input === "string" ? input : input instanceof URL ? input.href : input.url;

/**
 * The SDK's fetch when `new Client()` has no `apiUrl`: a request to this server gets its key unless the client
 * sent one (its own apiKey, or LANGGRAPH_API_KEY).
 */
const loopbackFetch: typeof fetch = (input, init) => {
  const base = loopbackUrl();
  if (!base || !urlOf(input).startsWith(`${base}/`)) return fetch(input, init);
  const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
  if (!headers.has("x-api-key")) headers.set("x-api-key", KEY);
  return fetch(input, { ...init, headers });
};

/** Points the process's loopback at a listening address (`0.0.0.0` / `::` become loopback addresses). */
export function setLoopbackAddress(address: string, port: number): string {
  const host =
    address === "0.0.0.0"
      ? "127.0.0.1"
      : address === "::"
        ? "[::1]"
        : address.includes(":")
          ? `[${address}]`
          : address;
  const url = `http://${host}:${port}`;
  (globalThis as LoopbackGlobal)[URL_SYMBOL] = url;
  (globalThis as LoopbackGlobal)[FETCH_SYMBOL] = loopbackFetch;
  return url;
}

/** The server's own base URL, once it listens in this process (API processes only). */
export function loopbackUrl(): string | undefined {
  return (globalThis as LoopbackGlobal)[URL_SYMBOL];
}
