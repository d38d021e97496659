// The checkpointers' serializer with encryption: what LangGraph's serializer produces (checkpoints, channel
// values, pending writes) is sealed before the saver stores it and opened before it is parsed. Checkpoint metadata
// passes in the clear (the savers filter on it in SQL): its own sealed part is made by the saver (see
// StorageCipher.sealCheckpointMetadata) and the object is marked with `passPlain`.
import { JsonPlusSerializer, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { StaleListener, StorageCipher } from "./cipher.js";

const WHERE = { model: "checkpoint", field: "data" } as const;

export class EncryptingSerde implements SerializerProtocol {
  private plain = new WeakSet<object>();

  constructor(
    private cipher: StorageCipher,
    private inner: SerializerProtocol = new JsonPlusSerializer(),
    /** Told when a value opened was sealed with an older key. */
    private stale?: StaleListener,
  ) {}

  /** Marks an object to be serialized without encryption (checkpoint metadata, sealed by the saver). */
  passPlain<T extends object>(obj: T): T {
    this.plain.add(obj);
    return obj;
  }

  async dumpsTyped(data: unknown): Promise<[string, Uint8Array]> {
    const [type, bytes] = await this.inner.dumpsTyped(data);
    if (typeof data === "object" && data !== null && this.plain.has(data)) return [type, bytes];
    return [type, await this.cipher.sealBytes(bytes, WHERE)];
  }

  async loadsTyped(type: string, data: Uint8Array | string): Promise<unknown> {
    return this.inner.loadsTyped(type, await this.cipher.openBytes(data, WHERE, this.stale));
  }
}
