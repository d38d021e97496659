// Custom encryption at rest: the project's own handlers (`"encryption": {"path": "./file.ts:name"}` in
// langgraph.json), as the official server offers them for Python graphs: per-tenant keys, a KMS. Hangar calls them
// with a context (the model and field of the value, and the metadata the project's `context` handler derives from
// the user the data is written for), and stores that metadata beside each value, so that a value is decrypted with
// the context it was encrypted with, whoever reads it (a background run, a cron, another user allowed to).
import { ConfigError } from "../../lib/errors.js";
import { encryptionUser } from "../../lib/encryption-context.js";
import { importProjectModule } from "../../lib/project-import.js";
import {
  CHECKPOINT_PLAIN_KEYS,
  isObject,
  openCheckpointMetadataWith,
  refuseWholeFilter,
  sealCheckpointMetadataWith,
  type StorageCipher,
  type Where,
} from "./cipher.js";

/** What a handler is told about the value it encrypts or decrypts. */
export interface EncryptionContext {
  /** "thread", "run", "assistant", "cron", "store" or "checkpoint". */
  model: string;
  /** The field: "values", "metadata", "kwargs", "data" (a checkpoint's blobs)... */
  field: string;
  /** What the project's `context` handler returned for the user the value was written for ({} without one). */
  metadata: Record<string, unknown>;
}

type Awaitable<T> = T | Promise<T>;

/** The object a project's encryption module exports. */
export interface EncryptionHandlers {
  /** The metadata of the context for a user (the request's, or a run's owner); keep it small and not secret. */
  context?: (user: unknown) => Awaitable<Record<string, unknown>>;
  encrypt: {
    blob: (ctx: EncryptionContext, data: Uint8Array) => Awaitable<Uint8Array>;
    /** Must keep the object's keys (only values may change): metadata is merged key by key. */
    json?: (ctx: EncryptionContext, data: Record<string, unknown>) => Awaitable<Record<string, unknown>>;
  };
  decrypt: {
    blob: (ctx: EncryptionContext, data: Uint8Array) => Awaitable<Uint8Array>;
    json?: (ctx: EncryptionContext, data: Record<string, unknown>) => Awaitable<Record<string, unknown>>;
  };
}

/** A value sealed by the project's handlers: `$hgcus1:<base64url(JSON context metadata)>:<base64url(bytes)>`. */
const PREFIX = "$hgcus1:";
const PREFIX_BYTES = Buffer.from(PREFIX, "latin1");
/** The key of a JSON object whose values the project's json handler encrypted: the context's metadata. */
export const CONTEXT_KEY = "$hangar_encryption";

const b64 = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("base64url");

export class CustomStorageCipher implements StorageCipher {
  readonly ring = null;
  private contexts = new WeakMap<object, Promise<Record<string, unknown>>>();

  constructor(
    private handlers: EncryptionHandlers,
    private source: string,
  ) {}

  /** The context metadata of the user data is written for now (memoized per user object). */
  private metadata(): Promise<Record<string, unknown>> {
    const user = encryptionUser();
    const derive = this.handlers.context;
    if (!derive || user === null || typeof user !== "object") return Promise.resolve({});
    let m = this.contexts.get(user);
    if (!m) {
      m = Promise.resolve(derive(user)).then((r) => (isObject(r) ? r : {}));
      this.contexts.set(user, m);
    }
    return m;
  }

  private async seal(plain: Uint8Array, where: Where): Promise<string> {
    const metadata = await this.metadata();
    const out = await this.handlers.encrypt.blob({ ...where, metadata }, plain);
    if (!(out instanceof Uint8Array)) {
      throw new ConfigError(`${this.source}: encrypt.blob must return a Uint8Array (or Buffer)`);
    }
    return `${PREFIX}${b64(Buffer.from(JSON.stringify(metadata)))}:${b64(out)}`;
  }

  private async unseal(sealed: string, where: Where): Promise<Buffer> {
    const rest = sealed.slice(PREFIX.length);
    const colon = rest.indexOf(":");
    const metadata = JSON.parse(Buffer.from(rest.slice(0, colon), "base64url").toString("utf8")) as Record<
      string,
      unknown
    >;
    const data = Buffer.from(rest.slice(colon + 1), "base64url");
    return Buffer.from(await this.handlers.decrypt.blob({ ...where, metadata }, data));
  }

  async sealValue(value: unknown, where: Where): Promise<unknown> {
    if (value === undefined || isSealed(value)) return value;
    return this.seal(Buffer.from(JSON.stringify(value), "utf8"), where);
  }

