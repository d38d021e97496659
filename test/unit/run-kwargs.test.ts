// Reading run records' kwargs (src/runs/kwargs.ts): the official shape Hangar writes, and the shape earlier Hangar
// versions wrote (`stream_resumable`, `durability` always), which records in existing databases still have.
import { describe, expect, it } from "vitest";
import { durabilityOf, isResumable } from "../../src/runs/kwargs.ts";
import type { RunKwargs } from "../../src/runs/executor.ts";

const base: RunKwargs = { config: { configurable: {} }, stream_mode: ["values"], subgraphs: false };

describe("run kwargs", () => {
  it("reads whether a run is resumable from the official `resumable` and the older `stream_resumable`", () => {
    expect(isResumable({ ...base, resumable: true })).toBe(true);
    expect(isResumable({ ...base, resumable: false })).toBe(false);
    expect(isResumable({ ...base, stream_resumable: true, command: null, webhook: null })).toBe(true);
    expect(isResumable({ ...base, stream_resumable: false })).toBe(false);
    expect(isResumable(base)).toBe(false);
    expect(isResumable({})).toBe(false);
  });

  it("reads a run's durability, the default when the record leaves it out", () => {
    expect(durabilityOf(base)).toBe("async");
    expect(durabilityOf({ ...base, durability: "exit" })).toBe("exit");
    expect(durabilityOf({ ...base, durability: "async" })).toBe("async");
  });
});
