// AES-GCM encryption at rest with a key ring: the current key encrypts, older keys still decrypt. Every sealed
// value names the key that sealed it (a short id derived from the key, never the key), so a value under an old
// key is recognised (and re-sealed by the caller) and a value under an unknown key is refused by name, never
// turned into garbage.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import { StartupError } from "../errors.js";

/**
 * A key cannot be used, or data needs a key that is not configured: the message is meant for the operator (it
 * names the variable and the key's id). A start fails with it in one line.
 */
export class EncryptionKeyError extends StartupError {}

/**
 * A sealed value, text or bytes alike: `$hgenc1:<key id>:<base64url(iv | tag | ciphertext)>`, ASCII, so that it
 * survives being stored as text or cast to text by SQL (LangGraph's SQLite saver reads pending writes so).
 */
export const TEXT_PREFIX = "$hgenc1:";
const PREFIX_BYTES = Buffer.from(TEXT_PREFIX, "latin1");
const ID_BYTES = 8;
const IV_BYTES = 12;
const TAG_BYTES = 16;

const CIPHERS: Record<number, "aes-128-gcm" | "aes-192-gcm" | "aes-256-gcm"> = {
  16: "aes-128-gcm",
  24: "aes-192-gcm",
  32: "aes-256-gcm",
};

/**
 * The bytes of a key as the variable gives it: its text's own bytes when they are 16, 24 or 32 (as the
 * official server reads LANGGRAPH_AES_KEY), else hex digits of 24 or 32 bytes (48 or 64 digits), else base64 of
 * 16, 24 or 32 bytes (`openssl rand -base64 32`).
 */
export function parseAesKey(raw: string, name: string): Buffer {
  const utf8 = Buffer.from(raw, "utf8");
  if (CIPHERS[utf8.length]) return utf8;
  const v = raw.trim();
  const trimmed = Buffer.from(v, "utf8");
  if (CIPHERS[trimmed.length]) return trimmed;
  if (/^[0-9a-fA-F]+$/.test(v) && CIPHERS[v.length / 2]) return Buffer.from(v, "hex");
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(v)) {
    const b = Buffer.from(v.replace(/-/g, "+").replace(/_/g, "/"), "base64");
    if (CIPHERS[b.length]) return b;
  }
  throw new EncryptionKeyError(
    `${name} must be a key of 16, 24 or 32 bytes (AES-128, -192 or -256): that many characters, or hex ` +
      `digits, or base64 (e.g. \`openssl rand -base64 32\`); got ${utf8.length} bytes that are none of these`,
  );
}

/** The public id of a key (16 hex digits): stored beside each value it seals. */
export function keyIdOf(key: Buffer): string {
  return createHash("sha256")
    .update("hangar-aes-key-id\0")
    .update(key)
    .digest()
    .subarray(0, ID_BYTES)
    .toString("hex");
}

interface Key {
  id: string;
  bytes: Buffer;
  cipher: (typeof CIPHERS)[number];
}

/** What opening a sealed value found: the plaintext, and whether it was sealed with an older key than the current one. */
export interface Opened<T> {
  plain: T;
  stale: boolean;
}

export class KeyRing {
  readonly current: Key;
  private byId = new Map<string, Key>();

  /**
   * @param current the key new values are sealed with (and its variable's name, for messages)
   * @param older keys that only decrypt (rotation), newest first
   */
  constructor(
    current: Buffer,
    older: Buffer[] = [],
    readonly names = { current: "LANGGRAPH_AES_KEY", older: "HANGAR_AES_PREVIOUS_KEYS" },
  ) {
    this.current = this.add(current);
    for (const k of older) this.add(k);
  }

  private add(bytes: Buffer): Key {
    const key: Key = { id: keyIdOf(bytes), bytes, cipher: CIPHERS[bytes.length]! };
    if (!this.byId.has(key.id)) this.byId.set(key.id, key);
    return key;
  }

