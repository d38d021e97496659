// The control plane builds images for deployments assigned to a listener (issue 27 item 4), for real: a local
// registry (Debian's docker-registry, basic auth), `hangar build --base-only` as HANGAR_CP_IMAGE_BASE, and
// `hangar deploy --listener-id` of the example project. The build runs in the sandbox (its graph module, imported by
// `hangar check`, finds no Docker socket nor the registry's credentials), the image is assembled from its output
// and pushed; the revision records its image_uri and waits for the listener; `hangar listener --dry-run` renders
// objects naming the image, with an image pull secret of the registry's credentials, with which the image is
// pulled from the registry; it serves the project under `docker run --network host`.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import yaml from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.ts";
import { cpClient, startCp, type CpClient, type CpProcess } from "../helpers/control-plane.ts";
import {
  baseImage,
  chatRun,
  docker,
  dockerQuiet,
  exec,
  freePort,
  oneDockerFileAtATime,
  runtimeImage,
  skipWithoutDocker,
  waitForOk,
} from "../helpers/docker.ts";
import { expectValidObject } from "../helpers/k8s-schema.ts";
import { BIN, cleanupDir, ROOT, tempDir } from "../helpers/server.ts";
import { waitFor } from "../helpers/wait.ts";

const FILE = "test/docker/cp-image.test.ts";
const REGISTRY_BIN = "/usr/bin/docker-registry";
/** Docker and the local registry (Debian's docker-registry), or why this file cannot run. */
function skipHere(): boolean {
  if (skipWithoutDocker(FILE)) return true;
  if (spawnSync(REGISTRY_BIN, ["--version"]).status === 0) return false;
  const why = `no ${REGISTRY_BIN} (apt-get install docker-registry)`;
  if (process.env.HANGAR_REQUIRE_DOCKER === "1")
    throw new Error(`${FILE}: HANGAR_REQUIRE_DOCKER=1 but ${why}`);
  console.warn(`skipping ${FILE}: ${why}`);
  return true;
}
const skip = skipHere();
oneDockerFileAtATime();

const run = `${process.pid}`;
const BASE_TAG = `hangar-test/hangar-base:${run}`;
const KEY = `hangar-cp-image-${randomBytes(8).toString("hex")}`;
const USER = "hangar-push";
const PASSWORD = randomBytes(12).toString("hex");
let tmp = "";
let project = "";
let dockerConfig = "";
let registry: ChildProcess | undefined;
let registryHost = "";
let cp: CpProcess | undefined;
let api: CpClient;
const containers: string[] = [];
const images: string[] = [];

/** A bcrypt hash of the password for the registry's htpasswd file (Python's crypt, as Debian's python3 has it). */
function bcrypt(password: string): string {
  const r = spawnSync(
    "python3",
    [
      "-W",
      "ignore",
      "-c",
      "import crypt,sys; print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH)))",
      password,
    ],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`python3 crypt failed: ${r.stderr}`);
  return r.stdout.trim();
}

/** Starts docker-registry on a free loopback port with basic auth; resolves once it answers. */
async function startRegistry(dir: string): Promise<void> {
  const port = await freePort();
  registryHost = `127.0.0.1:${port}`;
  writeFileSync(join(dir, "htpasswd"), `${USER}:${bcrypt(PASSWORD)}\n`);
  mkdirSync(join(dir, "data"));
  const config = {
    version: 0.1,
    log: { level: "warn" },
    storage: { filesystem: { rootdirectory: join(dir, "data") } },
    http: { addr: registryHost, secret: randomBytes(16).toString("hex") },
    auth: { htpasswd: { realm: "hangar-test", path: join(dir, "htpasswd") } },
  };
  writeFileSync(join(dir, "config.yml"), yaml.dump(config));
  let out = "";
  registry = spawn(REGISTRY_BIN, ["serve", join(dir, "config.yml")], { stdio: ["ignore", "pipe", "pipe"] });
  registry.stdout!.on("data", (d) => (out += d));
  registry.stderr!.on("data", (d) => (out += d));
  await waitFor(
    () => `the registry on ${registryHost} to answer; its output:\n${out}`,
    async () => (await fetch(`http://${registryHost}/v2/`).catch(() => undefined))?.status === 401,
  );
}

/** The registry's API with the credentials. */
async function registryGet(path: string): Promise<unknown> {
  const auth = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
  const res = await fetch(`http://${registryHost}${path}`, { headers: { Authorization: `Basic ${auth}` } });
  expect(res.status, path).toBe(200);
  return res.json();
}

/**
 * A graph module that, imported by the sandboxed `hangar check`, says what it can see of Docker's socket and of the
 * control plane's Docker configuration (`credentials`).
 */
