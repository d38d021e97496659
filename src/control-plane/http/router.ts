// The deployment router: `/deployments/{deployment_id}/*` proxied to the deployment's live Agent Server, both
// ways streamed (request bodies, SSE event by event), but never its `/internal/*` routes (404 at the proxy).
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Agent, request, type Dispatcher } from "undici";
import type { DeploymentRoutes } from "../domain/reconcile.js";

/** Hop-by-hop headers (RFC 9110 7.6.1), and those the proxy handles itself (host, expect). */
const HOP_BY_HOP = new Set([
  "expect",
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

const PREFIX = "/deployments/";

type Headers = Record<string, string | string[] | undefined>;

/** Copies headers without the hop-by-hop ones (and those the Connection header names). */
function endToEnd(headers: Headers): Record<string, string | string[]> {
  const named = String(headers.connection ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(headers)) {
    const key = k.toLowerCase();
    if (v === undefined || HOP_BY_HOP.has(key) || named.includes(key)) continue;
    out[key] = v;
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * True when a path (as sent, before any decoding) could reach the Agent Server's `/internal/*` routes, which only
 * the control plane itself may call: judged after percent-decoding, dot segments and repeated slashes, any case.
 */
export function isInternalPath(rawPath: string): boolean {
  let path = rawPath.split("?")[0];
  for (let i = 0; i < 3; i++) {
    try {
      const decoded = decodeURIComponent(path);
      if (decoded === path) break;
      path = decoded;
    } catch {
      break;
    }
  }
  path = path.replace(/\\/g, "/").replace(/\/+/g, "/");
  const segments: string[] = [];
  for (const seg of path.split("/")) {
    if (seg === "..") segments.pop();
    else if (seg !== "." && seg !== "") segments.push(seg);
  }
  const first = (segments[0] ?? "").split(";")[0].trim().toLowerCase();
  return first === "internal";
}

export class DeploymentRouter implements DeploymentRoutes {
  readonly direct = false;
  private targets = new Map<string, string>();
  /** Requests in flight per target URL. */
  private inflight = new Map<string, number>();
  private exists: (deploymentId: string) => Promise<boolean> = async () => false;
  private agent = new Agent({
    // Runs can take long before their first byte (wait) and streams idle between events.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: 10_000 },
  });

  /** How the router tells a deployment without a live revision (503) from a missing one (404). */
  setLookup(exists: (deploymentId: string) => Promise<boolean>): void {
    this.exists = exists;
  }

  /** Points the deployment's URL at `url` (its live Agent Server), or at nothing (503 until set again). */
  setTarget(deploymentId: string, url: string | null): void {
    if (url) this.targets.set(deploymentId, url.replace(/\/+$/, ""));
    else this.targets.delete(deploymentId);
  }

  target(deploymentId: string): string | null {
    return this.targets.get(deploymentId) ?? null;
  }

  /** Requests being proxied to `url` now. */
  inFlight(url: string): number {
    return this.inflight.get(url.replace(/\/+$/, "")) ?? 0;
  }

  /** Waits until no request is in flight to `url` any more, or `timeoutMs` passed; true when drained. */
  async drain(url: string, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (this.inFlight(url) > 0) {
      if (Date.now() >= deadline) return false;
      await sleep(50);
    }
    return true;
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }

  /**
   * Adds the routes to `app` (before it listens). They sit in their own plugin scope, where request bodies are
   * not parsed (they are streamed through as they come).
   */
  register(app: FastifyInstance): void {
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser("*", (_req, _payload, done) => done(null));
      const handler = (req: FastifyRequest, reply: FastifyReply) => this.proxy(req, reply);
      scope.all("/deployments/:deployment_id", { schema: { hide: true } }, handler);
      scope.all("/deployments/:deployment_id/*", { schema: { hide: true } }, handler);
    });
  }

  private track(url: string, delta: number): void {
    const n = (this.inflight.get(url) ?? 0) + delta;
    if (n > 0) this.inflight.set(url, n);
    else this.inflight.delete(url);
  }

  private async proxy(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const id = (req.params as { deployment_id: string }).deployment_id;
    let target = this.targets.get(id);
    if (!target) {
      const known = await this.exists(id).catch(() => false);
      return known
        ? reply.code(503).send({ detail: `Deployment ${id} has no revision serving yet` })
        : reply.code(404).send({ detail: `Deployment ID ${id} not found.` });
    }
    // The rest of the raw path (not decoded, so it goes on exactly as it came) and the query string.
    const raw = req.raw.url ?? "/";
    const after = raw.slice(PREFIX.length);
    const cut = after.search(/[/?]/);
    const mount = raw.slice(0, PREFIX.length + (cut < 0 ? after.length : cut));
    let rest = cut < 0 ? "" : after.slice(cut);
    if (!rest.startsWith("/")) rest = `/${rest}`;
    // The revision's control routes (e.g. /internal/recover) are not part of the deployment's public API.
    if (isInternalPath(rest)) return reply.code(404).send({ detail: "Not Found" });

    const method = req.method as Dispatcher.HttpMethod;
    const headers = endToEnd(req.headers as Headers);
    const forwardedFor = req.headers["x-forwarded-for"];
    headers["x-forwarded-for"] = forwardedFor ? `${forwardedFor}, ${req.ip}` : req.ip;
    if (req.headers.host) headers["x-forwarded-host"] = req.headers.host;
    headers["x-forwarded-proto"] = req.protocol;
    headers["x-forwarded-prefix"] = mount;
    const hasBody =
      method !== "GET" &&
      method !== "HEAD" &&
      (req.headers["transfer-encoding"] !== undefined ||
        (req.headers["content-length"] !== undefined && req.headers["content-length"] !== "0"));

    // The client going away ends the upstream request too (so `on_disconnect` works through the proxy).
    const ac = new AbortController();
    reply.raw.once("close", () => {
      if (!reply.raw.writableFinished) ac.abort();
    });
    let counted: string | undefined = target;
    this.track(target, 1);
    reply.raw.once("close", () => {
      if (counted) this.track(counted, -1);
      counted = undefined;
    });

    let res: Dispatcher.ResponseData | undefined;
    for (let attempt = 0; ; attempt++) {
      try {
        res = await request(`${target}${rest}`, {
          method,
          headers,
          body: hasBody ? req.raw : undefined,
          signal: ac.signal,
          dispatcher: this.agent,
        });
        break;
      } catch (e) {
        if (ac.signal.aborted) return;
        const code = (e as { code?: string }).code ?? (e as Error).name;
        // The target was switched while this request was on its way to the old one, which is gone now: a
        // request without a body can simply go to the new one.
        const next = this.targets.get(id);
        if (!hasBody && attempt === 0 && next && next !== target && code === "ECONNREFUSED") {
          if (counted) this.track(counted, -1);
          target = counted = next;
          this.track(next, 1);
          continue;
        }
        if (reply.sent) return;
        return reply
          .code(502)
          .send({ detail: `Deployment ${id}: its Agent Server did not answer (${code})` });
      }
    }
    const out = endToEnd(res.headers as Headers);
    for (const h of ["location", "content-location"]) {
      const v = out[h];
      if (typeof v === "string" && v.startsWith("/") && !v.startsWith("//")) out[h] = `${mount}${v}`;
    }
    reply.code(res.statusCode).headers(out);
    if (method === "HEAD" || res.statusCode === 204 || res.statusCode === 304) {
      await res.body.dump().catch(() => {});
      return reply.send();
    }
    return reply.send(res.body);
  }
}

export function createDeploymentRouter(): DeploymentRouter {
  return new DeploymentRouter();
}

/** Creates the router and adds its routes to `app`; call before `app.listen`. */
export function registerDeploymentRoutes(app: FastifyInstance): DeploymentRouter {
  const router = new DeploymentRouter();
  router.register(app);
  return router;
}
