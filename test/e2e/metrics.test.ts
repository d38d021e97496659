// End-to-end: GET /metrics in Prometheus text and JSON: runs by status, queue depth, stream clients, latency.
import { describe, expect, it } from "vitest";
import { useHangar } from "../helpers/server.ts";

const hangar = useHangar();

/** The value of a sample line `name{labels} value` in Prometheus text, or undefined. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}${labels} `) || l.startsWith(`${name}${labels}{`));
  return line === undefined ? undefined : Number(line.split(" ").pop());
}

describe("metrics", () => {
  it("counts finished runs by status and times requests by route", async () => {
    const { client, server } = hangar;
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "m" }] },
    });
    await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ type: "nonsense-role", content: "x" }] },
      raiseError: false,
    });
    const res = await fetch(`${server.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/text\/plain/);
    const text = await res.text();
    expect(sample(text, "hangar_runs_finished_total", '{status="success"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "hangar_runs_finished_total", '{status="error"}')).toBeGreaterThanOrEqual(1);
    expect(sample(text, "hangar_runs_pending")).toBe(0);
    expect(sample(text, "hangar_runs_running")).toBe(0);
    expect(sample(text, "hangar_stream_clients")).toBe(0);
    expect(text).toContain('route="/threads/:thread_id/runs/wait"');
    expect(text).toMatch(
      /hangar_http_request_duration_seconds_count\{method="POST",route="\/threads",status="200"\} \d+/,
    );
    // The process's own: CPU, memory, and the event loop's delay (sampled every 100 ms, not prom-client's 10).
    expect(sample(text, "hangar_process_cpu_seconds_total")).toBeGreaterThan(0);
    expect(sample(text, "hangar_nodejs_heap_size_used_bytes")).toBeGreaterThan(0);
    expect(sample(text, "hangar_nodejs_eventloop_lag_p99_seconds")).toBeGreaterThanOrEqual(0);
  });

  it("shows an open stream as a stream client, and answers JSON with format=json", async () => {
    const { client, server } = hangar;
    const thread = await client.threads.create();
    const ac = new AbortController();
    const stream = await fetch(`${server.url}/threads/${thread.thread_id}/stream`, { signal: ac.signal });
    expect(stream.status).toBe(200);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(sample(text, "hangar_stream_clients")).toBe(1);
    ac.abort();
    const json = await (await fetch(`${server.url}/metrics?format=json`)).json();
    expect(Array.isArray(json)).toBe(true);
    expect(json.map((m: { name: string }) => m.name)).toContain("hangar_runs_finished_total");
  });
});
