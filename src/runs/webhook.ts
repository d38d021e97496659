// Webhooks: when a run ends, POST it (with its final values or error) to the URL the run was created with.
// Internal addresses are refused (net-policy.ts) at creation and on the address each connection is pinned to.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { codeOf, invalidInput } from "../lib/errors.js";
import type { Logger } from "../lib/logger.js";
import { loopbackKey, loopbackUrl } from "../lib/loopback.js";
import {
  BlockedAddressError,
  guardedLookup,
  hostRefusal,
  ipBytes,
  isLocalhostName,
  refusal,
  type AddressPolicy,
} from "./net-policy.js";
import { toJson } from "../lib/serde.js";

const ATTEMPTS = 4;
const TIMEOUT_MS = 10_000;
/** Redirects followed per delivery (each through the same address check). */
const MAX_REDIRECTS = 5;

/** A path on this server (`/my-hook`, e.g. a route of http.app), resolved against it, as the official server does. */
const isRelative = (url: string) => url.startsWith("/") && !url.startsWith("//");

const bareHost = (u: URL) => u.hostname.replace(/^\[|\]$/g, "");
const portOf = (u: URL) => Number(u.port) || (u.protocol === "https:" ? 443 : 80);

/**
 * Validates a webhook URL at run creation: a path on this server, or an http(s) URL whose host (resolved) is
 * an address webhooks may reach under the server's `policy`; 422 naming `webhook` otherwise.
 */
export async function checkWebhookUrl(url: string, policy: AddressPolicy): Promise<void> {
  if (isRelative(url)) return;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw invalidInput(`webhook: "${url}" is not a valid URL`, "webhook");
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw invalidInput("webhook: must be an http(s) URL", "webhook");
  const why = await hostRefusal(u.hostname, portOf(u), policy);
  if (why) throw invalidInput(`webhook: refused: ${why}`, "webhook");
}

interface Hop {
  status: number;
  location?: string;
}

/**
 * One HTTP request of a delivery, connected through the policy's lookup, or (`own`) to this server itself, with
 * its key (HANGAR_API_KEYS applies to its routes too).
 */
function send(
  u: URL,
  method: string,
  body: string | undefined,
  policy: AddressPolicy | null,
  own: boolean,
): Promise<Hop> {
  return new Promise((resolve, reject) => {
    const request = u.protocol === "https:" ? httpsRequest : httpRequest;
    const req = request(
      u,
      {
        method,
        headers: {
          "user-agent": "hangar-webhook",
          ...(own ? { "x-api-key": loopbackKey() } : {}),
          ...(body === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(body) }),
        },
        // A fresh connection per request: no pooled socket is reused for another name's check.
        agent: false,
        ...(policy ? { lookup: guardedLookup(policy, portOf(u)) } : {}),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      },
      (res) => {
        res.on("error", () => {});
        res.resume();
        const location = res.headers.location;
        resolve({ status: res.statusCode ?? 0, location });
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const isBlocked = (e: unknown) => e instanceof BlockedAddressError || codeOf(e) === "blocked_address";

/** A refusal, naming the redirect it came from after the first hop. */
const blocked = (hop: number, u: URL, why: string) =>
  new BlockedAddressError(hop ? `redirect ${hop} to ${u.href}: ${why}` : why);

/**
 * Delivers once: follows redirects (at most MAX_REDIRECTS), each hop checked as the first was. `self` is the
 * origin of this server when the webhook was a path on it: the one loopback target allowed without a setting.
 */
async function deliver(
  start: URL,
  body: string,
  self: string | null,
  policy: AddressPolicy,
): Promise<number> {
  let u = start;
  let method = "POST";
  let payload: string | undefined = body;
  for (let hop = 0; ; hop++) {
    const own = self !== null && u.origin === self;
    if (!own) {
      const host = bareHost(u);
      const why = ipBytes(host)
        ? refusal(host, portOf(u), policy)
        : isLocalhostName(host)
          ? await hostRefusal(host, portOf(u), policy)
          : null;
      if (why) throw blocked(hop, u, why);
    }
    const res = await send(u, method, payload, own ? null : policy, own).catch((e: Error) => {
      throw isBlocked(e) ? blocked(hop, u, e.message) : e;
    });
    if (![301, 302, 303, 307, 308].includes(res.status) || !res.location) return res.status;
    if (hop >= MAX_REDIRECTS) throw new BlockedAddressError(`more than ${MAX_REDIRECTS} redirects`);
    // The Location of a redirect is checked at the top of the loop, as the first URL was.
    const next = new URL(res.location, u);
    if (next.protocol !== "http:" && next.protocol !== "https:")
      throw new BlockedAddressError(`redirect to a ${next.protocol} URL`);
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      method = "GET";
      payload = undefined;
    }
    u = next;
  }
}

/** Delivers the payload to what the server's `policy` lets webhooks reach; never throws (failures are logged). */
export async function sendWebhook(
  url: string,
  payload: unknown,
  logger: Logger,
  policy: AddressPolicy,
): Promise<void> {
  const log = (msg: string) => logger.warn(msg);
  const body = toJson(payload);
  let self: string | null = null;
  let target: URL;
  if (isRelative(url)) {
    const base = loopbackUrl();
    if (!base) return log(`webhook ${url}: a path needs this process to serve the API; not sent`);
    target = new URL(url, base);
    self = target.origin;
  } else {
    try {
      target = new URL(url);
    } catch {
      return log(`webhook ${url}: not a valid URL; not sent`);
    }
  }
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      const status = await deliver(target, body, self, policy);
      if (status < 500) {
        if (status >= 400) log(`webhook ${url}: answered ${status}; not retried`);
        else logger.debug({ webhook: url, status }, "webhook sent");
        return;
      }
      log(`webhook ${url}: answered ${status} (attempt ${attempt})`);
    } catch (e) {
      if (isBlocked(e)) return log(`webhook ${url}: refused: ${(e as Error).message}; not sent`);
      log(`webhook ${url}: ${(e as Error).message} (attempt ${attempt})`);
    }
    if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * 2 ** attempt).unref());
  }
}
