// Encryption at rest of deployments' secrets (AES-256-GCM, bound to the deployment's id): the key comes from
// HANGAR_CP_SECRET_KEY or from `<data-dir>/secret.key` (generated 0600 on first start); a wrong key is named.
import type { Logger } from "../../lib/logger.js";
import { createCipheriv, createDecipheriv, createHash, randomBytes, scryptSync } from "node:crypto";
import { linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { settings } from "../../lib/settings.js";
import { MigrationError } from "../../lib/errors.js";
import type { Secret } from "./types.js";

/** The key file in the data directory, used when HANGAR_CP_SECRET_KEY is not set. */
export const KEY_FILE = "secret.key";
/** Prefix of a sealed value: version, then the key's id, then base64url(iv | tag | ciphertext). */
const VERSION = "hcp1";
/** Salt of the scrypt derivation of a passphrase (fixed: the same passphrase gives the same key everywhere). */
const PASSPHRASE_SALT = "hangar-control-plane-secrets-v1";
const MIN_PASSPHRASE = 16;

/**
 * The secrets key cannot be used: a bad HANGAR_CP_SECRET_KEY, or a store whose secrets were sealed with another
 * key. Reported in one line by the CLI (it is a kind of migration error: the store cannot be opened as it is).
 */
export class SecretKeyError extends MigrationError {}

export interface SecretBox {
  /** A short public fingerprint of the key (never the key): stored beside the ciphertexts. */
  keyId: string;
  /** Where the key came from, for messages: "HANGAR_CP_SECRET_KEY" or the key file's path. */
  source: string;
  /** The secrets as a sealed string, bound to `owner` (the deployment's id). */
  seal(secrets: Secret[], owner: string): string;
  /** A stored value back to secrets: a sealed string, or a plaintext array of a store older than encryption. */
  open(stored: unknown, owner: string): Secret[];
  /** The key file this call generated (there was none), if it did: removed again if the store refuses it. */
  generated?: string;
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const B64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * The 32-byte key of a HANGAR_CP_SECRET_KEY value: 64 hex digits, or base64/base64url of 32 bytes, are the key
 * itself; any other value of at least 16 characters is a passphrase, stretched with scrypt (N=2^15, r=8, p=1).
 */
export function parseSecretKey(raw: string, what = "HANGAR_CP_SECRET_KEY"): Buffer {
  const v = raw.trim();
  if (HEX_KEY.test(v)) return Buffer.from(v, "hex");
  if (B64_KEY.test(v)) {
    const b = Buffer.from(v.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (b.length === 32) return b;
  }
  if (v.length < MIN_PASSPHRASE) {
    throw new SecretKeyError(
      `${what} must be 32 bytes as 64 hex digits or base64 (e.g. \`openssl rand -base64 32\`), ` +
        `or a passphrase of at least ${MIN_PASSPHRASE} characters`,
    );
  }
  return scryptSync(v, PASSPHRASE_SALT, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
}

const keyIdOf = (key: Buffer) =>
  createHash("sha256").update("hangar-cp-secret-key-id\0").update(key).digest("hex").slice(0, 16);

/** A SecretBox over a 32-byte key. */
export function secretBoxOf(key: Buffer, source: string): SecretBox {
  const keyId = keyIdOf(key);
  const aad = (owner: string) => Buffer.from(`hangar-cp:deployment:${owner}:secrets`);
  return {
    keyId,
    source,
    seal(secrets, owner) {
      const iv = randomBytes(12);
      const c = createCipheriv("aes-256-gcm", key, iv);
      c.setAAD(aad(owner));
      const ct = Buffer.concat([c.update(JSON.stringify(secrets ?? []), "utf8"), c.final()]);
      return `${VERSION}:${keyId}:${Buffer.concat([iv, c.getAuthTag(), ct]).toString("base64url")}`;
    },
    open(stored, owner) {
      if (stored === null || stored === undefined) return [];
      if (Array.isArray(stored)) return stored as Secret[];
      const parts = typeof stored === "string" ? stored.split(":") : [];
      if (parts.length !== 3 || parts[0] !== VERSION) {
        throw new SecretKeyError(`the secrets of deployment ${owner} are stored in an unknown form`);
      }
      if (parts[1] !== keyId) {
        throw new SecretKeyError(
          `the secrets of deployment ${owner} were encrypted with another key (id ${parts[1]}), ` +
            `not with this control plane's key (id ${keyId}, from ${source})`,
        );
      }
      const raw = Buffer.from(parts[2], "base64url");
      try {
        const d = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
        d.setAAD(aad(owner));
        d.setAuthTag(raw.subarray(12, 28));
        const text = Buffer.concat([d.update(raw.subarray(28)), d.final()]).toString("utf8");
        return JSON.parse(text) as Secret[];
      } catch {
        throw new SecretKeyError(`the secrets of deployment ${owner} cannot be decrypted (altered or moved)`);
      }
    },
  };
}

export interface SecretKeyOptions {
  /** The value of HANGAR_CP_SECRET_KEY; default this process's setting. */
  secretKey?: string;
  /** The data directory, where the key file is kept when the variable is not set. */
  dataDir?: string;
  /** Told once when a key is generated. */
  log?: Logger;
}

/**
 * The control plane's SecretBox: HANGAR_CP_SECRET_KEY when set, else the key in `<dataDir>/secret.key`, which is
 * generated (32 random bytes, base64, mode 0600) when missing, and said so through `log`.
 */
export function loadSecretBox(opts: SecretKeyOptions = {}): SecretBox {
  const raw = (opts.secretKey ?? settings().controlPlane.secretKey)?.trim();
  if (raw) return secretBoxOf(parseSecretKey(raw), "HANGAR_CP_SECRET_KEY");
  if (!opts.dataDir) {
    throw new SecretKeyError(
      "HANGAR_CP_SECRET_KEY is not set and there is no data directory to keep a key in",
    );
  }
  const file = join(opts.dataDir, KEY_FILE);
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
  let generated: string | undefined;
  if (text === undefined) {
    const fresh = `${randomBytes(32).toString("base64")}\n`;
    // Written whole under another name, then linked in place: another process (an admin command, a second
    // control plane) creating it at the same time never reads a half-written key; the first link wins.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    writeFileSync(tmp, fresh, { mode: 0o600, flag: "wx" });
    try {
      linkSync(tmp, file);
      text = fresh;
      generated = file;
      opts.log?.warn(
        `No HANGAR_CP_SECRET_KEY: generated the key that encrypts deployments' secrets in ${file} (mode 0600). ` +
          "Back it up with the data, or set HANGAR_CP_SECRET_KEY to its content.",
      );
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      text = readFileSync(file, "utf8");
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  const v = text.trim();
  if (!HEX_KEY.test(v) && !B64_KEY.test(v)) {
    throw new SecretKeyError(`${file} does not hold a key (32 bytes as base64 or 64 hex digits)`);
  }
  return { ...secretBoxOf(parseSecretKey(v, file), file), ...(generated ? { generated } : {}) };
}

/**
 * The one-line refusal of a store whose secrets are sealed with another key than `box`'s. A key file `box` has just
 * generated (the store's was missing) is removed again, so that the backed-up key can be put back as it was.
 */
export function wrongKeyError(storedKeyId: string, box: SecretBox): SecretKeyError {
  if (box.generated) {
    rmSync(box.generated, { force: true });
    return new SecretKeyError(
      `the control plane store's secrets are encrypted with the key of id ${storedKeyId}, but there is no ` +
        `${box.generated} (restore the store's key file there) and HANGAR_CP_SECRET_KEY is not set`,
    );
  }
  return new SecretKeyError(
    `the control plane store's secrets are encrypted with the key of id ${storedKeyId}, ` +
      `but this control plane's key (from ${box.source}) has id ${box.keyId}: set HANGAR_CP_SECRET_KEY to the ` +
      "key the store was started with (the same on every control plane sharing the store)",
  );
}

/**
 * Replaces each secret value of at least 4 characters in a log line by the mask (a build or an Agent Server
 * printing its environment must not store it in the logs).
 */
export function redactSecrets(message: string, secrets: Secret[]): string {
  let out = message;
  const values = secrets
    .map((s) => s.value)
    .filter((v) => typeof v === "string" && v.length >= 4)
    .sort((a, b) => b.length - a.length);
  for (const v of values) if (out.includes(v)) out = out.split(v).join("********");
  return out;
}
