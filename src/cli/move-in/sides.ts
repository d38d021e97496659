// The two servers of `hangar migrate`: each side's URL and credentials (options, else environment), an SDK client
// and plain JSON requests for what the SDK does not cover, and HTTP failures told as one sentence.
import { Client } from "@langchain/langgraph-sdk";

/** A refusal or failure told in one line (no stack), with the command's exit code. */
export class MoveInError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** An HTTP answer that is not a success: its status and what the server said. */
export class HttpFailure extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(`HTTP ${status}: ${detail}`);
  }
}

export interface SideOptions {
  url?: string;
  apiKey?: string;
  header?: string[];
}

export interface Side {
  /** "source" or "target", for messages. */
  role: string;
  url: string;
  headers: Record<string, string>;
  client: Client;
}

/** `Name: value` as a header, or a usage error naming the option. */
function parseHeader(raw: string, option: string): [string, string] {
  const i = raw.indexOf(":");
  const name = i > 0 ? raw.slice(0, i).trim() : "";
  if (!name || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new MoveInError(`${option}: expected 'Name: value', got '${raw}'`, 2);
  }
  return [name.toLowerCase(), raw.slice(i + 1).trim()];
}

/**
 * A side from its options (`--from`, `--from-api-key`, `--from-header`, or the `to` ones), each falling back to
 * its variable: HANGAR_MIGRATE_FROM, HANGAR_MIGRATE_FROM_API_KEY, HANGAR_MIGRATE_FROM_HEADERS (headers one per
 * line). No other variable is read: a key meant for one server is never sent to the other.
 */
export function sideOf(which: "from" | "to", opts: SideOptions, env: NodeJS.ProcessEnv = process.env): Side {
  const VAR = `HANGAR_MIGRATE_${which.toUpperCase()}`;
  const raw = opts.url ?? env[VAR];
  if (!raw)
    throw new MoveInError(
      `--${which} is required (the ${which === "from" ? "source" : "target"} server's URL, or $${VAR})`,
      2,
    );
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new MoveInError(`--${which}: '${raw}' is not a URL`, 2);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new MoveInError(`--${which}: '${raw}' is not an http(s) URL`, 2);
  }
  const headers: Record<string, string> = {};
  const fromEnv = (env[`${VAR}_HEADERS`] ?? "").split("\n").filter((l) => l.trim());
  for (const h of opts.header?.length ? opts.header : fromEnv) {
    const [name, value] = parseHeader(h, `--${which}-header`);
    headers[name] = value;
  }
  const apiKey = opts.apiKey ?? env[`${VAR}_API_KEY`];
  if (apiKey) headers["x-api-key"] = apiKey;
  const base = raw.replace(/\/+$/, "");
  const client = new Client({
    apiUrl: base,
    // null: the SDK reads no key of the environment (LANGGRAPH_API_KEY, ...), which would go to both servers.
    apiKey: null,
    defaultHeaders: headers,
    callerOptions: { maxRetries: 2 },
  });
  return { role: which === "from" ? "source" : "target", url: base, headers, client };
}

/** The text of a server's error answer: its `detail` when it is JSON with one, else the body's start. */
export function detailOf(text: string): string {
  try {
    const body = JSON.parse(text) as { detail?: unknown; message?: unknown; error?: unknown };
    const d = body.detail ?? body.message ?? body.error;
    if (typeof d === "string") return d;
    if (d !== undefined) return JSON.stringify(d).slice(0, 300);
  } catch {
    // not JSON
  }
  return text.trim().slice(0, 300) || "(no body)";
}

/** A JSON request to a side; a non-2xx answer is an HttpFailure, a network failure a MoveInError. */
export async function request<T>(side: Side, method: string, path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${side.url}${path}`, {
      method,
      headers: { ...side.headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw unreachable(side, e);
  }
  const text = await res.text();
  if (!res.ok) throw new HttpFailure(res.status, detailOf(text));
  return (text ? JSON.parse(text) : null) as T;
}

function unreachable(side: Side, e: unknown): MoveInError {
  const cause = (e as { cause?: { code?: string; message?: string } }).cause;
  const why = cause?.code ?? cause?.message ?? (e as Error).message;
  return new MoveInError(`the ${side.role} ${side.url} cannot be reached (${why})`);
}

/** Any failure of a call to a side, as one sentence (the SDK's HTTPError included). */
export function reason(e: unknown): string {
  if (e instanceof HttpFailure || e instanceof MoveInError) return e.message;
  const sdk = e as { status?: unknown; text?: unknown; message?: string; cause?: { code?: string } };
  if (typeof sdk.status === "number" && typeof sdk.text === "string") {
    return `HTTP ${sdk.status}: ${detailOf(sdk.text)}`;
  }
  if (sdk.cause?.code) return `${sdk.message ?? "request failed"} (${sdk.cause.code})`;
  return sdk.message ?? String(e);
}

/** The HTTP status of a failed call (SDK or ours), if it got an answer. */
export function statusOf(e: unknown): number | undefined {
  const s = (e as { status?: unknown }).status;
  return typeof s === "number" ? s : undefined;
}

/** What `call` answers, or null when the server answers 404 (the record does not exist there). */
export async function unlessMissing<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (e) {
    if (statusOf(e) === 404) return null;
    throw e;
  }
}

/**
 * Every record of an offset-paged listing. `fetchPage(limit, offset)` answers one page; a page shorter than the
 * limit is the last.
 */
export async function allPages<T>(
  fetchPage: (limit: number, offset: number) => Promise<T[]>,
  limit = 100,
): Promise<T[]> {
  const out: T[] = [];
  for (let offset = 0; ; offset += limit) {
    const page = await fetchPage(limit, offset);
    out.push(...page);
    if (page.length < limit) return out;
  }
}

/** A failure of a whole step (listing a kind of record): a 401/403 says the credentials are the problem. */
export function stepFailure(side: Side, what: string, e: unknown): MoveInError {
  const status = statusOf(e);
  const hint =
    status === 401 || status === 403
      ? `; check --${side.role === "source" ? "from" : "to"}-api-key / --${side.role === "source" ? "from" : "to"}-header`
      : "";
  return new MoveInError(`${what} of the ${side.role} ${side.url}: ${reason(e)}${hint}`);
}

/** Every record of a listing of `side` (offset-paged); a failure is a failure of the whole step, naming it. */
export async function listing<T>(
  side: Side,
  what: string,
  fetchPage: (limit: number, offset: number) => Promise<T[]>,
): Promise<T[]> {
  try {
    return await allPages(fetchPage);
  } catch (e) {
    throw stepFailure(side, `listing ${what}`, e);
  }
}
