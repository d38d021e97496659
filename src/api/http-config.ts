// The `http` section of langgraph.json: switching off groups of routes, and the project's own app
// (an object with a web-standard `fetch(Request): Response`, such as a Hono app) for requests no Hangar
// route answers.
import { existsSync } from "node:fs";
import { Readable } from "node:stream";
import { pathToFileURL } from "node:url";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ConfigError, parseGraphSpec } from "../config/config.js";

export interface HttpConfig {
  cors?: {
    allow_origins?: string[];
    allow_methods?: string[];
    allow_headers?: string[];
    allow_credentials?: boolean;
    expose_headers?: string[];
    max_age?: number;
  };
  app?: string;
  disable_assistants?: boolean;
  disable_threads?: boolean;
  disable_runs?: boolean;
  disable_store?: boolean;
  disable_meta?: boolean;
}

export interface UserApp {
  fetch: (req: Request) => Response | Promise<Response>;
}

/** Loads `http.app` (`./file.ts:export`), which must have a `fetch(Request)` method. */
export async function loadUserApp(
  projectDir: string,
  spec: string | undefined,
): Promise<UserApp | undefined> {
  if (!spec) return undefined;
  const entry = parseGraphSpec(projectDir, "http.app", spec);
  if (!existsSync(entry.file)) throw new ConfigError(`http.app "${spec}": file ${entry.file} not found`);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(entry.file).href)) as Record<string, unknown>;
  } catch (e) {
    throw new ConfigError(`http.app "${spec}": failed to import: ${(e as Error).message}`);
  }
  const app = mod[entry.exportName ?? "default"] as UserApp | undefined;
  if (!app || typeof app.fetch !== "function") {
    throw new ConfigError(`http.app "${spec}": the export has no fetch(request) method (a Hono app has one)`);
  }
  return app;
}

/** Hands a request to the project's app and streams its Response back. */
export async function forwardToUserApp(
  userApp: UserApp,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const headers = new Headers();
  for (const [k, v] of Object.entries(req.headers)) {
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : String(v));
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD" && req.body !== undefined;
  const body = !hasBody ? undefined : typeof req.body === "string" ? req.body : JSON.stringify(req.body);
  const res = await userApp.fetch(
    new Request(`http://${req.headers.host ?? "localhost"}${req.url}`, { method: req.method, headers, body }),
  );
  reply.status(res.status);
  res.headers.forEach((value, key) => {
    if (key !== "content-length") reply.header(key, value);
  });
  await reply.send(res.body ? Readable.fromWeb(res.body as import("node:stream/web").ReadableStream) : "");
}
