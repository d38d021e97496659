// Security (issue 12, item 3): run webhooks cannot be aimed at internal addresses. Every loopback, private,
// link-local, CGNAT, unique-local, metadata and IPv4-in-IPv6 form is refused at creation (422 naming `webhook`);
// a redirect is followed only through the same check, a bounded number of times; connections are made to the
// addresses the check saw. All listeners are on loopback inside this test; nothing else is ever contacted.
import { randomUUID } from "node:crypto";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  BlockedAddressError,
  classifyAddress,
  guardedLookup,
  refusal,
  webhookPolicy,
} from "../../src/runs/net-policy.ts";
import { loadSettings, type Env } from "../../src/lib/settings.ts";
import { httpError } from "../helpers/http.ts";
import {
  cleanupDir,
  EXAMPLE_CONFIG,
  noRetryClient,
  runHangar,
  startHangar,
  tempDir,
  type HangarProcess,
} from "../helpers/server.ts";

/** The webhook policy of an environment. */
const policyOf = (env: Env) => webhookPolicy(loadSettings(env).webhooks);

interface Hit {
  path: string;
  method: string;
  body: string;
}

/** A loopback listener that records every request; `/redirect?to=U` answers 307 to U, `/loop` to itself. */
async function listener(): Promise<{ server: Server; port: number; hits: Hit[] }> {
  const hits: Hit[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const u = new URL(req.url ?? "/", "http://x");
      hits.push({ path: u.pathname + u.search, method: req.method ?? "", body });
      if (u.pathname === "/redirect") {
        res.writeHead(307, { location: u.searchParams.get("to") ?? "/" });
      } else if (u.pathname === "/loop") {
        res.writeHead(307, { location: `/loop?tag=${u.searchParams.get("tag")}` });
      } else res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { server, port: (server.address() as AddressInfo).port, hits };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `fn` is true; fails naming `what` after a bound. */
async function until(what: string, fn: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

let a: Awaited<ReturnType<typeof listener>>;
let b: Awaited<ReturnType<typeof listener>>;
/** Default settings: nothing internal is reachable. */
let strict: HangarProcess;
/** HANGAR_WEBHOOK_ALLOW_PRIVATE=true, and only 127.0.0.1:<a's port> of loopback (HANGAR_WEBHOOK_ALLOW_ADDRESSES). */
let opened: HangarProcess;

beforeAll(async () => {
  a = await listener();
  b = await listener();
  [strict, opened] = await Promise.all([
    startHangar(),
    startHangar({
      env: {
        HANGAR_WEBHOOK_ALLOW_PRIVATE: "true",
        HANGAR_WEBHOOK_ALLOW_ADDRESSES: `127.0.0.1:${a.port}`,
      },
    }),
  ]);
});

afterAll(async () => {
  for (const s of [strict, opened]) {
    if (!s) continue;
    await s.stop();
    cleanupDir(s.dataDir);
  }
  for (const l of [a, b]) if (l) await new Promise<void>((r) => l.server.close(() => r()));
});

/** Creates a run (delayed an hour, so an accepted webhook is never called) and returns the error or null. */
async function createWith(server: HangarProcess, webhook: string) {
  const client = noRetryClient(server.url);
  const thread = await client.threads.create();
  const created = client.runs.create(thread.thread_id, "chat", {
    input: { messages: [{ role: "user", content: "hook" }] },
    webhook,
    afterSeconds: 3600,
  });
  if (await created.then(() => true).catch(() => false)) return null;
  const err = await httpError(created);
  return { ...err, runs: await client.runs.list(thread.thread_id) };
}

describe("webhooks: internal addresses refused at creation", () => {
  // Attack: SSRF to this host through the IPv4-in-IPv6 and other spellings of loopback, through names of this
  // host, and into private networks and the cloud metadata endpoint.
  it("every loopback, private, link-local, CGNAT, unique-local, metadata and mapped form is a 422", async () => {
    const p = b.port;
    const forms = [
      `http://[::ffff:127.0.0.1]:${p}/hook`,
      `http://[::ffff:7f00:1]:${p}/hook`,
      `http://[0:0:0:0:0:ffff:127.0.0.1]:${p}/hook`,
      `http://[::127.0.0.1]:${p}/hook`,
      `http://[::ffff:0:127.0.0.1]:${p}/hook`,
      `http://[64:ff9b::7f00:1]:${p}/hook`,
      `http://[2002:7f00:1::]:${p}/hook`,
      `http://[::1]:${p}/hook`,
      `http://[::]:${p}/hook`,
      `http://127.0.0.1:${p}/hook`,
      `http://127.1:${p}/hook`,
      `http://0x7f000001:${p}/hook`,
      `http://2130706433:${p}/hook`,
      `http://0.0.0.0:${p}/hook`,
      `http://localhost:${p}/hook`,
      `http://LOCALHOST.:${p}/hook`,
      `http://hooks.localhost:${p}/hook`,
      "http://10.0.0.1/hook",
      "http://172.16.0.1/hook",
      "http://172.31.255.254/hook",
      "http://192.168.1.1/hook",
      "http://169.254.169.254/latest/meta-data/",
      "http://[::ffff:169.254.169.254]/latest/meta-data/",
      "http://[fd00:ec2::254]/latest/meta-data/",
      "http://100.64.0.1/hook",
      "http://[fc00::1]/hook",
      "http://[fd12:3456::1]/hook",
      "http://[fe80::1]/hook",
      "http://[::ffff:10.0.0.1]/hook",
      "http://[::ffff:a00:1]/hook",
      "http://[64:ff9b::10.0.0.1]/hook",
      "http://224.0.0.1/hook",
      "http://255.255.255.255/hook",
      "http://[ff02::1]/hook",
    ];
    const accepted: string[] = [];
    for (const url of forms) {
      const err = await createWith(strict, url);
      if (!err) {
        accepted.push(url);
        continue;
      }
      expect(err.status, url).toBe(422);
      expect(err.body.detail, url).toMatch(/^webhook: /);
      expect(err.runs, url).toEqual([]);
    }
    expect(accepted).toEqual([]);
    expect(b.hits).toEqual([]);
  });

  // Attack: the same through a cron, whose runs would call the webhook later: refused when the cron is
  // created or patched, nothing stored.
  it("a cron's webhook is checked at create and patch", async () => {
    const hook = `http://[::ffff:127.0.0.1]:${b.port}/hook`;
    const created = await fetch(`${strict.url}/runs/crons`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ assistant_id: "chat", schedule: "0 0 1 1 *", webhook: hook }),
    });
    expect(created.status).toBe(422);
    expect(((await created.json()) as { detail: string }).detail).toMatch(/^webhook: /);
    expect(await strict.client.crons.search({})).toEqual([]);
    const cron = await strict.client.crons.create("chat", { schedule: "0 0 1 1 *" });
    const patched = await fetch(`${strict.url}/runs/crons/${cron.cron_id}`, {
      method: "PATCH",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ webhook: hook }),
    });
    expect(patched.status).toBe(422);
    const after = await strict.client.crons.search({});
    expect(after.map((c) => (c.payload as { webhook?: string }).webhook ?? null)).toEqual([null]);
    await strict.client.crons.delete(cron.cron_id);
  });

  // Attack: the operator opened private addresses (HANGAR_WEBHOOK_ALLOW_PRIVATE); that must not open loopback
  // (also spelt as an IPv4-mapped address) nor the metadata endpoint.
  it("HANGAR_WEBHOOK_ALLOW_PRIVATE opens private ranges only", async () => {
    for (const url of ["http://10.0.0.1/hook", "http://[fd00::1]/hook", "http://[::ffff:192.168.0.9]/hook"]) {
      expect(await createWith(opened, url), url).toBeNull();
    }
    for (const url of [
      `http://127.0.0.1:${b.port}/hook`,
      `http://[::ffff:127.0.0.1]:${b.port}/hook`,
      `http://localhost:${b.port}/hook`,
      "http://169.254.169.254/latest/meta-data/",
      "http://[::ffff:169.254.169.254]/latest/meta-data/",
    ]) {
      const err = await createWith(opened, url);
      expect(err?.status, url).toBe(422);
      expect(err?.body.detail, url).toMatch(/^webhook: /);
    }
    expect(b.hits).toEqual([]);
  });
});

