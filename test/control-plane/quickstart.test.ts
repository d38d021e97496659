// End-to-end: the seed's quick-start flow against a fresh `hangar control-plane` (the real CLI, with its
// local reconciler): create a deployment of the example project, poll its revision to DEPLOYED, talk to the
// deployment's URL with the official SDK (a thread and a streamed run), PATCH after a change of the project,
// and see the new revision serve the new behaviour at the same URL with no failed request during the switch.
// Then a broken project: BUILD_FAILED with the reason in the build log, the previous revision still serving.
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cpClient, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import { cleanupDir, ROOT, tempDir } from "../helpers/server.ts";

const KEY = "hangar-quickstart-test-key";
const project = tempDir("hangar-cp-project-");
let cp: CpProcess;
let api: CpClient;

beforeAll(async () => {
  cpSync(join(ROOT, "examples"), project, { recursive: true });
  cp = await startCp({ reconcile: true, env: { HANGAR_CP_BOOTSTRAP_API_KEY: KEY } });
  api = cpClient(cp.url, { "x-api-key": KEY });
});

afterAll(async () => {
  await cp?.stop();
  cleanupDir(project);
  if (cp) cleanupDir(cp.dataDir);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls a revision until it leaves the in-progress states; returns its final status. */
async function settle(deploymentId: string, revisionId: string, boundMs = 150_000): Promise<string> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const r = await api.get(`/v2/deployments/${deploymentId}/revisions/${revisionId}`);
    expect(r.status).toBe(200);
    if (
      !["CREATING", "QUEUED", "AWAITING_BUILD", "BUILDING", "AWAITING_DEPLOY", "DEPLOYING"].includes(
        r.body.status,
      )
    )
      return r.body.status;
    if (Date.now() > deadline)
      throw new Error(`revision ${revisionId} still ${r.body.status} after ${boundMs} ms`);
    await sleep(250);
  }
}

/**
 * Two replies of the chat graph, joined: its fake model alternates between two lines per process, the first
 * carrying the greeting, so one of two consecutive replies has it.
 */
async function reply(client: Client): Promise<string> {
  const out: string[] = [];
  for (let i = 0; i < 2; i++) {
    const thread = await client.threads.create();
    const values = (await client.runs.wait(thread.thread_id, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
    })) as { messages: { content: string }[] };
    out.push(values.messages.at(-1)!.content);
  }
  return out.join(" / ");
}

function setGreeting(greeting: string): void {
  const file = join(project, "langgraph.json");
  const config = JSON.parse(readFileSync(file, "utf8"));
  config.env.HANGAR_EXAMPLE_GREETING = greeting;
  writeFileSync(file, JSON.stringify(config, null, 2));
}

describe("control plane quick start", () => {
  let deploymentId: string;
  let url: string;
  let threadId: string;

  it("create → poll to DEPLOYED → GET → a thread and a streamed run at the deployment's URL", async () => {
    setGreeting("Hello from revision one");
    const created = await api.post("/v2/deployments", {
      name: "quickstart",
      source: "github",
      source_config: { repo_url: project, deployment_type: "dev" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [{ name: "QUICKSTART_SECRET", value: "s3cret" }],
    });
    expect(created.status).toBe(201);
    deploymentId = created.body.id;
    expect(created.body.latest_revision_id).toEqual(expect.any(String));
    expect(JSON.stringify(created.body)).not.toContain("s3cret");
    expect(await settle(deploymentId, created.body.latest_revision_id)).toBe("DEPLOYED");

    const got = await api.get(`/v2/deployments/${deploymentId}`);
    expect(got.status).toBe(200);
    expect(got.body.active_revision_id).toBe(created.body.latest_revision_id);
    url = got.body.source_config.custom_url;
    expect(url).toBe(`${cp.url}/deployments/${deploymentId}`);

    const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    threadId = thread.thread_id;
    const events: string[] = [];
    let text = "";
    for await (const part of client.runs.stream(threadId, "chat", {
      input: { messages: [{ role: "user", content: "hi" }] },
      streamMode: ["messages-tuple", "values"],
    })) {
      events.push(part.event);
      if (part.event === "messages") text += (part.data as any)[0].content;
    }
    expect(events[0]).toBe("metadata");
    expect(events).toContain("messages");
    expect(text).toContain("Hello from revision one!");
  });

  it("PATCH after a change: a new revision serves the new graph at the same URL, no request fails", async () => {
    setGreeting("Hello from revision two");
    const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
    // A client keeps talking to the deployment during the whole switch.
    let stop = false;
    let failures = 0;
    let requests = 0;
    const traffic = (async () => {
      while (!stop) {
        try {
          await client.threads.get(threadId);
          await client.threads.search({ limit: 1 });
        } catch (e) {
          failures++;
          console.error("request failed during the switch:", (e as Error).message);
        }
        requests++;
      }
    })();
    const patched = await api.patch(`/v2/deployments/${deploymentId}`, {
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    expect(patched.status).toBe(200);
    const second = patched.body.latest_revision_id;
    expect(await settle(deploymentId, second)).toBe("DEPLOYED");
    await sleep(500);
    stop = true;
    await traffic;
    expect(requests).toBeGreaterThan(0);
    expect(failures).toBe(0);
    expect((await api.get(`/v2/deployments/${deploymentId}`)).body.active_revision_id).toBe(second);
    // The same URL, the new behaviour, and the thread of the first revision is still there.
    expect(await reply(client)).toContain("Hello from revision two!");
    expect((await client.threads.get(threadId)).thread_id).toBe(threadId);
  });

  it("a build that fails ends BUILD_FAILED with the reason in its build log; the previous revision serves", async () => {
    writeFileSync(join(project, "src/chat.ts"), 'throw new Error("this graph is broken on purpose");\n');
    const patched = await api.patch(`/v2/deployments/${deploymentId}`, {
      source_revision_config: { langgraph_config_path: "langgraph.json" },
    });
    const broken = patched.body.latest_revision_id;
    expect(await settle(deploymentId, broken)).toBe("BUILD_FAILED");
    const logs = await api.post(`/v1/projects/${deploymentId}/revisions/${broken}/build_logs`, {
      limit: 1000,
    });
    expect(logs.status).toBe(200);
    expect(logs.body.logs.map((l: { message: string }) => l.message).join("\n")).toMatch(
      /this graph is broken on purpose/,
    );
    const client = new Client({ apiUrl: url, callerOptions: { maxRetries: 0 } });
    expect(await reply(client)).toContain("Hello from revision two!");
  });
});