  async sealKeys<T>(value: T, where: Where): Promise<T> {
    const json = this.handlers.encrypt.json;
    if (!json || !isObject(value) || CONTEXT_KEY in value || !Object.keys(value).length) return value;
    const metadata = await this.metadata();
    const out = await json({ ...where, metadata }, { ...value });
    const before = Object.keys(value).sort().join("\0");
    if (!isObject(out) || Object.keys(out).sort().join("\0") !== before) {
      throw new ConfigError(`${this.source}: encrypt.json must return the object with the same keys`);
    }
    return { ...out, [CONTEXT_KEY]: metadata } as T;
  }

  async open<T>(value: T, where: Where): Promise<T> {
    if (typeof value === "string") return this.openValue(value, where);
    const json = this.handlers.decrypt.json;
    if (!isObject(value) || !(CONTEXT_KEY in value)) return value;
    const { [CONTEXT_KEY]: metadata, ...rest } = value;
    if (!json) return rest as T;
    return (await json({ ...where, metadata: isObject(metadata) ? metadata : {} }, rest)) as T;
  }

  async openValue<T>(value: T, where: Where): Promise<T> {
    if (!isSealed(value)) return value;
    return JSON.parse((await this.unseal(value, where)).toString("utf8")) as T;
  }

  async sealBytes(data: Uint8Array, where: Where): Promise<Uint8Array> {
    return isSealedBytes(data) ? data : Buffer.from(await this.seal(data, where), "latin1");
  }

  async openBytes(data: Uint8Array | string, where: Where): Promise<Uint8Array | string> {
    if (typeof data === "string") return isSealed(data) ? this.unseal(data, where) : data;
    if (!isSealedBytes(data)) return data;
    return this.unseal(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("latin1"), where);
  }

  async sealCheckpointMetadata<T extends Record<string, unknown>>(metadata: T): Promise<T> {
    return sealCheckpointMetadataWith(
      metadata,
      (k) => CHECKPOINT_PLAIN_KEYS.has(k),
      (json) => this.seal(Buffer.from(json, "utf8"), { model: "checkpoint", field: "metadata" }),
    );
  }

  async openCheckpointMetadata<T>(metadata: T): Promise<T> {
    return openCheckpointMetadataWith(metadata, async (s) =>
      isSealed(s)
        ? (JSON.parse(
            (await this.unseal(s, { model: "checkpoint", field: "metadata" })).toString("utf8"),
          ) as Record<string, unknown>)
        : undefined,
    );
  }

  /** Which keys the project's handler encrypts is its own business: filters pass (encrypted ones never match). */
  checkFilter(): void {}

  refuseFilter(filter: unknown, field: string, where: Where): void {
    refuseWholeFilter(filter, field, where);
  }
}

function isSealed(v: unknown): v is string {
  return typeof v === "string" && v.startsWith(PREFIX);
}

function isSealedBytes(data: Uint8Array): boolean {
  if (data.byteLength < PREFIX_BYTES.length) return false;
  for (let i = 0; i < PREFIX_BYTES.length; i++) if (data[i] !== PREFIX_BYTES[i]) return false;
  return true;
}

/** Imports the project's encryption handlers from `path` (`./file.ts:export`, relative to the project). */
export async function loadCustomCipher(projectDir: string, path: string): Promise<CustomStorageCipher> {
  const idx = path.lastIndexOf(":");
  const file = idx > 1 ? path.slice(0, idx) : path;
  const name = idx > 1 ? path.slice(idx + 1) : "default";
  const { resolve } = await import("node:path");
  const abs = resolve(projectDir, file);
  let mod: Record<string, unknown>;
  try {
    mod = await importProjectModule(abs);
  } catch (e) {
    throw new ConfigError(`encryption.path: cannot import ${abs}: ${(e as Error).message}`);
  }
  const h = mod[name] as EncryptionHandlers | undefined;
  const fn = (f: unknown) => typeof f === "function";
  if (!h || !fn(h.encrypt?.blob) || !fn(h.decrypt?.blob) || fn(h.encrypt?.json) !== fn(h.decrypt?.json)) {
    throw new ConfigError(
      `encryption.path: ${abs} must export '${name}' as { context?, encrypt: { blob, json? }, decrypt: { blob, json? } } ` +
        "(functions; json in both or neither)",
    );
  }
  return new CustomStorageCipher(h, `encryption.path ${path}`);
}
