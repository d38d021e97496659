// The official image's langgraph.json variables: `hangar serve` started in a directory without langgraph.json serves
// the project LANGSERVE_GRAPHS, LANGGRAPH_HTTP, LANGGRAPH_AUTH and LANGGRAPH_STORE give (a run, the custom route, the
// auth handler, the store's semantic index); a section a variable gives replaces the file's, with a warning when
// they differ; bad JSON or a bad shape stops `serve` and `dev` naming the variable and the field; the official
// variables Hangar ignores are each said once.
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, cleanupDir, noRetryClient, runHangar, startHangar, tempDir } from "../helpers/server.ts";

const PROJECT = join(ROOT, "test/fixtures/official-env-project");
const HTTP_APP_PROJECT = join(ROOT, "test/fixtures/http-app-project");

/** As the official CLI's Dockerfile writes them: compact JSON, paths relative to the project's directory. */
const SECTIONS = {
  LANGSERVE_GRAPHS: JSON.stringify({ chat: "../../../examples/src/chat.ts:graph" }),
  LANGGRAPH_HTTP: JSON.stringify({ app: "../http-app-project/app.ts:app" }),
  LANGGRAPH_AUTH: JSON.stringify({ path: "../auth-project/auth.ts:auth" }),
  LANGGRAPH_STORE: JSON.stringify({
    index: { embed: "../semantic-project/embed.ts:embed", dims: 32, fields: ["text"] },
  }),
};

const as = (url: string, token?: string) =>
  new Client({
    apiUrl: url,
    callerOptions: { maxRetries: 0 },
    ...(token ? { defaultHeaders: { authorization: `Bearer ${token}` } } : {}),
  });

/** How many lines of `output` contain `text`. */
const linesWith = (output: string, text: string) => output.split("\n").filter((l) => l.includes(text)).length;

