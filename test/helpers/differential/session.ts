// A differential scenario's session (test/helpers/differential/): official SDK clients of one server, and the
// transcript of what each step of the scenario got back (a value, an HTTP error, or a stream's events).
import { randomUUID } from "node:crypto";
import type { Client } from "@langchain/langgraph-sdk";

/** An SDK call that failed with an HTTP status: its status and body, as the transcript keeps them. */
export interface RecordedError {
  error: { status: number; body: unknown };
}

export class Session {
  /** Step label to what it got; labels contain no "/" (the separator of difference paths). */
  readonly transcript: Record<string, unknown> = {};
  /** A fresh UUID per session, put in metadata (`scenario_run`) to find this session's own resources. */
  readonly nonce = randomUUID();

  /** A client without credentials. */
  readonly client: Client;

  /**
   * `url`: the server's; `connect(headers)`: a client of it sending those headers (none: no credentials).
   */
  constructor(
    readonly url: string,
    private readonly connect: (headers?: Record<string, string>) => Client,
  ) {
    this.client = connect();
  }

  /** A client sending `Authorization: Bearer <token>`. */
  as(token: string): Client {
    return this.connect({ authorization: `Bearer ${token}` });
  }

  /** Runs one SDK call and records its result, or the HTTP error it failed with (then returns undefined). */
  async step<T>(label: string, call: () => Promise<T>): Promise<T | undefined> {
    this.claim(label);
    try {
      const value = await call();
      this.transcript[label] = value === undefined ? null : plain(value);
      return value;
    } catch (e) {
      const status = (e as { status?: unknown }).status;
      if (typeof status !== "number") throw e;
      this.transcript[label] = { error: { status, body: parseBody((e as { text?: string }).text) } };
      return undefined;
    }
  }

  /** Like `step`, for a call that must succeed: the scenario cannot go on without its result. */
  async must<T>(label: string, call: () => Promise<T>): Promise<T> {
    const value = await this.step(label, call);
    if (value === undefined) {
      throw new Error(`${label}: failed with ${JSON.stringify(this.transcript[label])}`);
    }
    return value;
  }

  /** Records every event of a stream (its `event` and `data`; SSE ids are the server's own) in order. */
  async stream(
    label: string,
    events: AsyncIterable<{ event: string; data: unknown }>,
  ): Promise<{ event: string; data: unknown }[]> {
    this.claim(label);
    const got: { event: string; data: unknown }[] = [];
    try {
      for await (const { event, data } of events) got.push({ event, data: plain(data) });
    } catch (e) {
      const status = (e as { status?: unknown }).status;
      if (typeof status !== "number") throw e;
      got.push({ event: "http-error", data: { status, body: parseBody((e as { text?: string }).text) } });
    }
    this.transcript[label] = got;
    return got;
  }

  private claim(label: string) {
    if (label.includes("/")) throw new Error(`a step label contains no "/": ${label}`);
    if (Object.hasOwn(this.transcript, label)) throw new Error(`step label used twice: ${label}`);
  }
}

/** As JSON would carry it (undefined keys dropped, class instances as their JSON). */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? "null");

function parseBody(text: string | undefined): unknown {
  try {
    return JSON.parse(text ?? "");
  } catch {
    return text ?? null;
  }
}
