// The stream-mode registry (src/runs/stream-modes.ts): what a run asks of LangGraph for its modes, which events a
// join with modes receives, and what a thread stream's modes let through.
import { describe, expect, it } from "vitest";
import { graphStreaming, joinFilter, threadStreamFilter } from "../../src/runs/stream-modes.ts";
import type { StreamEvent } from "../../src/streams/channel.ts";

const ev = (event: string, data: unknown = {}): StreamEvent => ({ id: 0, event, data: JSON.stringify(data) });

describe("stream modes", () => {
  it("asks LangGraph for the modes' own modes, always values, tasks and checkpoints, and callbacks only where needed", () => {
    expect(graphStreaming(["updates"])).toEqual({
      graphModes: new Set(["values", "tasks", "checkpoints", "updates"]),
      callbacks: false,
      protocol: false,
    });
    expect(graphStreaming(["messages-tuple", "custom"]).graphModes).toEqual(
      new Set(["values", "tasks", "checkpoints", "messages", "custom"]),
    );
    expect(graphStreaming(["messages"]).callbacks).toBe(true);
    expect(graphStreaming(["events"]).callbacks).toBe(true);
    expect(graphStreaming(["protocol"]).protocol).toBe(true);
  });

  it("lets a join with modes receive those modes' events (subgraphs' too), metadata and errors", () => {
    const keep = joinFilter(["messages", "updates"])!;
    const kept = [
      "metadata",
      "error",
      "updates",
      "updates|child:1",
      "messages/partial",
      "messages/complete",
      "messages/metadata",
      "values",
      "messages",
      "custom",
    ].filter((e) => keep(ev(e)));
    expect(kept).toEqual([
      "metadata",
      "error",
      "updates",
      "updates|child:1",
      "messages/partial",
      "messages/complete",
      "messages/metadata",
    ]);
    expect(joinFilter(["messages-tuple"])!(ev("messages|sub:2"))).toBe(true);
    expect(joinFilter(undefined)).toBeUndefined();
    expect(joinFilter([])).toBeUndefined();
  });

  it("splits a thread's log by the thread stream's modes", () => {
    const start = ev("metadata", { run_id: "r", attempt: 1 });
    const end = ev("metadata", { run_id: "r", status: "run_done", run_status: "success" });
    const events = [start, ev("values"), ev("state_update"), end, ev("protocol")];
    const through = (modes: string[]) =>
      events
        .filter(threadStreamFilter(new Set(modes as never)))
        .map((e) => e.event + (e === end ? ":end" : ""));
    expect(through(["run_modes"])).toEqual(["metadata", "values"]);
    expect(through(["lifecycle"])).toEqual(["metadata", "metadata:end"]);
    expect(through(["state_update"])).toEqual(["state_update"]);
  });
});
