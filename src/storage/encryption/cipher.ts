// What storage encrypts, and how: a conversation's content (thread values and interrupts, run inputs, a cron's
// run, checkpoint blobs and pending writes, the run's own part of checkpoint metadata) is sealed whole; the JSON
// keys named by LANGGRAPH_AES_JSON_KEYS are sealed one by one wherever they appear in the JSON that stays
// searchable (metadata, config, context, store values). Values written before encryption was on stay readable.
import { InvalidInputError } from "../../lib/errors.js";
import { isSealedBytes, isSealedText, type KeyRing } from "../../lib/crypto/aes.js";

/** Where a value lives: told to custom encryption handlers and named in errors. */
export interface Where {
  model: "assistant" | "thread" | "run" | "cron" | "store" | "checkpoint";
  field: string;
}

/** Keys the official server never encrypts (the platform reads them): never sealed, whatever the settings. */
export const SYSTEM_KEYS: ReadonlySet<string> = new Set([
  "langgraph_version",
  "langgraph_api_version",
  "langgraph_plan",
  "langgraph_host",
  "langgraph_api_url",
  "langgraph_request_id",
  "langgraph_auth_user_id",
  "langgraph_auth_permissions",
]);

/**
 * Keys of checkpoint metadata kept in the clear (LangGraph's own, and the run's identifiers), so history can
 * still be filtered by them; the rest (the run's metadata, the caller's configurable values) is sealed.
 */
export const CHECKPOINT_PLAIN_KEYS: ReadonlySet<string> = new Set([
  "source",
  "step",
  "parents",
  "thread_id",
  "graph_id",
  "assistant_id",
  "run_id",
  "run_attempt",
  "user_id",
  ...SYSTEM_KEYS,
]);

/** The key of checkpoint metadata holding its sealed part. */
export const SEALED_METADATA_KEY = "$hangar_sealed";

/** Told when a value opened was sealed with an older key (so that its row can be sealed again). */
export type StaleListener = () => void;

/** Encryption at rest as storage uses it. Every method passes values it cannot open through unchanged. */
export interface StorageCipher {
  /** The key ring (null for custom encryption, whose keys Hangar does not know). */
  readonly ring: KeyRing | null;
  /** A content value sealed whole (a JSON value: it becomes a string). */
  sealValue(value: unknown, where: Where): Promise<unknown>;
  /** The JSON keys to seal sealed, wherever they appear in `value`. */
  sealKeys<T>(value: T, where: Where): Promise<T>;
  /** Every sealed value in `value` (whole, or one of its keys at any depth) opened. */
  open<T>(value: T, where: Where, stale?: StaleListener): Promise<T>;
  /** A value sealed whole opened (not walked: content is large, and its keys are never sealed one by one). */
  openValue<T>(value: T, where: Where, stale?: StaleListener): Promise<T>;
  /** Bytes sealed: the bytes of an ASCII envelope (they survive SQL's casts to text). */
  sealBytes(data: Uint8Array, where: Where): Promise<Uint8Array>;
  /** Sealed bytes (or the envelope as text, as SQL's casts give it) opened; others returned as they are. */
  openBytes(data: Uint8Array | string, where: Where, stale?: StaleListener): Promise<Uint8Array | string>;
  /** Checkpoint metadata with its plain keys kept and the rest sealed under SEALED_METADATA_KEY. */
  sealCheckpointMetadata<T extends Record<string, unknown>>(metadata: T): Promise<T>;
  openCheckpointMetadata<T>(metadata: T, stale?: StaleListener): Promise<T>;
  /**
   * Refuses (InvalidInputError naming `field`) a filter on a key this cipher seals, which can never match: the
   * official server documents that encrypted fields cannot be searched.
   */
  checkFilter(filter: unknown, field: string, where: Where): void;
  /** Refuses any filter of `field` (its value is sealed whole). */
  refuseFilter(filter: unknown, field: string, where: Where): void;
}

/** A JSON object: not null, an array or bytes. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);

/** LANGGRAPH_AES_KEY's cipher: AES-GCM with the ring's current key, the named JSON keys sealed one by one. */
export class AesStorageCipher implements StorageCipher {
  private jsonKeys: Set<string>;

  constructor(
    readonly ring: KeyRing,
    jsonKeys: readonly string[] = [],
  ) {
    this.jsonKeys = new Set(jsonKeys.filter((k) => !SYSTEM_KEYS.has(k)));
  }

  async sealValue(value: unknown): Promise<unknown> {
    if (value === undefined || isSealedText(value)) return value;
    return this.ring.sealText(JSON.stringify(value));
  }

  async sealKeys<T>(value: T): Promise<T> {
    return this.jsonKeys.size ? (this.sealKeysSync(value, 0) as T) : value;
  }

  private sealKeysSync(v: unknown, depth: number): unknown {
    if (depth > 64 || typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      v.forEach((x, i) => {
        const s = this.sealKeysSync(x, depth + 1);
        if (s !== x) (out ??= v.slice())[i] = s;
      });
      return out ?? v;
    }
    if (!isObject(v)) return v;
    let out: Record<string, unknown> | undefined;
    for (const [k, x] of Object.entries(v)) {
      const s =
        this.jsonKeys.has(k) && x !== undefined && !isSealedText(x)
          ? this.ring.sealText(JSON.stringify(x))
          : this.sealKeysSync(x, depth + 1);
      if (s !== x) (out ??= { ...v })[k] = s;
    }
    return out ?? v;
  }

