// `hangar control-plane` start-up and administration through the real CLI: the bootstrap from
// HANGAR_CP_BOOTSTRAP_API_KEY / HANGAR_CP_BOOTSTRAP_PLAN, the instructions of a fresh one without a key, the
// admin commands (server stopped or running), keys stored only as their SHA-256, and data kept across restarts.
import { createHash } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupDir, runHangar, tempDir } from "../helpers/server.ts";
import {
  cpAdmin,
  cpClient,
  cpStoreDump,
  createdId,
  createdKey,
  startCp,
  type CpProcess,
} from "../helpers/control-plane.ts";

const started: CpProcess[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const cp of started.splice(0)) await cp.stop();
  for (const d of dirs.splice(0)) cleanupDir(d);
});

async function start(env: Record<string, string>, dataDir?: string): Promise<CpProcess> {
  const cp = await startCp({ env, dataDir });
  started.push(cp);
  if (!dataDir) dirs.push(cp.dataDir);
  return cp;
}

describe("control-plane start-up", () => {
  it("bootstraps an organization on HANGAR_CP_BOOTSTRAP_PLAN with the key, once; data survives a restart", async () => {
    const dir = tempDir("hangar-cp-admin-");
    dirs.push(dir);
    const env = {
      HANGAR_CP_BOOTSTRAP_API_KEY: "boot-key",
      HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise",
    };
    const cp = await start(env, dir);
    expect(cp.output()).toContain(`Hangar control plane listening on ${cp.url}`);
    const ws = /workspace "default": ([0-9a-f-]{36})/.exec(cp.output())?.[1];
    expect(ws).toBeTruthy();
    const c = cpClient(cp.url, { "X-Api-Key": "boot-key" });
    const l = await c.post("/v2/listeners", { compute_type: "k8s", compute_id: "c1", compute_config: {} });
    expect(l.status).toBe(201);
    const d = await c.post("/v2/deployments", {
      name: "kept",
      source: "github",
      source_config: { repo_url: "https://github.com/example/agent.git" },
      source_revision_config: { langgraph_config_path: "langgraph.json" },
      secrets: [],
    });
    expect(d.status).toBe(201);
    expect(d.body.tenant_id).toBe(ws);
    // The key itself is not stored: only its SHA-256.
    const db = await cpStoreDump(dir);
    expect(db).not.toContain("boot-key");
    expect(db).toContain(createHash("sha256").update("boot-key").digest("hex"));

    await cp.stop();
    const again = await start(env, dir);
    expect(again.output()).not.toContain("Bootstrapped");
    const c2 = cpClient(again.url, { "X-Api-Key": "boot-key" });
    expect((await c2.get(`/v2/deployments/${d.body.id}`)).body).toMatchObject({
      name: "kept",
      tenant_id: ws,
    });
    expect((await c2.get(`/v2/listeners/${l.body.id}`)).status).toBe(200);
  });

  it("the default bootstrap plan is plus: listeners are refused with the workspace id", async () => {
    const cp = await start({ HANGAR_CP_BOOTSTRAP_API_KEY: "plus-key" });
    const ws = /workspace "default": ([0-9a-f-]{36})/.exec(cp.output())![1];
    expect(cp.output()).toContain("plan plus");
    const r = await cpClient(cp.url, { "X-Api-Key": "plus-key" }).get("/v2/listeners");
    expect(r.status).toBe(403);
    expect(r.body.detail).toContain(ws);
  });

  it("without a bootstrap key, a fresh control plane prints how to create an organization, workspace and key", async () => {
    const cp = await start({});
    const out = cp.output();
    expect(out).toContain("hangar control-plane admin create-org --name <name> --plan");
    expect(out).toContain("create-workspace --org <organization id> --name <name>");
    expect(out).toContain("create-key --workspace <workspace id>");
    expect((await cpClient(cp.url, { "X-Api-Key": "anything" }).get("/v2/deployments")).status).toBe(401);

    // The admin commands work while it runs; the new key is usable at once.
    const org = createdId(
      (await cpAdmin(cp.dataDir, "create-org", "--name", "acme", "--plan", "enterprise")).output,
      "organization",
    );
    const ws = createdId(
      (await cpAdmin(cp.dataDir, "create-workspace", "--org", org, "--name", "main")).output,
      "workspace",
    );
    const keyOut = await cpAdmin(cp.dataDir, "create-key", "--workspace", ws);
    expect(keyOut.code).toBe(0);
    const key = createdKey(keyOut.output);
    const r = await cpClient(cp.url, { "X-Api-Key": key }).get("/v2/deployments");
    expect(r.status).toBe(200);
  });

  it("admin commands refuse unknown plans, organizations and workspaces (exit 1)", async () => {
    const dir = tempDir("hangar-cp-admin-");
    dirs.push(dir);
    // The refusals, at once, each on a store of its own.
    const fresh = () => {
      const d = tempDir("hangar-cp-admin-");
      dirs.push(d);
      return d;
    };
    const [badPlan, badOrg, badWs, noScope] = await Promise.all([
      cpAdmin(fresh(), "create-org", "--name", "x", "--plan", "gold"),
      cpAdmin(fresh(), "create-workspace", "--org", "00000000-0000-4000-8000-000000000000", "--name", "w"),
      cpAdmin(fresh(), "create-key", "--workspace", "00000000-0000-4000-8000-000000000000"),
      cpAdmin(fresh(), "create-key"),
    ]);
    expect(badPlan.code).toBe(1);
    expect(badPlan.output).toContain("unknown plan");
    expect(badOrg.code).toBe(1);
    expect(badWs.code).toBe(1);
    expect(noScope.code).toBe(1);
    // Stopped server: an organization key made offline works once it starts.
    const org = createdId(
      (await cpAdmin(dir, "create-org", "--name", "o", "--plan", "free")).output,
      "organization",
    );
    createdId((await cpAdmin(dir, "create-workspace", "--org", org, "--name", "w1")).output, "workspace");
    const orgKey = createdKey((await cpAdmin(dir, "create-key", "--org", org)).output);
    const cp = await start({}, dir);
    expect(cp.output()).not.toContain("No organization exists yet");
    expect(
      (await cpClient(cp.url, { Authorization: `Bearer ${orgKey}` }).get("/v2/deployments")).status,
    ).toBe(200);
  });

  it("refuses a bad bootstrap plan or upload limit", async () => {
    const dir = tempDir("hangar-cp-admin-");
    dirs.push(dir);
    // Each refused start on a data dir of its own, all at once.
    const other = () => {
      const d = tempDir("hangar-cp-admin-");
      dirs.push(d);
      return d;
    };
    const [plan, limit, port] = await Promise.all([
      runHangar(["control-plane", "--port", "0", "--no-reconcile", "--data-dir", dir], {
        HANGAR_CP_BOOTSTRAP_API_KEY: "k",
        HANGAR_CP_BOOTSTRAP_PLAN: "gold",
      }),
      runHangar(["control-plane", "--port", "0", "--no-reconcile", "--data-dir", other()], {
        HANGAR_CP_MAX_UPLOAD_BYTES: "lots",
      }),
      runHangar(["control-plane", "--port", "http", "--data-dir", other()]),
    ]);
    expect(plan.code).toBe(1);
    expect(plan.output).toContain("unknown plan");
    expect(limit.code).toBe(1);
    expect(limit.output).toContain("HANGAR_CP_MAX_UPLOAD_BYTES");
    expect(port.code).toBe(2);
  });
});
