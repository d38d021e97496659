// Constant-time comparison of secrets (tokens, API keys): the time taken does not depend on where, or whether,
// the candidate differs from the secret, nor on the secret's length.
import { createHash, timingSafeEqual } from "node:crypto";

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest();

/** True when `candidate` equals `secret`; compares equal-length SHA-256 digests with crypto.timingSafeEqual. */
export function safeEqual(candidate: string | undefined | null, secret: string): boolean {
  if (typeof candidate !== "string") return false;
  return timingSafeEqual(digest(candidate), digest(secret));
}

/** True when `candidate` equals one of `secrets`; every secret is compared, whatever matched. */
export function safeIncludes(candidate: string | undefined | null, secrets: Iterable<string>): boolean {
  let found = false;
  for (const s of secrets) found = safeEqual(candidate, s) || found;
  return found;
}