describe("webhooks: redirects and the connection's address", () => {
  /** Runs the chat graph with `webhook` on the opened server; resolves once the sender is done with it. */
  async function deliver(webhook: string, done: () => boolean): Promise<string> {
    const client = noRetryClient(opened.url);
    await client.runs.wait(null, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, webhook });
    await until(`the webhook ${webhook} to be sent or refused`, () => done());
    return opened.output();
  }

  // Attack: an allowed receiver answers a redirect to loopback (or a name or mapped form of it).
  it("a redirect from an allowed target to loopback is not followed", async () => {
    // The first hop is 127.0.0.1:<a> (allowed by HANGAR_WEBHOOK_ALLOW_ADDRESSES), written in its IPv4-mapped
    // form, which the code before this change also accepted: so it shows the redirect itself being followed.
    for (const to of [
      `http://127.0.0.1:${b.port}/stolen`,
      `http://localhost:${b.port}/stolen`,
      `http://[::ffff:7f00:1]:${b.port}/stolen`,
      `http://[::1]:${b.port}/stolen`,
    ]) {
      const tag = randomUUID();
      const webhook = `http://[::ffff:127.0.0.1]:${a.port}/redirect?tag=${tag}&to=${encodeURIComponent(to)}`;
      const out = await deliver(
        webhook,
        () => b.hits.length > 0 || opened.output().includes(`webhook ${webhook}: refused: redirect 1 to`),
      );
      expect(b.hits, to).toEqual([]);
      expect(a.hits.filter((h) => h.path.includes(tag))).toHaveLength(1);
      expect(out).toContain(`webhook ${webhook}: refused: redirect 1 to`);
    }
  });

  it("a redirect between allowed targets is followed, re-POSTing the run (307)", async () => {
    const tag = randomUUID();
    const to = `http://127.0.0.1:${a.port}/final?tag=${tag}`;
    const webhook = `http://127.0.0.1:${a.port}/redirect?to=${encodeURIComponent(to)}`;
    const final = () => a.hits.find((h) => h.path === `/final?tag=${tag}`);
    await deliver(webhook, () => Boolean(final()));
    expect(final()!.method).toBe("POST");
    expect(JSON.parse(final()!.body).status).toBe("success");
  });

  // Attack: a receiver that redirects forever keeps the server busy.
  it("redirects are followed a bounded number of times", async () => {
    const tag = randomUUID();
    const webhook = `http://127.0.0.1:${a.port}/loop?tag=${tag}`;
    const hits = () => a.hits.filter((h) => h.path === `/loop?tag=${tag}`).length;
    const out = await deliver(
      webhook,
      () => hits() > 6 || opened.output().includes(`webhook ${webhook}: refused`),
    );
    expect(out).toContain(`webhook ${webhook}: refused: more than 5 redirects`);
    expect(hits()).toBe(6);
  });
});

