// Helpers for end-to-end run tests: a raw SSE reader (for wire details the SDK hides) and stream collectors.

export interface RawSseEvent {
  event: string;
  data: unknown;
  id?: string;
}

export interface RawSseResponse {
  status: number;
  headers: Headers;
  /** The raw body text, as received. */
  text: string;
  events: RawSseEvent[];
}

/** Parses a complete text/event-stream body into events; comment lines (heartbeats) are skipped. */
export function parseSse(text: string): RawSseEvent[] {
  const events: RawSseEvent[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    let event = "message";
    let id: string | undefined;
    const data: string[] = [];
    let sawField = false;
    for (const line of block.split(/\r?\n/)) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon === -1 ? line : line.slice(0, colon);
      let value = colon === -1 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      sawField = true;
      if (field === "event") event = value;
      else if (field === "data") data.push(value);
      else if (field === "id") id = value;
    }
    if (!sawField) continue;
    const raw = data.join("\n");
    let parsed: unknown = raw;
    try {
      parsed = raw === "" ? null : JSON.parse(raw);
    } catch {
      parsed = raw;
    }
    events.push(id === undefined ? { event, data: parsed } : { event, data: parsed, id });
  }
  return events;
}

/** POSTs JSON to `baseUrl + path` and reads the whole SSE response (the run must end on its own). */
export async function postSse(baseUrl: string, path: string, body: unknown): Promise<RawSseResponse> {
  const res = await fetch(new URL(path, baseUrl), {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, events: res.ok ? parseSse(text) : [] };
}

export interface StreamPart {
  event: string;
  data: any;
  id?: string;
}

/** Drains an SDK stream (or any async iterable of events) into an array. */
export async function collect(stream: AsyncIterable<unknown>): Promise<StreamPart[]> {
  const out: StreamPart[] = [];
  for await (const part of stream) out.push(part as StreamPart);
  return out;
}

/** The base mode of an event name: `updates|research:abc` -> `updates`. */
export function baseMode(event: string): string {
  return event.split("|")[0];
}

/** The namespace segments of an event name: `updates|research:abc` -> [`research:abc`]. */
export function namespaceOf(event: string): string[] {
  return event.split("|").slice(1);
}