describe("langgraph.json's sections in the official image's variables", () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach(cleanupDir));

  it("serve in a directory without langgraph.json: the variables give graphs, http app, auth and store", async () => {
    const server = await startHangar({
      process: true,
      command: "serve",
      // `./langgraph.json` (absent) under the working directory, as the image's WORKDIR has it.
      cwd: PROJECT,
      config: "langgraph.json",
      env: {
        ...SECTIONS,
        // Official variables that mean nothing to Hangar, and one it reads.
        BG_JOB_ISOLATED_LOOPS: "true",
        FF_USE_CORE_API: "true",
        LANGGRAPH_CLOUD_LICENSE_KEY: "license",
        N_JOBS_PER_WORKER: "2",
      },
    });
    try {
      // Auth applies: no token, no thread.
      await expect(as(server.url).threads.create()).rejects.toThrow(/401|Invalid or missing bearer token/);
      const alice = as(server.url, "token-alice");
      const thread = await alice.threads.create();
      const values = (await alice.runs.wait(thread.thread_id, "chat", {
        input: { messages: [{ role: "user", content: "hi" }] },
      })) as { messages: { content: string }[] };
      expect(values.messages.at(-1)?.content).toContain("I am a fake model");
      // Another user does not see alice's thread.
      await expect(as(server.url, "token-bob").threads.get(thread.thread_id)).rejects.toThrow(/404/);
      // The project's own routes.
      const hello = await fetch(`${server.url}/custom/hello`, {
        headers: { authorization: "Bearer token-alice" },
      });
      expect(await hello.json()).toEqual({ hello: "world", from: null });
      // The store's semantic index (LANGGRAPH_STORE): search ranks by the query, with a score.
      await alice.store.putItem(["notes"], "a", { text: "jet engines and wings of planes" });
      await alice.store.putItem(["notes"], "b", { text: "recipes for bread and cake" });
      const found = await alice.store.searchItems(["notes"], { query: "planes" });
      expect(found.items.map((i) => i.key)[0]).toBe("a");
      expect(typeof found.items[0].score).toBe("number");
      // Each ignored variable said once, naming it (and what to use instead); none for what is read.
      const out = server.output();
      expect(
        linesWith(out, "BG_JOB_ISOLATED_LOOPS is an official Agent Server variable that Hangar ignores"),
      ).toBe(1);
      expect(out).toContain("set HANGAR_GRAPH_THREADS");
      expect(linesWith(out, "FF_USE_CORE_API is an official Agent Server variable that Hangar ignores")).toBe(
        1,
      );
      expect(linesWith(out, "LANGGRAPH_CLOUD_LICENSE_KEY is an official Agent Server variable")).toBe(1);
      for (const read of ["N_JOBS_PER_WORKER", "LANGSERVE_GRAPHS", "LANGGRAPH_HTTP", "LANGGRAPH_AUTH"]) {
        expect(out).not.toContain(`${read} is an official`);
      }
    } finally {
      await server.stop();
      dirs.push(server.dataDir);
    }
  });

  it("a section given by its variable replaces the file's: a warning when they differ, none when the same", async () => {
    const server = await startHangar({
      config: join(HTTP_APP_PROJECT, "langgraph.json"),
      env: {
        // The file's graphs, named by an absolute path (as the official CLI writes them for `dependencies: ["."]`).
        LANGSERVE_GRAPHS: JSON.stringify({ echo: `${HTTP_APP_PROJECT}/graph.ts:graph` }),
        // No app: the file's http.app is not mounted.
        LANGGRAPH_HTTP: JSON.stringify({ disable_meta: false }),
      },
    });
    try {
      const client = noRetryClient(server.url);
      expect((await client.assistants.search({ graphId: "echo" })).length).toBeGreaterThan(0);
      expect((await fetch(`${server.url}/custom/hello`)).status).toBe(404);
      const out = server.output();
      expect(out).toContain(
        `LANGGRAPH_HTTP gives the http section: used instead of ${join(HTTP_APP_PROJECT, "langgraph.json")}'s, which differs`,
      );
      expect(out).not.toContain("LANGSERVE_GRAPHS gives the graphs section");
    } finally {
      await server.stop();
      dirs.push(server.dataDir);
    }
  });

  it("bad JSON or a bad shape stops serve and dev, naming the variable and the field", async () => {
    const dataDir = tempDir();
    dirs.push(dataDir);
    const config = join(PROJECT, "langgraph.json");
    const start = (command: "serve" | "dev", env: Record<string, string>) =>
      runHangar(
        [
          command,
          "--config",
          config,
          "--port",
          "0",
          "--data-dir",
          dataDir,
          ...(command === "dev" ? ["--no-reload"] : []),
        ],
        env,
      );
    const [badJson, badShape, noGraphs, nothing] = await Promise.all([
      start("serve", { ...SECTIONS, LANGGRAPH_HTTP: '{"app": ' }),
      start("dev", { ...SECTIONS, LANGGRAPH_AUTH: '{"path": 5}' }),
      start("serve", { LANGSERVE_GRAPHS: "{}" }),
      start("serve", {}),
    ]);
    expect(badJson.code).toBe(1);
    expect(badJson.output).toContain("hangar serve: LANGGRAPH_HTTP: invalid JSON (the http section):");
    expect(badShape.code).toBe(1);
    expect(badShape.output).toContain("hangar dev: LANGGRAPH_AUTH: invalid auth section:");
    expect(badShape.output).toContain("auth.path: Invalid input: expected string, received number");
    expect(noGraphs.code).toBe(1);
    expect(noGraphs.output).toContain("LANGSERVE_GRAPHS: invalid graphs section:");
    expect(noGraphs.output).toContain("graphs: must name at least one graph");
    expect(nothing.code).toBe(1);
    expect(nothing.output).toContain(
      `${config}: file not found (nor are the graphs given by LANGSERVE_GRAPHS)`,
    );
  });
});