describe("webhooks: the address policy", () => {
  it("classifies the IPv4-in-IPv6 forms as the address they carry", () => {
    const cases: [string, string][] = [
      ["::ffff:127.0.0.1", "loopback"],
      ["::ffff:7f00:1", "loopback"],
      ["::127.0.0.1", "loopback"],
      ["64:ff9b::a9fe:a9fe", "metadata"],
      ["2002:a00:1::1", "private"],
      // Teredo: the client address is stored inverted (here 127.0.0.1).
      ["2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"],
      ["::ffff:8.8.8.8", "public"],
      ["2606:4700:4700::1111", "public"],
      ["1.1.1.1", "public"],
      ["172.15.255.255", "public"],
      ["172.32.0.0", "public"],
      ["100.63.255.255", "public"],
      ["100.128.0.0", "public"],
    ];
    expect(cases.map(([ip]) => [ip, classifyAddress(ip)?.kind])).toEqual(cases);
  });

  it("HANGAR_WEBHOOK_ALLOW_LOOPBACK opens loopback, not private or metadata addresses", () => {
    const policy = policyOf({ HANGAR_WEBHOOK_ALLOW_LOOPBACK: "true" });
    expect(refusal("::ffff:127.0.0.1", 80, policy)).toBeNull();
    expect(refusal("10.0.0.1", 80, policy)).toMatch(/HANGAR_WEBHOOK_ALLOW_PRIVATE/);
    expect(refusal("169.254.169.254", 80, policy)).toMatch(/metadata/);
    expect(() => policyOf({ HANGAR_WEBHOOK_ALLOW_ADDRESSES: "10.0.0.0/99" })).toThrow(
      /HANGAR_WEBHOOK_ALLOW_ADDRESSES/,
    );
  });

  it("a malformed HANGAR_WEBHOOK_ALLOW_ADDRESSES stops the server at start, naming it", async () => {
    const dir = tempDir();
    const args = ["--config", EXAMPLE_CONFIG, "--port", "0", "--host", "127.0.0.1", "--data-dir", dir];
    const { code, output } = await runHangar(["dev", ...args, "--no-reload"], {
      HANGAR_WEBHOOK_ALLOW_ADDRESSES: "10.0.0.0/8,not-an-address",
    });
    cleanupDir(dir);
    expect(code).toBe(1);
    expect(output).toContain('HANGAR_WEBHOOK_ALLOW_ADDRESSES: "not-an-address" is not an address');
  });

  /** A POST through node:http with the sender's lookup, the name resolved by `resolve` (no DNS is asked). */
  function post(port: number, env: NodeJS.ProcessEnv, resolved: string): Promise<number | Error> {
    const lookup = guardedLookup(policyOf(env), port, (_name, _opts, cb) =>
      cb(null, [{ address: resolved, family: resolved.includes(":") ? 6 : 4 }]),
    );
    return new Promise((res) => {
      const req = request(
        { host: "receiver.example", port, path: "/pinned", method: "POST", lookup, agent: false },
        (r) => {
          r.resume();
          res(r.statusCode ?? 0);
        },
      );
      req.on("error", (e) => res(e));
      req.end("{}");
    });
  }

  // Attack: DNS rebinding, a name that resolved to a public address at creation resolves to loopback when sent.
  it("the sender's connection goes to the addresses its check saw, and a name resolving inside is refused", async () => {
    const refused = await post(b.port, {}, "127.0.0.1");
    expect(refused).toBeInstanceOf(BlockedAddressError);
    expect(String(refused)).toMatch(/receiver\.example resolves to 127\.0\.0\.1 is loopback/);
    const mapped = await post(b.port, {}, "::ffff:127.0.0.1");
    expect(mapped).toBeInstanceOf(BlockedAddressError);
    expect(b.hits).toEqual([]);
    // Allowed, the connection goes exactly where the checked lookup said.
    expect(await post(b.port, { HANGAR_WEBHOOK_ALLOW_ADDRESSES: `127.0.0.1:${b.port}` }, "127.0.0.1")).toBe(
      200,
    );
    expect(b.hits.map((h) => h.path)).toEqual(["/pinned"]);
    b.hits.length = 0;
  });
});
