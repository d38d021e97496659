// End-to-end: the run event log. `stream_resumable: true` keeps a run's events so that
// GET /threads/{id}/runs/{run_id}/stream with `Last-Event-ID` resumes exactly after that event and `-1`
// replays all; several clients can join one run; without it a join streams only what comes after it.
import { describe, expect, it } from "vitest";
import {
  SseReader,
  drain,
  expectDistinctIds,
  iteratorOf,
  job,
  joinValues,
  readUntil,
  waitForLogEntry,
  waitForStatus,
  useRunsProject,
} from "../helpers/runs.ts";

interface Part {
  id?: string;
  event: string;
  data: any;
}

const { hangar, scratch } = useRunsProject();

/** What two deliveries of the same event have in common. */
const wire = (p: Part) => ({ id: p.id, event: p.event, data: p.data });

/** The step entries (`<label>:<i>`) named by `updates` events, in order. */
function stepsIn(parts: Part[]): string[] {
  return parts
    .filter((p) => p.event === "updates" && p.data?.step)
    .flatMap((p) => (p.data.step.log as string[]) ?? []);
}

/**
 * Resumes a run's stream after `lastEventId` and replays it whole (`-1`); expects `head` and the resumed
 * tail to be the replay, with distinct ids. Returns both.
 */
async function expectResumedIsReplay(
  threadId: string,
  runId: string,
  head: Part[],
  lastEventId: string | undefined,
) {
  const tail = (await drain(
    "the resumed stream",
    hangar.client.runs.joinStream(threadId, runId, { lastEventId }),
  )) as Part[];
  const full = (await drain(
    "the full replay",
    hangar.client.runs.joinStream(threadId, runId, { lastEventId: "-1" }),
  )) as Part[];
  expect([...head, ...tail].map(wire)).toEqual(full.map(wire));
  expectDistinctIds(full);
  return { tail, full };
}

