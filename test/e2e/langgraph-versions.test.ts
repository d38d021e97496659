// End-to-end: a project that brings its own @langchain/langgraph (1.0.x, 1.4.x or 1.7.x, linked into its
// node_modules from the repository's devDependency aliases) serves a streamed run in messages-tuple mode, an
// interrupt and a resume; /info reports the project's version and an older one is warned about at start.
import { cpSync, mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  cleanupDir,
  noRetryClient,
  ROOT,
  startHangar,
  tempDir,
  type HangarProcess,
} from "../helpers/server.ts";
import { collect } from "../helpers/sse.ts";

const FIXTURE = join(ROOT, "test/fixtures/compat-langgraph");
const REPLY = "Shall I book it?";

const versionOf = (pkgDir: string): string =>
  JSON.parse(readFileSync(join(ROOT, "node_modules", pkgDir, "package.json"), "utf8")).version;

/** The project's @langchain/langgraph (a directory of the repository's node_modules) and whether it is older. */
const COPIES = [
  { dir: "langgraph-1-0", older: true },
  { dir: "langgraph-1-4", older: true },
  { dir: "@langchain/langgraph", older: false },
].map((c) => ({ ...c, version: versionOf(c.dir) }));

/** A temp copy of the fixture whose node_modules holds the given langgraph and the repository's core. */
function projectWith(langgraphDir: string): string {
  const dir = tempDir("hangar-compat-lg-");
  cpSync(FIXTURE, dir, { recursive: true });
  mkdirSync(join(dir, "node_modules/@langchain"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules", langgraphDir), join(dir, "node_modules/@langchain/langgraph"));
  symlinkSync(join(ROOT, "node_modules/@langchain/core"), join(dir, "node_modules/@langchain/core"));
  return dir;
}

interface Values {
  messages: Array<{ type: string; content: string }>;
  decision?: string;
}

describe.each(COPIES)("a project on @langchain/langgraph $version", ({ dir, version, older }) => {
  let project: string;
  let server: HangarProcess;
  beforeAll(async () => {
    project = projectWith(dir);
    server = await startHangar({ config: join(project, "langgraph.json") });
  });
  afterAll(async () => {
    await server?.stop();
    if (server) cleanupDir(server.dataDir);
    cleanupDir(project);
  });

  it("reports the project's version in /info, and warns at start-up when it is older than Hangar's", async () => {
    const info = (await (await fetch(`${server.url}/info`)).json()) as { langgraph_js_version: string };
    expect(info.langgraph_js_version).toBe(version);
    const warned = server.output().includes("Some LangGraph.js dependencies are not up to date");
    expect(warned).toBe(older);
    if (older) expect(server.output()).toContain(`@langchain/langgraph ${version}`);
  });

  it("streams tokens in messages-tuple mode, stops at the interrupt, and resumes", async () => {
    const client = noRetryClient(server.url);
    const { thread_id } = await client.threads.create();
    const events = await collect(
      client.runs.stream(thread_id, "agent", {
        input: { messages: [{ role: "user", content: "book a flight" }] },
        streamMode: ["messages-tuple", "values"],
      }),
    );
    expect(events[0].event).toBe("metadata");
    expect(events.filter((e) => e.event === "error")).toEqual([]);
    const tokens = events
      .filter((e) => e.event === "messages")
      .map((e) => e.data as [{ content: string }, { langgraph_node?: string }])
      .filter(([, meta]) => meta.langgraph_node === "agent");
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.map(([chunk]) => chunk.content).join("")).toBe(REPLY);

    const paused = await client.threads.getState<Values>(thread_id);
    expect(paused.next).toEqual(["review"]);
    expect(paused.tasks[0].interrupts.map((i) => i.value)).toEqual([{ question: "Approve?" }]);
    expect((await client.threads.get(thread_id)).status).toBe("interrupted");

    const resumed = await collect(
      client.runs.stream(thread_id, "agent", {
        command: { resume: "yes" },
        streamMode: ["messages-tuple", "values"],
      }),
    );
    expect(resumed.filter((e) => e.event === "error")).toEqual([]);
    const last = resumed.filter((e) => e.event === "values").pop()!.data as Values;
    expect(last.decision).toBe("yes");
    expect(last.messages.map((m) => m.content)).toEqual(["book a flight", REPLY, "decision: yes"]);
    const done = await client.threads.getState<Values>(thread_id);
    expect(done.next).toEqual([]);
    expect((await client.threads.get(thread_id)).status).toBe("idle");
  });

  it("takes a command whose goto is a Send (built with the project's own Send class)", async () => {
    const client = noRetryClient(server.url);
    const { thread_id } = await client.threads.create();
    await client.runs.wait(thread_id, "agent", {
      command: { goto: { node: "agent", input: { messages: [{ role: "user", content: "sent" }] } } },
    });
    const state = await client.threads.getState<Values>(thread_id);
    expect(state.next).toEqual(["review"]);
    expect(state.values.messages.map((m) => m.content)).toContain(REPLY);
  });
});
