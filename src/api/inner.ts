// The API called from inside this server (MCP, protocol v2): in-process requests through the app's own routes,
// carrying the caller's headers, so authentication, auth handlers, validation and errors are the API's. The
// request log skips them (the request that caused them is logged).
import { randomUUID } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";

/** Headers of the calling request not passed on to the API requests made for it. */
const NOT_FORWARDED = new Set([
  "accept",
  "connection",
  "content-length",
  "content-type",
  "host",
  "keep-alive",
  "last-event-id",
  "mcp-protocol-version",
  "mcp-session-id",
  "transfer-encoding",
  "upgrade",
]);

export interface ApiAnswer {
  status: number;
  body: any;
}

/** Marks the API requests made in this process (a value no client knows), which the request log skips. */
const INNER_HEADER = "x-hangar-inner";
const INNER_VALUE = randomUUID();

/** Whether a request is one made in-process (logged as the MCP request that caused it). */
export const isInnerRequest = (req: FastifyRequest): boolean => req.headers[INNER_HEADER] === INNER_VALUE;

/** The calling request's headers that go on to the API requests made for it (its credentials among them). */
export function callerHeaders(req: FastifyRequest, alsoDropped: string[] = []): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined && !NOT_FORWARDED.has(k) && !alsoDropped.includes(k)) {
      headers[k] = Array.isArray(v) ? v.join(", ") : v;
    }
  }
  return headers;
}

/** The API, called in this process with the calling request's credentials. */
export function apiAs(app: FastifyInstance, req: FastifyRequest) {
  const headers = { ...callerHeaders(req, [INNER_HEADER]), [INNER_HEADER]: INNER_VALUE };
  return async (method: "GET" | "POST" | "PATCH", url: string, payload?: unknown): Promise<ApiAnswer> => {
    const res = await app.inject({
      method,
      url,
      headers: payload === undefined ? headers : { ...headers, "content-type": "application/json" },
      payload: payload === undefined ? undefined : JSON.stringify(payload),
    });
    let body: unknown = res.body;
    try {
      body = res.body ? JSON.parse(res.body) : undefined;
    } catch {
      // not JSON: the text
    }
    return { status: res.statusCode, body };
  };
}
export type Api = ReturnType<typeof apiAs>;