  /** The ids of every key of the ring, current first. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  private seal(plain: Buffer): Buffer {
    const k = this.current;
    const iv = randomBytes(IV_BYTES);
    const c = createCipheriv(k.cipher, k.bytes, iv);
    const ct = Buffer.concat([c.update(plain), c.final()]);
    return Buffer.concat([iv, c.getAuthTag(), ct]);
  }

  private open(id: string, sealed: Buffer, what: string): Buffer {
    const k = this.byId.get(id);
    if (!k) throw unknownKey(id, this, what);
    try {
      const d = createDecipheriv(k.cipher, k.bytes, sealed.subarray(0, IV_BYTES));
      d.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([d.update(sealed.subarray(IV_BYTES + TAG_BYTES)), d.final()]);
    } catch {
      throw new EncryptionKeyError(`${what} cannot be decrypted with the key of id ${id}: it was altered`);
    }
  }

  sealText(plain: string): string {
    return this.sealBuffer(Buffer.from(plain, "utf8"));
  }

  /** Bytes sealed, as the ASCII text of the envelope. */
  sealBuffer(plain: Uint8Array): string {
    const b = Buffer.from(plain.buffer, plain.byteOffset, plain.byteLength);
    return `${TEXT_PREFIX}${this.current.id}:${this.seal(b).toString("base64url")}`;
  }

  /** The plaintext of a sealed text; undefined when `s` is not sealed (a plain value from before encryption). */
  openText(s: string, what = "a stored value"): Opened<string> | undefined {
    const opened = this.openBuffer(s, what);
    return opened && { plain: opened.plain.toString("utf8"), stale: opened.stale };
  }

  /** The plaintext bytes of a sealed value (given as text, or as the bytes of that text); undefined when not sealed. */
  openBuffer(sealed: string | Uint8Array, what = "a stored value"): Opened<Buffer> | undefined {
    const s =
      typeof sealed === "string"
        ? isSealedText(sealed) && sealed
        : isSealedBytes(sealed) &&
          Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).toString("latin1");
    if (!s) return undefined;
    const id = s.slice(TEXT_PREFIX.length, TEXT_PREFIX.length + 2 * ID_BYTES);
    const body = Buffer.from(s.slice(TEXT_PREFIX.length + 2 * ID_BYTES + 1), "base64url");
    return { plain: this.open(id, body, what), stale: id !== this.current.id };
  }
}

export function isSealedText(v: unknown): v is string {
  return typeof v === "string" && v.startsWith(TEXT_PREFIX);
}

/** Whether bytes are the text of a sealed value. */
export function isSealedBytes(data: Uint8Array): boolean {
  if (data.byteLength < PREFIX_BYTES.length + 2 * ID_BYTES + 1) return false;
  for (let i = 0; i < PREFIX_BYTES.length; i++) if (data[i] !== PREFIX_BYTES[i]) return false;
  return true;
}

/** The id of the key a sealed value names (text, or its bytes); undefined when not sealed. */
export function sealedKeyId(v: unknown): string | undefined {
  if (isSealedText(v)) return v.slice(TEXT_PREFIX.length, TEXT_PREFIX.length + 2 * ID_BYTES);
  if (v instanceof Uint8Array && isSealedBytes(v)) {
    return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString(
      "latin1",
      PREFIX_BYTES.length,
      PREFIX_BYTES.length + 2 * ID_BYTES,
    );
  }
  return undefined;
}

function unknownKey(id: string, ring: KeyRing, what: string): EncryptionKeyError {
  return new EncryptionKeyError(
    `${what} was encrypted with the key of id ${id}, which is neither ${ring.names.current} (id ` +
      `${ring.current.id}) nor one of ${ring.names.older}: set the key it was written with`,
  );
}

/** The ring of LANGGRAPH_AES_KEY and the older keys, or null when no key is set. */
export function keyRingOf(current: string | undefined, older: string[]): KeyRing | null {
  if (!current) {
    if (older.length) {
      throw new EncryptionKeyError("HANGAR_AES_PREVIOUS_KEYS is set but LANGGRAPH_AES_KEY is not");
    }
    return null;
  }
  return new KeyRing(
    parseAesKey(current, "LANGGRAPH_AES_KEY"),
    older.map((k, i) => parseAesKey(k, `HANGAR_AES_PREVIOUS_KEYS (key ${i + 1})`)),
  );
}
