// Encryption as both checkpointers (SQLite, PostgreSQL) apply it: their serializer seals what LangGraph
// serializes; checkpoint metadata keeps its plain keys (LangGraph's own and the run's identifiers, which history
// filters use) and has the rest sealed in one value.
import type { CheckpointMetadata, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { InvalidInputError } from "../../lib/errors.js";
import { CHECKPOINT_PLAIN_KEYS, type StorageCipher } from "./cipher.js";
import { EncryptingSerde } from "./serde.js";

export class CheckpointCrypto {
  readonly serde: EncryptingSerde;
  /** Set when a value opened was sealed with an older key (read and cleared by `staleRead`). */
  private sawStale = false;

  /** @param onStaleThread told of a thread whose checkpoints hold values sealed with an older key */
  constructor(
    private cipher: StorageCipher,
    private onStaleThread?: (threadId: string) => void,
  ) {
    this.serde = new EncryptingSerde(cipher, undefined, () => (this.sawStale = true));
  }

  /** After a read of the thread's checkpoints: has it seen a value under an older key? Then it is sealed again. */
  staleRead(threadId: unknown): void {
    if (!this.sawStale) return;
    this.sawStale = false;
    if (typeof threadId === "string") this.onStaleThread?.(threadId);
  }

  /** Metadata to store: sealed but for its plain keys, and marked to be serialized without more encryption. */
  async sealMetadata(metadata: CheckpointMetadata): Promise<CheckpointMetadata> {
    const sealed = await this.cipher.sealCheckpointMetadata(metadata as Record<string, unknown>);
    return this.serde.passPlain(sealed) as CheckpointMetadata;
  }

  async openMetadata<T>(metadata: T): Promise<T> {
    return this.cipher.openCheckpointMetadata(metadata, () => (this.sawStale = true));
  }

  async openTuple(tuple: CheckpointTuple | undefined): Promise<CheckpointTuple | undefined> {
    if (tuple) {
      tuple.metadata = await this.openMetadata(tuple.metadata);
      this.staleRead(tuple.config.configurable?.thread_id);
    }
    return tuple;
  }

  /** A history filter may name only the plain keys: the others are sealed and could never match. */
  checkFilter(filter: Record<string, unknown> | undefined): void {
    for (const key of Object.keys(filter ?? {})) {
      if (filter![key] === undefined || CHECKPOINT_PLAIN_KEYS.has(key)) continue;
      throw new InvalidInputError(
        `filter cannot name the checkpoint metadata key '${key}': with encryption at rest (LANGGRAPH_AES_KEY) ` +
          `only ${[...CHECKPOINT_PLAIN_KEYS].slice(0, 9).join(", ")} and the langgraph_* keys stay searchable`,
        { field: "filter" },
      );
    }
  }
}