const probe = (credentials: string) => `import { statSync } from "node:fs";
const seen = (p) => { try { const s = statSync(p); return s.isSocket() ? "socket" : s.isCharacterDevice() ? "masked" : s.isDirectory() ? "dir" : "file"; } catch { return "absent"; } };
console.log("PROBE docker.sock=" + seen("/var/run/docker.sock") + " run=" + seen("/run/docker.sock") + " credentials=" + seen(${JSON.stringify(credentials)}));
export { graph } from "./chat.ts";
`;

describe.skipIf(skip)("the control plane builds images for deployments assigned to a listener", () => {
  beforeAll(async () => {
    tmp = tempDir("hangar-cp-image-");
    // Built on the slim runtime image (the build stage on the base image): what is pushed and pulled is a third the
    // size, and Docker's gzip of every layer the push's main cost.
    const [runtime, build] = [await runtimeImage(), await baseImage()];
    const built = await exec(
      process.execPath,
      [BIN, "build", "--base-only", "-t", BASE_TAG, "--base-image", runtime, "--build-image", build],
      {
        cwd: tmp,
      },
    );
    expect(built.code, `hangar build --base-only:\n${built.stdout}\n${built.stderr}`).toBe(0);

    const regDir = join(tmp, "registry");
    mkdirSync(regDir);
    await startRegistry(regDir);
    // The control plane's Docker configuration: the registry's credentials only.
    dockerConfig = join(tmp, "docker-config");
    mkdirSync(dockerConfig);
    const auth = Buffer.from(`${USER}:${PASSWORD}`).toString("base64");
    writeFileSync(join(dockerConfig, "config.json"), JSON.stringify({ auths: { [registryHost]: { auth } } }));

    project = join(tmp, "agent-on-k8s");
    cpSync(join(ROOT, "examples"), project, { recursive: true });
    writeFileSync(join(project, "src/probe.ts"), probe(join(dockerConfig, "config.json")));
    const config = JSON.parse(readFileSync(join(project, "langgraph.json"), "utf8"));
    config.graphs.chat = "./src/probe.ts:graph";
    // As in deploy.test.ts: no schema extraction in the background of the servers this test starts.
    config.env.HANGAR_SCHEMAS_AHEAD = "false";
    writeFileSync(join(project, "langgraph.json"), JSON.stringify(config, null, 2));

    cp = await startCp({
      reconcile: true,
      env: {
        HANGAR_CP_BOOTSTRAP_API_KEY: KEY,
        HANGAR_CP_BOOTSTRAP_PLAN: "self_hosted_enterprise",
        HANGAR_CP_IMAGE_REGISTRY: `${registryHost}/hangar-test`,
        HANGAR_CP_IMAGE_BASE: BASE_TAG,
        HANGAR_CP_IMAGE_DOCKER_CONFIG: dockerConfig,
      },
    });
    api = cpClient(cp.url, { "x-api-key": KEY });
  });

  afterAll(async () => {
    for (const c of containers) await dockerQuiet(["rm", "-f", "-v", c]);
    for (const i of images) await dockerQuiet(["rmi", i]);
    await cp?.stop();
    if (cp) cleanupDir(cp.dataDir);
    registry?.kill("SIGTERM");
    // Leaving the untagged layers, the next Docker file's build cache.
    await dockerQuiet(["rmi", "--no-prune", BASE_TAG]);
    if (tmp) cleanupDir(tmp);
  });

  it("hangar deploy --listener-id: built in the sandbox, pushed, image_uri recorded; the listener renders and the registry serves it", async () => {
    const listener = await api.post("/v2/listeners", {
      compute_type: "k8s",
      compute_id: `cluster-${run}`,
      compute_config: { k8s_namespaces: ["agents"] },
    });
    expect(listener.status, JSON.stringify(listener.body)).toBe(201);
    const deployed = await runCli([BIN, "deploy", "--listener-id", listener.body.id, "--no-wait", "--json"], {
      cwd: project,
      env: { HANGAR_HOST_URL: cp!.url, HANGAR_API_KEY: KEY },
      scrub: /^HANGAR_|^DATABASE_URL$/,
    });
    expect(deployed.code, deployed.stdout + deployed.stderr).toBe(0);
    const events = deployed.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const created = events.find((e) => e.event === "created");
    // Reached through the listener's cluster, not the control plane's router.
    expect(events.find((e) => e.event === "queued").url).toBeNull();
    const { deployment_id: id, revision_id: rev } = created;
    // Until it has its image, the revision is not the listener's to roll out.
    const assignment = (await api.get(`/v2/listeners/${listener.body.id}/assignments/${id}`)).body;
    const early = (await api.get(`/v2/deployments/${id}/revisions/${rev}`)).body;
    if (!early.source_revision_config.image_uri) {
      expect(assignment.revisions.map((r: { id: string }) => r.id)).not.toContain(rev);
    }

    // Built by the control plane (not the listener): it waits for the listener with its image.
    const revision = await waitFor(
      `revision ${rev} to be built`,
      async () => {
        const r = (await api.get(`/v2/deployments/${id}/revisions/${rev}`)).body;
        return ["AWAITING_DEPLOY", "BUILD_FAILED", "DEPLOY_FAILED"].includes(r.status) ? r : undefined;
      },
      600_000,
      500,
    );
    const buildLog = (
      await api.post(`/v1/projects/${id}/revisions/${rev}/build_logs`, { limit: 1000 })
    ).body.logs
      .map((l: { message: string }) => l.message)
      .join("\n");
    expect(revision.status, `${revision.status_message}\n${buildLog}`).toBe("AWAITING_DEPLOY");
    const image = `${registryHost}/hangar-test/${id}:${rev}`;
    expect(revision.source_revision_config.image_uri).toBe(image);
    expect((await api.get(`/v2/deployments/${id}`)).body.source_revision_config.image_uri).toBe(image);
    expect(buildLog).toContain("$ hangar check");
    expect(buildLog).toContain(`Pushed ${image}`);
    // The sandboxed build saw neither the Docker socket nor the registry's credentials.
    expect(buildLog).toContain("PROBE docker.sock=masked run=masked credentials=absent");
    expect(buildLog).not.toContain(PASSWORD);
    const catalog = (await registryGet("/v2/_catalog")) as { repositories: string[] };
    expect(catalog.repositories).toContain(`hangar-test/${id}`);
    expect(((await registryGet(`/v2/hangar-test/${id}/tags/list`)) as { tags: string[] }).tags).toEqual([
      rev,
    ]);

    // The listener's dry run: the objects name the image and pull it with the registry's credentials.
    const rendered = await runCli(
      [
        BIN,
        "listener",
        "--control-plane",
        cp!.url,
        "--api-key",
        KEY,
        "--listener-id",
        listener.body.id,
        "--dry-run",
        "--once",
      ],
      { cwd: ROOT, scrub: /^HANGAR_/ },
    );
    expect(rendered.code, rendered.stderr).toBe(0);
    const docs = yaml.loadAll(rendered.stdout).filter(Boolean) as any[];
    expect(docs.map((o) => o.kind)).toEqual(["Secret", "Secret", "Deployment", "Service"]);
    docs.forEach(expectValidObject);
    const pull = docs[1];
    expect(pull.type).toBe("kubernetes.io/dockerconfigjson");
    const pullConfig = Buffer.from(pull.data[".dockerconfigjson"], "base64").toString("utf8");
    expect(JSON.parse(pullConfig)).toEqual({
      auths: { [registryHost]: { auth: Buffer.from(`${USER}:${PASSWORD}`).toString("base64") } },
    });
    const pod = docs[2].spec.template.spec;
    expect(pod.containers[0].image).toBe(image);
    expect(pod.imagePullSecrets).toEqual([{ name: pull.metadata.name }]);
    expect(docs[2].metadata.namespace).toBe("agents");
    // Nothing reported by a dry run: the revision still waits.
    expect((await api.get(`/v2/deployments/${id}/revisions/${rev}`)).body.status).toBe("AWAITING_DEPLOY");

    // Pulled from the registry with the pull secret's credentials (the local copy was removed after the push).
    expect((await exec("docker", ["image", "inspect", image])).code).not.toBe(0);
    const pullDir = join(tmp, "pull-config");
    mkdirSync(pullDir);
    writeFileSync(join(pullDir, "config.json"), pullConfig);
    await docker(["--config", pullDir, "pull", image]);
    images.push(image);

    // It serves the project: /ok and a run, on a free port of the host's loopback.
    const port = await freePort();
    const name = `hangar-test-cp-image-${run}`;
    containers.push(name);
    await docker([
      "run",
      "-d",
      "--name",
      name,
      "--network",
      "host",
      "-e",
      `PORT=${port}`,
      "-e",
      "HANGAR_SCHEMAS_AHEAD=false",
      image,
    ]);
    const url = `http://127.0.0.1:${port}`;
    await waitForOk(url, async () => {
      const r = await exec("docker", ["logs", name]);
      return r.stdout + r.stderr;
    });
    expect((await chatRun(url)).reply).toContain("Hello from Hangar!");
    // The project as built in the sandbox: its files, and Hangar's modules for a project without package.json.
    const listing = await docker(["exec", name, "sh", "-c", "pwd; readlink node_modules; id -u"]);
    expect(listing.split("\n")).toEqual(["/deps/agent-on-k8s", "/opt/hangar/node_modules", "10001"]);
  });
});
