// Webhooks: when a run ends, POST it (with its final values or error) to the URL the run was created with.
// Loopback and unspecified addresses are refused unless HANGAR_WEBHOOK_ALLOW_LOOPBACK is set (a relative URL
// is this server itself); delivery is retried with backoff on network errors and 5xx answers.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { unprocessable } from "../api/errors.js";
import { loopbackUrl } from "../lib/loopback.js";
import { toJson } from "./serde.js";

const ATTEMPTS = 4;
const TIMEOUT_MS = 10_000;

export const loopbackAllowed = (): boolean =>
  ["1", "true", "yes"].includes((process.env.HANGAR_WEBHOOK_ALLOW_LOOPBACK ?? "").toLowerCase());

function isLocalAddress(ip: string): boolean {
  const v4 = ip.startsWith("::ffff:") ? ip.slice(7) : ip;
  if (isIP(v4) === 4) return v4.startsWith("127.") || v4 === "0.0.0.0";
  return ip === "::1" || ip === "::";
}

/** A path on this server (`/my-hook`, e.g. a route of http.app), resolved against it, as the official server does. */
const isRelative = (url: string) => url.startsWith("/") && !url.startsWith("//");

/** Validates a webhook URL at run creation: a path on this server, or http(s) and no loopback host unless allowed. */
export function checkWebhookUrl(url: string): void {
  if (isRelative(url)) return;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw unprocessable(`webhook: "${url}" is not a valid URL`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:")
    throw unprocessable("webhook: must be an http(s) URL");
  const host = u.hostname.replace(/^\[|\]$/g, "");
  if (!loopbackAllowed() && (host === "localhost" || (isIP(host) && isLocalAddress(host)))) {
    throw unprocessable(
      "webhook: loopback addresses are refused; set HANGAR_WEBHOOK_ALLOW_LOOPBACK=true to allow them",
    );
  }
}

/** Delivers the payload; never throws (failures are logged). */
export async function sendWebhook(url: string, payload: unknown, log: (msg: string) => void): Promise<void> {
  const body = toJson(payload);
  const relativeTo = isRelative(url) ? loopbackUrl() : undefined;
  if (isRelative(url)) {
    if (!relativeTo) return log(`webhook ${url}: a path needs this process to serve the API; not sent`);
    url = new URL(url, relativeTo).href;
  }
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      if (!relativeTo && !loopbackAllowed()) {
        // Resolved at send time too, so a name cannot be pointed at loopback after the run was accepted.
        const { address } = await lookup(new URL(url).hostname.replace(/^\[|\]$/g, ""));
        if (isLocalAddress(address)) {
          log(`webhook ${url}: resolves to a loopback address; not sent`);
          return;
        }
      }
      const res = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", "user-agent": "hangar-webhook" },
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      await res.body?.cancel();
      if (res.status < 500) {
        if (res.status >= 400) log(`webhook ${url}: answered ${res.status}; not retried`);
        return;
      }
      log(`webhook ${url}: answered ${res.status} (attempt ${attempt})`);
    } catch (e) {
      log(`webhook ${url}: ${(e as Error).message} (attempt ${attempt})`);
    }
    if (attempt < ATTEMPTS) await new Promise((r) => setTimeout(r, 250 * 2 ** attempt).unref());
  }
}
