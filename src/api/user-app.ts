// The project's own HTTP app (`http.app`) mounted as the official server mounts it: a Hono app sees every
// request before Hangar's routes (its middleware may rewrite headers and bodies or answer itself, its routes
// may add or shadow paths) and what it lets through reaches Hangar's routes; a plain `fetch` object answers
// only the paths no Hangar route serves.
import { randomUUID } from "node:crypto";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeWebStream } from "node:stream/web";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AuthUser } from "../auth/auth.js";
import { TooLargeError } from "../lib/errors.js";
import type { Logger } from "../lib/logger.js";
import { safeEqual } from "../lib/safe-equal.js";
import type { UserApp } from "./http-config.js";

/** The Fastify request a user app call serves, in the environment given to the app. */
const ORIGIN = Symbol("hangar.request");
/** The web Request the app was given (middleware may replace `c.req.raw` with a rewritten one). */
const ORIGINAL = Symbol("hangar.original-request");

/** What Hangar needs of a Hono app: its routes can be mounted into a fresh app of the same class. */
interface HonoLike extends UserApp {
  route(path: string, app: HonoLike): unknown;
  notFound(handler: (c: HonoContext) => Response | Promise<Response>): unknown;
  onError(handler: (err: Error, c: HonoContext) => Response | Promise<Response>): unknown;
}

interface HonoContext {
  req: { raw: Request; arrayBuffer(): Promise<ArrayBuffer> };
  /** What Hangar passed as the app's environment (as @hono/node-server does: incoming, outgoing). */
  env?: { [ORIGIN]?: FastifyRequest; [ORIGINAL]?: Request };
}

function isHonoLike(app: UserApp): app is HonoLike {
  const a = app as Partial<HonoLike>;
  return (
    typeof a.route === "function" &&
    typeof a.notFound === "function" &&
    typeof a.onError === "function" &&
    typeof app.constructor === "function" &&
    app.constructor !== Object
  );
}

/** Marks a request Hangar hands back to itself after the user's middleware, with the caller's identity. */
const FORWARD_HEADER = "x-hangar-forwarded";
/** Hop-by-hop headers: each side of a hand-over computes its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "date", "content-length"]);
const NULL_BODY_STATUS = new Set([101, 204, 205, 304]);

class BodyTooLarge extends TooLargeError {}

/** Request headers as a web `Headers`, keeping repeated headers (HTTP/2 pseudo-headers left out). */
function webHeaders(req: FastifyRequest): Headers {
  const headers = new Headers();
  const raw = req.raw.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) if (!raw[i].startsWith(":")) headers.append(raw[i], raw[i + 1]);
  return headers;
}

/** The incoming request as a web Request whose body streams from the socket, capped at `limit` bytes. */
function toWebRequest(req: FastifyRequest, limit: number, aborted: AbortSignal): Request {
  const proto = (req.raw.socket as { encrypted?: boolean }).encrypted ? "https" : "http";
  const url = `${proto}://${req.headers.host ?? "localhost"}${req.raw.url ?? "/"}`;
  const method = req.raw.method ?? "GET";
  if (method === "GET" || method === "HEAD")
    return new Request(url, { method, headers: webHeaders(req), signal: aborted });
  let seen = 0;
  const capped = req.raw.pipe(
    new Transform({
      transform(chunk: Buffer, _enc, done) {
        seen += chunk.length;
        done(seen > limit ? new BodyTooLarge("request body too large") : null, chunk);
      },
    }),
  );
  req.raw.once("error", (e) => capped.destroy(e));
  return new Request(url, {
    method,
    headers: webHeaders(req),
    body: Readable.toWeb(capped) as ReadableStream,
    signal: aborted,
    duplex: "half",
  } as RequestInit);
}

/** Writes a web Response on the raw reply (after the headers hooks already set, e.g. CORS), streaming its body. */
async function writeResponse(res: Response, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const out = reply.raw;
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(reply.getHeaders())) {
    if (v !== undefined) headers[k] = Array.isArray(v) ? v : String(v);
  }
  res.headers.forEach((value, key) => {
    if (key !== "set-cookie" && key !== "connection" && key !== "keep-alive") headers[key] = value;
  });
  const cookies = res.headers.getSetCookie();
  if (cookies.length) headers["set-cookie"] = cookies;
  out.writeHead(res.status, headers);
  if (!res.body || req.method === "HEAD") {
    await res.body?.cancel().catch(() => {});
    out.end();
    return;
  }
  out.flushHeaders();
  // When the client goes away, pipeline destroys the source, which cancels the user's (or Hangar's) stream.
  await pipeline(Readable.fromWeb(res.body as NodeWebStream), out).catch(() => {});
}

function errorResponse(status: number, detail: string): Response {
  return Response.json({ detail }, { status });
}

export class UserAppMount {
  private readonly secret = randomUUID();
  private readonly pending = new Map<string, AuthUser | null>();
  private readonly forwarded = new WeakSet<FastifyRequest>();
  private readonly hono: HonoLike | undefined;

