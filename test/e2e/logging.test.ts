// What `hangar dev` logs: one line per request (method, path, status, ms), a run's lifecycle, and the stack of a
// node that throws with its graph and node names; pretty by default, one JSON object per line with
// LOG_FORMAT=json (and by default in `hangar serve`); credentials (x-api-key, Authorization, a query string)
// never in the output.
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { describe, expect, it, vi } from "vitest";
import { ROOT, useHangar, type HangarHandle } from "../helpers/server.ts";

const CONFIG = join(ROOT, "test/fixtures/logging-project/langgraph.json");
// The credentials test/fixtures/logging-project/auth.ts accepts.
const API_KEY = "sk-logging-7f3a9c1e5b";
const BEARER = "bearer-logging-2d8e4a6f";
const QUERY_SECRET = "query-secret-93b1d0";

/** Sends a request line's worth of traffic and a run whose node throws; returns what the client got. */
async function exercise(hangar: HangarHandle): Promise<unknown> {
  const ok = await fetch(`${hangar.server.url}/ok?token=${QUERY_SECRET}`);
  expect(ok.status).toBe(200);
  const byKey = new Client({
    apiUrl: hangar.server.url,
    defaultHeaders: { "x-api-key": API_KEY },
    callerOptions: { maxRetries: 0 },
  });
  const byBearer = new Client({
    apiUrl: hangar.server.url,
    defaultHeaders: { Authorization: `Bearer ${BEARER}` },
    callerOptions: { maxRetries: 0 },
  });
  const thread = await byKey.threads.create();
  const answer = await byBearer.runs
    .wait(thread.thread_id, "failing", { input: { note: "go" } })
    .catch((e: Error) => e);
  // A streamed run: its request line is written when the stream ends.
  for await (const _ of byKey.runs.stream(thread.thread_id, "failing", { input: { note: "again" } }));
  return answer;
}

function expectNoCredentials(output: string): void {
  for (const secret of [API_KEY, BEARER, QUERY_SECRET]) expect(output).not.toContain(secret);
}

describe("hangar dev, pretty logs (the default)", () => {
  const hangar = useHangar({ process: true, config: CONFIG, env: { LOG_FORMAT: "", LOG_LEVEL: "" } });

  it("prints a request line, the run's lifecycle, and the throwing node's stack with graph and node", async () => {
    const answer = await exercise(hangar);
    // The client still gets the error.
    expect(JSON.stringify(answer, Object.getOwnPropertyNames(answer ?? {}))).toContain("the fuse was lit");
    const out = () => hangar.server.output();
    // A request is logged when its response ends: the wait's line may come just after the client has it.
    await vi.waitFor(() =>
      expect(out()).toMatch(/INFO: POST \/threads\/[0-9a-f-]{36}\/runs\/wait 200 [\d.]+ms/),
    );
    expect(out()).toMatch(/^\[[\d:.]+\] INFO: GET \/ok 200 \d+(\.\d+)?ms$/m);
    await vi.waitFor(() =>
      expect(out()).toMatch(/INFO: POST \/threads\/[0-9a-f-]{36}\/runs\/stream 200 [\d.]+ms/),
    );
    expect(out()).toMatch(/WARN: run finished: error .*status=error ms=\d+/);
    expect(out()).not.toMatch(/incoming request/);
    // The node's exception: its names on the line, its stack (down to the function that threw) below.
    expect(out()).toMatch(/ERROR: node "explode" of graph "failing" threw: the fuse was lit .*node=explode/);
    expect(out()).toMatch(/^ {4}Error: the fuse was lit\n {8}at explodeHelper .*graph\.ts/m);
    expect(out()).toMatch(
      /INFO: run started run_id=[0-9a-f-]{36} thread_id=[0-9a-f-]{36} .*graph_id=failing/,
    );
    expect(out()).toContain("attempt=1");
    expectNoCredentials(out());
  });
});