  async open<T>(value: T, where: Where, stale?: StaleListener): Promise<T> {
    return this.openSync(value, where, stale, 0) as T;
  }

  async openValue<T>(value: T, where: Where, stale?: StaleListener): Promise<T> {
    return typeof value === "string" ? (this.openSync(value, where, stale, 0) as T) : value;
  }

  private openSync(v: unknown, where: Where, stale: StaleListener | undefined, depth: number): unknown {
    if (typeof v === "string") {
      const opened = this.ring.openText(v, `the ${where.field} of a ${where.model}`);
      if (!opened) return v;
      if (opened.stale) stale?.();
      // Sealed key values inside a whole sealed value do not occur (content is sealed whole, keys elsewhere).
      return JSON.parse(opened.plain);
    }
    if (depth > 64 || typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      v.forEach((x, i) => {
        const o = this.openSync(x, where, stale, depth + 1);
        if (o !== x) (out ??= v.slice())[i] = o;
      });
      return out ?? v;
    }
    if (!isObject(v)) return v;
    let out: Record<string, unknown> | undefined;
    for (const [k, x] of Object.entries(v)) {
      const o = this.openSync(x, where, stale, depth + 1);
      if (o !== x) (out ??= { ...v })[k] = o;
    }
    return out ?? v;
  }

  async sealBytes(data: Uint8Array): Promise<Uint8Array> {
    return isSealedBytes(data) ? data : Buffer.from(this.ring.sealBuffer(data), "latin1");
  }

  async openBytes(
    data: Uint8Array | string,
    where: Where,
    stale?: StaleListener,
  ): Promise<Uint8Array | string> {
    const opened = this.ring.openBuffer(data, `a ${where.field} of a ${where.model}`);
    if (!opened) return data;
    if (opened.stale) stale?.();
    return opened.plain;
  }

  async sealCheckpointMetadata<T extends Record<string, unknown>>(metadata: T): Promise<T> {
    return sealCheckpointMetadataWith(
      metadata,
      (k) => CHECKPOINT_PLAIN_KEYS.has(k) && !this.jsonKeys.has(k),
      (json) => this.ring.sealText(json),
    );
  }

  async openCheckpointMetadata<T>(metadata: T, stale?: StaleListener): Promise<T> {
    return openCheckpointMetadataWith(metadata, (s) => {
      const opened = this.ring.openText(s, "the metadata of a checkpoint");
      if (!opened) return undefined;
      if (opened.stale) stale?.();
      return JSON.parse(opened.plain) as Record<string, unknown>;
    });
  }

  checkFilter(filter: unknown, field: string, where: Where): void {
    if (!this.jsonKeys.size || !isObject(filter)) return;
    const hit = findKey(filter, this.jsonKeys, 0);
    if (hit) {
      throw new InvalidInputError(
        `${field} cannot filter on '${hit}': it is encrypted at rest (LANGGRAPH_AES_JSON_KEYS) in ${where.model}s, ` +
          "and encrypted fields cannot be searched",
        { field },
      );
    }
  }

  refuseFilter(filter: unknown, field: string, where: Where): void {
    refuseWholeFilter(filter, field, where);
  }
}

/** Refuses a non-empty filter on a field whose value is sealed whole. */
export function refuseWholeFilter(filter: unknown, field: string, where: Where): void {
  if (filter === undefined || filter === null) return;
  if (isObject(filter) && !Object.keys(filter).length) return;
  throw new InvalidInputError(
    `${field} cannot be filtered on: the ${where.field} of ${where.model}s is encrypted at rest ` +
      "(LANGGRAPH_AES_KEY), and encrypted fields cannot be searched",
    { field },
  );
}

/**
 * Checkpoint metadata with the keys `keepPlain` names kept and the rest sealed by `seal` (given its JSON) under
 * SEALED_METADATA_KEY; metadata sealed already is returned as it is.
 */
export async function sealCheckpointMetadataWith<T extends Record<string, unknown>>(
  metadata: T,
  keepPlain: (key: string) => boolean,
  seal: (json: string) => string | Promise<string>,
): Promise<T> {
  if (!isObject(metadata) || SEALED_METADATA_KEY in metadata) return metadata;
  const plain: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(metadata)) {
    if (keepPlain(k)) plain[k] = v;
    else if (v !== undefined) rest[k] = v;
  }
  if (Object.keys(rest).length) plain[SEALED_METADATA_KEY] = await seal(JSON.stringify(rest));
  return plain as T;
}

/** Checkpoint metadata with its sealed part (if any) opened by `open` and merged back. */
export async function openCheckpointMetadataWith<T>(
  metadata: T,
  open: (
    sealed: string,
  ) => Record<string, unknown> | undefined | Promise<Record<string, unknown> | undefined>,
): Promise<T> {
  if (!isObject(metadata)) return metadata;
  const sealed = metadata[SEALED_METADATA_KEY];
  if (typeof sealed !== "string") return metadata;
  const rest = await open(sealed);
  if (!rest) return metadata;
  const out: Record<string, unknown> = { ...rest, ...metadata };
  delete out[SEALED_METADATA_KEY];
  return out as T;
}

function findKey(v: unknown, keys: Set<string>, depth: number): string | undefined {
  if (depth > 64 || typeof v !== "object" || v === null) return undefined;
  for (const [k, x] of Object.entries(v)) {
    if (keys.has(k)) return k;
    const inner = findKey(x, keys, depth + 1);
    if (inner) return inner;
  }
  return undefined;
}
