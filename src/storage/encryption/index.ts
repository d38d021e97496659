// Encryption at rest from its settings: the cipher storage uses, and the record of the keys that sealed data.
import { EncryptionKeyError, keyRingOf } from "../../lib/crypto/aes.js";
import { AesStorageCipher, type StorageCipher } from "./cipher.js";

export { EncryptionKeyError } from "../../lib/crypto/aes.js";
export type { StorageCipher } from "./cipher.js";

/** The settings of encryption at rest, as plain data (graph threads receive it). */
export interface EncryptionSpec {
  /** LANGGRAPH_AES_KEY */
  aesKey?: string;
  /** LANGGRAPH_AES_JSON_KEYS */
  jsonKeys: string[];
  /** HANGAR_AES_PREVIOUS_KEYS */
  previousKeys: string[];
  /** langgraph.json's `encryption.path` (custom handlers), and the project's directory it is relative to. */
  customPath?: string;
  projectDir?: string;
}

/** The AES settings of a server's settings (LANGGRAPH_AES_KEY, LANGGRAPH_AES_JSON_KEYS, HANGAR_AES_PREVIOUS_KEYS). */
export function encryptionSpecOf(server: {
  aesKey?: string;
  aesJsonKeys: string[];
  aesPreviousKeys: string[];
}): EncryptionSpec {
  return { aesKey: server.aesKey, jsonKeys: server.aesJsonKeys, previousKeys: server.aesPreviousKeys };
}

/** The cipher of these settings, custom handlers imported; null when encryption at rest is off. */
export async function loadCipher(spec: EncryptionSpec | null | undefined): Promise<StorageCipher | null> {
  if (!spec?.customPath) return cipherOf(spec);
  if (spec.aesKey || spec.jsonKeys.length) {
    throw new EncryptionKeyError(
      "langgraph.json's encryption.path and LANGGRAPH_AES_KEY (or LANGGRAPH_AES_JSON_KEYS) are both set: " +
        "choose one (custom handlers can use AES themselves)",
    );
  }
  const { loadCustomCipher } = await import("./custom.js");
  return loadCustomCipher(spec.projectDir ?? process.cwd(), spec.customPath);
}

/** The cipher of these settings; null when encryption at rest is off. */
export function cipherOf(spec: EncryptionSpec | null | undefined): StorageCipher | null {
  if (!spec) return null;
  const ring = keyRingOf(spec.aesKey || undefined, spec.previousKeys);
  if (!ring) {
    if (spec.jsonKeys.length) {
      throw new EncryptionKeyError("LANGGRAPH_AES_JSON_KEYS is set but LANGGRAPH_AES_KEY is not");
    }
    return null;
  }
  return new AesStorageCipher(ring, spec.jsonKeys);
}

/**
 * What a start must do about the keys that sealed data in a database (`used`, from its `encryption_keys` table):
 * throws, naming the key, when one is missing (never garbage later); returns the current key's id when it must be
 * recorded.
 */
export function checkKeys(used: string[], cipher: StorageCipher | null, where: string): string | undefined {
  const ring = cipher?.ring;
  if (!cipher) {
    if (used.length) {
      throw new EncryptionKeyError(
        `the data in ${where} is encrypted (key id ${used.join(", ")}), but LANGGRAPH_AES_KEY is not set: ` +
          "set it to the key the data was written with",
      );
    }
    return undefined;
  }
  if (!ring) return undefined;
  const missing = used.filter((id) => !ring.has(id));
  if (missing.length) {
    const older = ring.ids().slice(1);
    throw new EncryptionKeyError(
      `the data in ${where} was encrypted with the key of id ${missing.join(", ")}, but LANGGRAPH_AES_KEY has id ` +
        `${ring.current.id}${older.length ? ` and HANGAR_AES_PREVIOUS_KEYS ${older.join(", ")}` : ""}: set ` +
        "LANGGRAPH_AES_KEY to the key the data was written with (to rotate keys, name the old one in " +
        "HANGAR_AES_PREVIOUS_KEYS)",
    );
  }
  return used.includes(ring.current.id) ? undefined : ring.current.id;
}