describe("hangar dev, LOG_FORMAT=json", () => {
  const hangar = useHangar({ process: true, config: CONFIG, env: { LOG_FORMAT: "json", LOG_LEVEL: "" } });

  it("prints one JSON object per line: request lines with their fields, the node's error with its stack", async () => {
    await exercise(hangar);
    const entries = () =>
      hangar.server
        .output()
        .split("\n")
        .filter((l) => l.trim())
        .map((l) => JSON.parse(l) as Record<string, any>);
    await vi.waitFor(() => expect(entries().some((e) => e.url?.endsWith("/runs/wait"))).toBe(true));
    const all = entries();
    for (const e of all) expect(e).toMatchObject({ level: expect.any(Number), time: expect.any(Number) });
    expect(all.find((e) => e.url === "/ok")).toMatchObject({
      method: "GET",
      url: "/ok",
      statusCode: 200,
      responseTime: expect.any(Number),
      msg: expect.stringMatching(/^GET \/ok 200 /),
    });
    const thrown = all.find((e) => e.node === "explode");
    expect(thrown).toMatchObject({
      level: 50,
      graph_id: "failing",
      node: "explode",
      attempt: 1,
      run_id: expect.any(String),
      thread_id: expect.any(String),
      err: { type: "Error", message: "the fuse was lit", stack: expect.stringContaining("explodeHelper") },
    });
    expect(all.find((e) => e.msg?.startsWith("run finished"))).toMatchObject({
      status: "error",
      ms: expect.any(Number),
      run_id: thrown!.run_id,
    });
    expect(all.find((e) => /listening on http:\/\/127\.0\.0\.1:\d+$/.test(e.msg ?? ""))).toBeDefined();
    expectNoCredentials(hangar.server.output());
  });
});

describe("hangar serve, JSON by default", () => {
  const hangar = useHangar({
    process: true,
    config: CONFIG,
    command: "serve",
    env: { LOG_FORMAT: "", LOG_LEVEL: "" },
  });

  it("prints one JSON object per line", async () => {
    expect((await fetch(`${hangar.server.url}/ok`)).status).toBe(200);
    const lines = () =>
      hangar.server
        .output()
        .split("\n")
        .filter((l) => l.trim());
    await vi.waitFor(() => expect(lines().some((l) => l.includes('"url":"/ok"'))).toBe(true));
    for (const l of lines()) expect(JSON.parse(l)).toMatchObject({ level: expect.any(Number) });
  });
});

describe("hangar serve, LOG_LEVEL and LOG_FORMAT from the project's env", () => {
  // The project's env says warn and pretty; the environment sets neither.
  const hangar = useHangar({
    process: true,
    config: join(ROOT, "test/fixtures/logging-project/langgraph.env-levels.json"),
    command: "serve",
    env: { LOG_FORMAT: undefined, LOG_LEVEL: undefined },
  });

  it("logs from warn up, in pretty lines, and still says where it listens", async () => {
    await exercise(hangar);
    const out = () => hangar.server.output();
    await vi.waitFor(() => expect(out()).toMatch(/WARN: run finished: error .*status=error/));
    expect(out()).toMatch(/INFO: Hangar Agent Server listening on http:\/\/127\.0\.0\.1:\d+$/m);
    expect(out()).not.toMatch(/INFO: GET \/ok/);
    expect(out()).not.toMatch(/run started/);
    expect(out()).not.toMatch(/^\{/m);
  });
});

describe("LOG_LEVEL=debug", () => {
  // In this process (startServer and the start-up lines as `hangar dev` logs them).
  const hangar = useHangar({ config: CONFIG, env: { LOG_LEVEL: "debug", LOG_FORMAT: "pretty" } });

  it("says where the server listens once: its own line, not Fastify's too", async () => {
    expect((await fetch(`${hangar.server.url}/ok`)).status).toBe(200);
    const out = () => hangar.server.output();
    await vi.waitFor(() => expect(out()).toMatch(/INFO: GET \/ok 200/));
    // (Before, Fastify's child logger was at debug too, and said "Server listening at" after the server's line.)
    expect(out().match(/listening (on|at) http:\/\/127\.0\.0\.1:\d+/gi)).toHaveLength(1);
    expect(out()).not.toMatch(/Server listening at/);
  });
});