  constructor(
    private readonly app: FastifyInstance,
    private readonly userApp: UserApp,
    private readonly log: Logger,
    private readonly bodyLimit: number,
  ) {
    if (isHonoLike(userApp)) {
      // A fresh app of the user's own Hono class, with the user's routes and middleware mounted at "/", as the
      // official server mounts them into its own app. What no user route answers (the end of the middleware
      // chain) is handed to Hangar's routes with the request as the middleware left it.
      const Ctor = userApp.constructor as new () => HonoLike;
      const wrapper = new Ctor();
      wrapper.route("/", userApp);
      wrapper.notFound((c) => this.fallThrough(c));
      wrapper.onError((err, c) => this.onError(err, c));
      this.hono = wrapper;
    }
  }

  /** True for a request Hangar handed to itself: already authenticated, not to be given to the user app again. */
  isForwarded(req: FastifyRequest): boolean {
    return this.forwarded.has(req);
  }

  /** First onRequest hook: recognises a handed-back request and restores the caller's identity. */
  readonly recognise = async (req: FastifyRequest): Promise<void> => {
    const mark = req.headers[FORWARD_HEADER];
    if (typeof mark !== "string") return;
    delete req.headers[FORWARD_HEADER];
    const [secret, id] = mark.split(":");
    if (!safeEqual(secret, this.secret) || !this.pending.has(id)) return;
    req.user = this.pending.get(id) ?? null;
    this.pending.delete(id);
    this.forwarded.add(req);
  };

  /** Last onRequest hook (after CORS and authentication): gives the request to the user app. */
  readonly dispatch = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (this.forwarded.has(req) || req.url.startsWith("/internal/")) return;
    // A plain fetch object only answers what Hangar does not.
    if (!this.hono && !req.is404) return;
    reply.hijack();
    const gone = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    let res: Response;
    try {
      const request = toWebRequest(req, this.bodyLimit, gone.signal);
      const env = { incoming: req.raw, outgoing: reply.raw, [ORIGIN]: req, [ORIGINAL]: request };
      res = await (this.hono ?? this.userApp).fetch(request, env);
    } catch (e) {
      res = this.onError(e as Error);
    }
    await writeResponse(res, req, reply);
  };

  private onError(err: Error, _c?: HonoContext): Response {
    if (err instanceof BodyTooLarge || err.cause instanceof BodyTooLarge)
      return errorResponse(413, "Request body too large");
    // Hono's HTTPException (and alike) carries its own response.
    const own = (err as { getResponse?: () => Response }).getResponse;
    if (typeof own === "function") return own.call(err);
    this.log.error({ err }, `http.app: ${err.message}`);
    return errorResponse(500, "Internal server error in http.app");
  }

  /** Hands the (possibly rewritten) request to Hangar's own routes and returns their response. */
  private async fallThrough(c: HonoContext): Promise<Response> {
    const request = c.req.raw;
    const first = c.env?.[ORIGIN];
    const method = request.method.toUpperCase();
    // A request the middleware replaced (`c.req.raw = new Request(c.req.raw, {body})`) brings its own body;
    // otherwise read through Hono, so a body the middleware already read (and Hono cached) is handed on.
    const replaced = request !== c.env?.[ORIGINAL] && request.body !== null && !request.bodyUsed;
    const payload =
      method === "GET" || method === "HEAD"
        ? undefined
        : Buffer.from(await (replaced ? request.arrayBuffer() : c.req.arrayBuffer()));
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      if (!HOP_BY_HOP.has(key) && key !== FORWARD_HEADER) headers[key] = value;
    });
    const id = randomUUID();
    this.pending.set(id, first?.user ?? null);
    headers[FORWARD_HEADER] = `${this.secret}:${id}`;
    const url = new URL(request.url);
    let inner;
    try {
      inner = await this.app.inject({
        method: method as "GET",
        url: url.pathname + url.search,
        headers,
        payload,
        payloadAsStream: true,
        remoteAddress: first?.ip,
      });
    } finally {
      this.pending.delete(id);
    }
    const out = new Headers();
    for (const [k, v] of Object.entries(inner.headers)) {
      if (v === undefined || HOP_BY_HOP.has(k)) continue;
      if (Array.isArray(v)) for (const item of v) out.append(k, item);
      else out.set(k, String(v));
    }
    const stream = inner.stream();
    const innerRes = inner.raw.res;
    let finished = false;
    innerRes.once("finish", () => (finished = true));
    // Our reader cancelled (client gone): close Hangar's side too, so a stream sees its client leave.
    stream.once("close", () => {
      if (!finished) innerRes.destroy();
    });
    if (NULL_BODY_STATUS.has(inner.statusCode) || method === "HEAD") {
      stream.resume();
      return new Response(null, { status: inner.statusCode, headers: out });
    }
    return new Response(Readable.toWeb(stream) as ReadableStream, { status: inner.statusCode, headers: out });
  }
}