describe("resumable run streams", () => {
  it("two clients joining a resumable run each receive every event, in order", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "r", steps: 4, delay_ms: 2, hold_at: 1, gate_file: gate.file }),
      streamMode: ["updates", "values"],
      streamResumable: true,
    });
    await waitForLogEntry(client, thread_id, "r:0");

    const acs = [new AbortController(), new AbortController()];
    const joins = acs.map((ac) =>
      iteratorOf(client.runs.joinStream(thread_id, run.run_id, { lastEventId: "-1", signal: ac.signal })),
    );
    try {
      // Both are connected (each got the replayed start) before the run goes on.
      const heads = await Promise.all(
        joins.map((it) => readUntil("the first replayed event", it, () => true)),
      );
      gate.open();
      const tails = await Promise.all(joins.map((it) => drain("the rest of the run", it)));
      const [a, b] = heads.map((h, i) => [...h, ...tails[i]] as Part[]);

      expect(a.map(wire)).toEqual(b.map(wire));
      expectDistinctIds(a);
      expect(a[0].event).toBe("metadata");
      expect(a[0].data.run_id).toBe(run.run_id);
      expect(stepsIn(a)).toEqual(["r:0", "r:1", "r:2", "r:3"]);
      const values = a.filter((p) => p.event === "values");
      expect(values.at(-1)!.data.log).toEqual(["r:0", "r:1", "r:2", "r:3"]);

      // The events are kept after the run ended: a later replay is the same list.
      expect((await waitForStatus(client, thread_id, run.run_id, ["success"])).status).toBe("success");
      const replay = (await drain(
        "a replay after the end",
        client.runs.joinStream(thread_id, run.run_id, { lastEventId: "-1" }),
      )) as Part[];
      expect(replay.map(wire)).toEqual(a.map(wire));
    } finally {
      for (const ac of acs) ac.abort();
    }
  });

  it("a client that drops after event N and reconnects with Last-Event-ID N gets N+1 onward, no gap, no duplicate", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const ac = new AbortController();
    let runId = "";
    const stream = client.runs.stream(thread_id, "steps", {
      input: job({ label: "d", steps: 5, delay_ms: 2, hold_at: 2, gate_file: gate.file }),
      streamMode: ["updates", "values"],
      streamResumable: true,
      onDisconnect: "continue",
      signal: ac.signal,
      onRunCreated: (meta) => (runId = meta.run_id),
    });
    const iterator = iteratorOf(stream);
    const N = 4;
    const head = (await readUntil("the first events", iterator, (_, i) => i === N - 1)) as Part[];
    ac.abort();
    await iterator.return?.(undefined).catch(() => undefined);
    expect(runId).not.toBe("");
    const lastId = head[N - 1].id;
    expect(lastId, "the streamed events carry ids").toBeDefined();

    gate.open();
    const { tail, full } = await expectResumedIsReplay(thread_id, runId, head, lastId);
    expect(tail.length).toBeGreaterThan(0);
    expect(stepsIn(full)).toEqual(["d:0", "d:1", "d:2", "d:3", "d:4"]);

    // The same on the wire: the Last-Event-ID header resumes right after that event.
    const raw = await SseReader.open(hangar.server.url, `/threads/${thread_id}/runs/${runId}/stream`, {
      "Last-Event-ID": lastId!,
    });
    try {
      expect(raw.status).toBe(200);
      const rawTail = await raw.rest("the raw resumed stream");
      expect(rawTail.map((e) => ({ id: e.id, event: e.event, data: e.data }))).toEqual(tail.map(wire));
    } finally {
      raw.close();
    }
  });

  it("resuming a token stream (chat, messages-tuple) mid-way misses and repeats no token", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const ac = new AbortController();
    let runId = "";
    const iterator = iteratorOf(
      client.runs.stream(thread_id, "chat", {
        input: { messages: [{ type: "human", content: "hi" }] },
        streamMode: ["messages-tuple", "values"],
        streamResumable: true,
        signal: ac.signal,
        onRunCreated: (meta) => (runId = meta.run_id),
      }),
    );
    let tokens = 0;
    const head = (await readUntil(
      "the third token",
      iterator,
      (p) => (p.event === "messages" ? ++tokens : tokens) === 3,
    )) as Part[];
    ac.abort();
    await iterator.return?.(undefined).catch(() => undefined);

    const { full } = await expectResumedIsReplay(thread_id, runId, head, head.at(-1)!.id);
    const text = full
      .filter((p) => p.event === "messages")
      .map((p) => (p.data as [{ content: string }, unknown])[0].content)
      .join("");
    const final = full
      .filter((p) => p.event === "values")
      .at(-1)!
      .data.messages.at(-1).content as string;
    expect(text).toBe(final);
  });

  it("without stream_resumable, a join streams only what comes after it", async () => {
    const { client } = hangar;
    const { thread_id } = await client.threads.create();
    const gate = scratch.gate();
    const run = await client.runs.create(thread_id, "steps", {
      input: job({ label: "n", steps: 4, delay_ms: 2, hold_at: 2, gate_file: gate.file }),
      streamMode: ["updates"],
    });
    await waitForLogEntry(client, thread_id, "n:1");

    // Raw, to know the server answered (and subscribed us) before the run goes on.
    const join = await SseReader.open(hangar.server.url, `/threads/${thread_id}/runs/${run.run_id}/stream`);
    try {
      expect(join.status).toBe(200);
      gate.open();
      const events = (await join.rest("the joined stream")) as Part[];
      // The run's metadata event comes first all the same (as from the official server), once.
      expect(events[0]).toMatchObject({
        event: "metadata",
        data: { run_id: run.run_id, attempt: 1 },
      });
      expect(events.filter((e) => e.event === "metadata")).toHaveLength(1);
      const steps = stepsIn(events);
      expect(steps).toEqual(["n:2", "n:3"]);
      expect(events.some((e) => e.event === "updates" && e.data?.begin)).toBe(false);
    } finally {
      join.close();
    }
    expect(await joinValues(client, thread_id, run.run_id)).toMatchObject({
      log: ["n:0", "n:1", "n:2", "n:3"],
    });
  });
});
