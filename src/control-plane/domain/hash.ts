// Hashing of secrets the control plane checks but never keeps (API keys, upload tokens).
import { createHash } from "node:crypto";

/** SHA-256 (hex) of an API key or upload token: what the store keeps instead of the secret. */
export function sha256(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
