// The run's values events serialized once, and the run's end (its output, its thread's state) taken from that text
// (src/runs/graph-runner.ts ValuesText): the same JSON a fresh serialization gives, and a fresh one where the
// values are not the last event's.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { describe, expect, it } from "vitest";
import { ValuesText } from "../../src/runs/graph-runner.ts";
import { RawJson, toPlain } from "../../src/lib/serde.ts";

function emitted(): { text: ValuesText; events: [string, unknown][]; emit: (e: string, d: unknown) => void } {
  const text = new ValuesText();
  const events: [string, unknown][] = [];
  return { text, events, emit: text.emitting((e, d) => events.push([e, d])) };
}

describe("ValuesText", () => {
  const messages = [
    new HumanMessage({ content: "hi", id: "h1" }),
    new AIMessage({ content: "hello", id: "a1" }),
  ];

  it("publishes a root values event as its JSON text, other events as they are", () => {
    const { events, emit } = emitted();
    const values = { messages, n: 1 };
    emit("values", values);
    emit("values|child:1", values);
    emit("updates", { node: { n: 1 } });
    expect(events[0][1]).toBeInstanceOf(RawJson);
    expect(JSON.parse((events[0][1] as RawJson).json)).toEqual(toPlain(values));
    expect((events[0][1] as RawJson).json).toContain('"type":"human"');
    expect(events[1][1]).toBe(values);
    expect(events[2][1]).toEqual({ node: { n: 1 } });
  });

  it("gives the last event's values from its text, as a fresh copy each time", () => {
    const { text, emit } = emitted();
    const values = { messages, n: 1 };
    emit("values", values);
    const a = text.plain(values);
    const b = text.plain({ ...values });
    expect(a).toEqual(toPlain(values));
    expect(b).toEqual(a);
    expect(b).not.toBe(a);
  });

  it("serializes afresh values that are not the last event's (another key, another object under a key)", () => {
    const { text, emit } = emitted();
    emit("values", { messages, n: 1 });
    const more = { messages: [...messages, new HumanMessage({ content: "again", id: "h2" })], n: 1 };
    expect(text.plain(more)).toEqual(toPlain(more));
    expect(text.plain({ messages, n: 2 })).toEqual({ messages: toPlain(messages), n: 2 });
    expect(text.plain({ messages, n: 1, extra: true })).toEqual({
      messages: toPlain(messages),
      n: 1,
      extra: true,
    });
    expect(text.plain({ messages })).toEqual({ messages: toPlain(messages) });
    expect(text.plain(undefined)).toBeUndefined();
  });

  it("serializes the values when no event was emitted (a run that streams no values)", () => {
    const { text } = emitted();
    expect(text.plain({ messages })).toEqual({ messages: toPlain(messages) });
  });
});
