// Unit: the settings module: every variable parsed with its default and type, errors naming the variable,
// langgraph.json's typed sections (unknown keys warned about), and docs/configuration.md listing every variable.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { envVars, loadSettings, SettingsError } from "../../src/lib/settings.ts";
import {
  documentedTable,
  DOC_PATH,
  renderEnvTable,
  renderIgnoredTable,
  tableRows,
} from "../../src/lib/settings/doc.ts";
import { ignoredOfficialVars } from "../../src/lib/settings/official-ignored.ts";
import { ConfigError, loadProjectConfig } from "../../src/lib/settings/project.ts";

describe("environment variables", () => {
  it("unset: every default", () => {
    const s = loadSettings({});
    expect(s.server).toMatchObject({
      port: undefined,
      apiKeys: [],
      jobsPerWorker: 10,
      maxAttempts: 3,
      resumableTtlSeconds: 600,
      streamBufferBytes: 65536,
      streamStallSeconds: 30,
      sqliteSync: "FULL",
      sweepIntervalMs: undefined,
      recoverOnStart: true,
      internalToken: undefined,
    });
    expect(s.webhooks).toEqual({ allowLoopback: false, allowPrivate: false, allowAddresses: [] });
    expect(s.cluster).toMatchObject({
      databaseSchema: "public",
      redisPrefix: "hangar:",
      poolSize: 10,
      leaseSeconds: 30,
      queuePollMs: 1000,
      shutdownGraceSeconds: 20,
      connectTimeoutSeconds: 60,
    });
    expect(s.controlPlane).toMatchObject({
      bootstrapPlan: "plus",
      maxUploadBytes: 200 * 1024 * 1024,
      maxExtractedMb: 1024,
      sourceRoots: [],
      sandboxEnv: [],
    });
    expect(s.sandbox).toEqual({
      mode: "auto",
      uids: { first: 600000, last: 699999 },
      memoryMb: 2048,
      cpus: 1,
      pids: 1024,
      hide: [],
    });
    expect(s.logging).toEqual({ level: "info", format: undefined });
  });

  it("set: typed values (lists split, flags and choices in any case, empty is unset)", () => {
    const s = loadSettings({
      PORT: "8080",
      HANGAR_API_KEYS: " a, b ,,c ",
      HANGAR_LEASE_SECONDS: "5",
      HANGAR_SQLITE_SYNC: "normal",
      HANGAR_RECOVER_ON_START: "FALSE",
      HANGAR_WEBHOOK_ALLOW_LOOPBACK: "1",
      HANGAR_WEBHOOK_ALLOW_ADDRESSES: "10.0.0.0/8, [fd00::1]:443",
      HANGAR_REDIS_PREFIX: "",
      HANGAR_DATABASE_SCHEMA: "",
      HANGAR_CP_SANDBOX: "OFF",
      HANGAR_CP_SANDBOX_UIDS: "1000-1999",
      HANGAR_CP_SOURCE_ROOTS: "/a:/b:",
    });
    expect(s.server.port).toBe(8080);
    expect(s.server.apiKeys).toEqual(["a", "b", "c"]);
    expect(s.server.sqliteSync).toBe("NORMAL");
    expect(s.server.recoverOnStart).toBe(false);
    expect(s.webhooks).toEqual({
      allowLoopback: true,
      allowPrivate: false,
      allowAddresses: ["10.0.0.0/8", "[fd00::1]:443"],
    });
    expect(s.cluster.leaseSeconds).toBe(5);
    // An empty prefix is a prefix; an empty schema is the default one.
    expect(s.cluster.redisPrefix).toBe("");
    expect(s.cluster.databaseSchema).toBe("public");
    expect(s.sandbox.mode).toBe("off");
    expect(s.sandbox.uids).toEqual({ first: 1000, last: 1999 });
    expect(s.controlPlane.sourceRoots).toEqual(["/a", "/b"]);
  });

  it("a malformed value: a SettingsError naming the variable, what it must be and the value", () => {
    const s = loadSettings({ HANGAR_LEASE_SECONDS: "x", HANGAR_QUEUE_POLL_MS: "0" });
    expect(() => s.cluster).toThrow(SettingsError);
    expect(() => s.cluster).toThrow(
      "HANGAR_LEASE_SECONDS must be a positive integer, got 'x'; " +
        "HANGAR_QUEUE_POLL_MS must be a positive integer, got '0'",
    );
    // Other groups are not affected: a command reads only its own.
    expect(s.server.maxAttempts).toBe(3);
    const bad = (env: Record<string, string>, group: "server" | "sandbox" | "controlPlane") => () =>
      loadSettings(env)[group];
    expect(bad({ PORT: "70000" }, "server")).toThrow("PORT must be a port number (0-65535), got '70000'");
    expect(bad({ HANGAR_SQLITE_SYNC: "fast" }, "server")).toThrow(
      "HANGAR_SQLITE_SYNC must be one of OFF, NORMAL, FULL, EXTRA, got 'fast'",
    );
    expect(bad({ HANGAR_RECOVER_ON_START: "maybe" }, "server")).toThrow(
      "HANGAR_RECOVER_ON_START must be true or false",
    );
    expect(bad({ HANGAR_CP_SANDBOX_UIDS: "10-20" }, "sandbox")).toThrow(
      /HANGAR_CP_SANDBOX_UIDS must be a range/,
    );
    expect(bad({ HANGAR_CP_SANDBOX_MEMORY_MB: "32" }, "sandbox")).toThrow(
      "HANGAR_CP_SANDBOX_MEMORY_MB must be an integer of at least 64, got '32'",
    );
    expect(bad({ HANGAR_CP_MAX_UPLOAD_BYTES: "lots" }, "controlPlane")).toThrow(/HANGAR_CP_MAX_UPLOAD_BYTES/);
  });

  it("the official Agent Server's names: read as Hangar's, refused when two names of one setting disagree", () => {
    const s = loadSettings({
      POSTGRES_URI: "postgres://db/x",
      REDIS_URI: "redis://r:6379",
      REDIS_KEY_PREFIX: "",
      N_JOBS_PER_WORKER: "3",
      BG_JOB_MAX_RETRIES: "0",
      BG_JOB_SHUTDOWN_GRACE_PERIOD_SECS: "180",
      RESUMABLE_STREAM_TTL_SECONDS: "120",
      LANGGRAPH_POSTGRES_POOL_MAX_SIZE: "7",
      LOG_JSON: "true",
    });
    expect(s.cluster).toMatchObject({
      databaseUrl: "postgres://db/x",
      redisUrl: "redis://r:6379",
      redisPrefix: "",
      poolSize: 7,
      shutdownGraceSeconds: 180,
    });
    expect(s.server).toMatchObject({ jobsPerWorker: 3, maxAttempts: 1, resumableTtlSeconds: 120 });
    expect(s.logging.format).toBe("json");
    expect(loadSettings({ LOG_JSON: "false" }).logging.format).toBe("pretty");
    // The same value under both names is one setting.
    expect(
      loadSettings({ DATABASE_URL: "postgres://a", DATABASE_URI: "postgres://a" }).cluster.databaseUrl,
    ).toBe("postgres://a");
    const refused = (env: Record<string, string>, group: "cluster" | "logging" | "server") => {
      try {
        void loadSettings(env)[group];
      } catch (e) {
        expect(e).toBeInstanceOf(SettingsError);
        return (e as Error).message;
      }
      throw new Error(`${JSON.stringify(env)} was accepted`);
    };
    const both = refused({ DATABASE_URL: "postgres://a", DATABASE_URI: "postgres://secret-b" }, "cluster");
    expect(both).toBe(
      "DATABASE_URL and DATABASE_URI name the same setting and are set differently: set one of them",
    );
    expect(refused({ LOG_FORMAT: "pretty", LOG_JSON: "true" }, "logging")).toContain(
      "LOG_FORMAT and LOG_JSON",
    );
    expect(refused({ LOG_JSON: "maybe" }, "logging")).toBe("LOG_JSON must be true or false, got 'maybe'");
    expect(refused({ BG_JOB_MAX_RETRIES: "-1" }, "server")).toContain(
      "BG_JOB_MAX_RETRIES must be an integer",
    );
    expect(refused({ N_JOBS_PER_WORKER: "0" }, "server")).toBe(
      "N_JOBS_PER_WORKER must be a positive integer, got '0'",
    );
  });

  it("parsed once: later changes to the environment are not seen", () => {
    const env: Record<string, string> = { HANGAR_MAX_ATTEMPTS: "4" };
    const s = loadSettings(env);
    env.HANGAR_MAX_ATTEMPTS = "9";
    expect(s.server.maxAttempts).toBe(4);
  });

  it("every variable is declared once, with a doc string and a type", () => {
    const names = envVars().map(({ v }) => v.name);
    expect(new Set(names).size).toBe(names.length);
    for (const { v, usedBy } of envVars()) {
      expect(v.doc.length, v.name).toBeGreaterThan(10);
      expect(v.type, v.name).not.toBe("");
      expect(usedBy.length, v.name).toBeGreaterThan(0);
    }
  });
});

describe("docs/configuration.md", () => {
  it("lists every variable of the schema, as generated from it", () => {
    const doc = readFileSync(DOC_PATH, "utf8");
    const table = documentedTable(doc);
    expect(table, "the env-vars markers of docs/configuration.md").toBeDefined();
    // Compared cell by cell: prettier pads the columns. `npx tsx src/lib/settings/doc.ts` regenerates it.
    expect(tableRows(table!)).toEqual(tableRows(renderEnvTable()));
    for (const { v } of envVars()) expect(doc).toContain(`\`${v.name}\``);
  });

  it("lists the official server's variables Hangar ignores, as generated", () => {
    const table = documentedTable(readFileSync(DOC_PATH, "utf8"), "official-ignored");
    expect(table, "the official-ignored markers of docs/configuration.md").toBeDefined();
    expect(tableRows(table!)).toEqual(tableRows(renderIgnoredTable()));
  });
});

describe("the official server's variables Hangar ignores", () => {
  it("one line each, naming it and what to use instead; nothing for what Hangar reads", () => {
    const lines = ignoredOfficialVars({
      BG_JOB_ISOLATED_LOOPS: "true",
      FF_USE_CORE_API: "true",
      FF_USE_JS_API: "1",
      CORS_ALLOW_ORIGINS: "https://a.example",
      MOUNT_PREFIX: "",
      N_JOBS_PER_WORKER: "3",
      LANGSERVE_GRAPHS: "{}",
      LANGSMITH_API_KEY: "key",
    });
    expect(lines).toHaveLength(4);
    expect(lines[0]).toBe(
      "BG_JOB_ISOLATED_LOOPS is an official Agent Server variable that Hangar ignores: to run graphs with " +
        "synchronous code off the API's thread, set HANGAR_GRAPH_THREADS",
    );
    expect(lines[1]).toContain("CORS_ALLOW_ORIGINS is an official Agent Server variable that Hangar ignores");
    expect(lines[1]).toContain("http.cors.allow_origins");
    expect(lines[2]).toContain("FF_USE_CORE_API is an official");
    expect(lines[3]).toContain("FF_USE_JS_API is an official");
    // Not one of those Hangar reads.
    const read = new Set(envVars().flatMap(({ v }) => [v.name, ...v.aliases]));
    for (const name of ["BG_JOB_ISOLATED_LOOPS", "CORS_ALLOW_ORIGINS", "MOUNT_PREFIX", "REDIS_CLUSTER"]) {
      expect(read.has(name), name).toBe(false);
    }
  });
});

describe("langgraph.json sections", () => {
  const dir = mkdtempSync(join(tmpdir(), "hangar-settings-unit-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const load = (config: Record<string, unknown>) => {
    const file = join(dir, `langgraph-${n++}.json`);
    writeFileSync(file, JSON.stringify({ graphs: { g: "./g.ts:graph" }, ...config }));
    return loadProjectConfig(file);
  };

  it("typed sections: store, checkpointer, auth, http", () => {
    const p = load({
      store: { index: { embed: "./embed.ts:embed", dims: 3 } },
      checkpointer: { ttl: { strategy: "keep_latest", default_ttl: 60, sweep_interval_minutes: 2 } },
      auth: { path: "./auth.ts:auth", disable_studio_auth: true },
      http: { cors: { allow_origins: ["https://a.example"] }, disable_store: true, mount_prefix: "/api" },
    });
    expect(p.raw.store?.index?.dims).toBe(3);
    expect(p.raw.checkpointer?.ttl?.strategy).toBe("keep_latest");
    expect(p.raw.auth?.path).toBe("./auth.ts:auth");
    expect(p.raw.http?.cors?.allow_origins).toEqual(["https://a.example"]);
    expect(p.warnings).toEqual([]);
  });

  it("null sections are absent", () => {
    const p = load({ store: null, checkpointer: null, auth: null, http: null });
    expect(p.raw.http ?? undefined).toBeUndefined();
    expect(p.warnings).toEqual([]);
  });

  it("unknown keys are kept and warned about, with their path", () => {
    const p = load({
      http: { disable_everything: true, cors: { allow_origins: ["*"], allow_teapots: true } },
      store: { index: { embed: "./e.ts:e", dims: 2, model: "x" } },
    });
    expect(p.warnings.map((w) => w.replace(/^.*?\.json: /, "")).sort()).toEqual([
      "http.cors.allow_teapots is not a setting Hangar knows; ignored",
      "http.disable_everything is not a setting Hangar knows; ignored",
      "store.index.model is not a setting Hangar knows; ignored",
    ]);
    expect((p.raw.http as Record<string, unknown>).disable_everything).toBe(true);
  });

  it("the official image's variables give sections in place of the file's, paths relative to its directory", () => {
    const file = join(dir, "langgraph-env.json");
    writeFileSync(
      file,
      JSON.stringify({
        graphs: { g: "./g.ts:graph" },
        http: { app: "./app.ts:app" },
        auth: { path: "./a.ts:a" },
      }),
    );
    const p = loadProjectConfig(file, {
      LANGSERVE_GRAPHS: JSON.stringify({
        g: `${dir}/g.ts:graph`,
        h: { path: "./h.ts:graph", description: "h" },
      }),
      LANGGRAPH_HTTP: JSON.stringify({ disable_store: true, disable_dance: true }),
      LANGGRAPH_AUTH: JSON.stringify({ path: "./a.ts:a" }),
      LANGGRAPH_STORE: "",
    });
    expect(p.hasFile).toBe(true);
    expect(p.fromEnv).toEqual(["LANGSERVE_GRAPHS", "LANGGRAPH_AUTH", "LANGGRAPH_HTTP"]);
    expect(p.graphs.map((g) => [g.graphId, g.file, g.exportName])).toEqual([
      ["g", join(dir, "g.ts"), "graph"],
      ["h", join(dir, "h.ts"), "graph"],
    ]);
    expect(p.raw.http).toEqual({ disable_store: true, disable_dance: true });
    expect(p.warnings.sort()).toEqual([
      `LANGGRAPH_HTTP gives the http section: used instead of ${file}'s, which differs`,
      "LANGGRAPH_HTTP: http.disable_dance is not a setting Hangar knows; ignored",
      `LANGSERVE_GRAPHS gives the graphs section: used instead of ${file}'s, which differs`,
    ]);
    // No file: LANGSERVE_GRAPHS is enough, the directory named is the project's.
    const bare = loadProjectConfig(join(dir, "absent", "langgraph.json"), {
      LANGSERVE_GRAPHS: '{"g":"./src/g.ts:graph"}',
    });
    expect(bare.hasFile).toBe(false);
    expect(bare.projectDir).toBe(join(dir, "absent"));
    expect(bare.graphs[0].file).toBe(join(dir, "absent", "src", "g.ts"));
  });

  it("a variable that is not JSON, or not its section's shape, is a ConfigError naming it and the field", () => {
    const refused = (env: Record<string, string>) => {
      try {
        loadProjectConfig(join(dir, "absent.json"), env);
      } catch (e) {
        expect(e).toBeInstanceOf(ConfigError);
        return (e as Error).message;
      }
      throw new Error(`${JSON.stringify(env)} was accepted`);
    };
    const graphs = { LANGSERVE_GRAPHS: '{"g":"./g.ts:graph"}' };
    expect(refused({ LANGSERVE_GRAPHS: "{g:" })).toMatch(
      /^LANGSERVE_GRAPHS: invalid JSON \(the graphs section\): /,
    );
    expect(refused({ ...graphs, LANGGRAPH_UI: '["./ui.tsx"]' })).toMatch(
      /^LANGGRAPH_UI: invalid ui section:\n {2}- ui: /,
    );
    expect(refused({ ...graphs, LANGGRAPH_UI_CONFIG: '{"shared": "react"}' })).toContain("ui_config.shared:");
    expect(refused({ ...graphs, LANGGRAPH_STORE: '{"index": {"embed": "./e.ts:e", "dims": 0}}' })).toContain(
      "LANGGRAPH_STORE: invalid store section:\n  - store.index.dims:",
    );
    expect(refused({ ...graphs, LANGGRAPH_CHECKPOINTER: '"postgres"' })).toContain(
      "LANGGRAPH_CHECKPOINTER: invalid checkpointer section",
    );
    expect(refused({ ...graphs, LANGGRAPH_HTTP: '{"cors": {"allow_origins": "*"}}' })).toContain(
      "  - http.cors.allow_origins: ",
    );
    expect(refused({ LANGGRAPH_HTTP: "{}" })).toContain(
      "absent.json: file not found (nor are the graphs given by LANGSERVE_GRAPHS)",
    );
  });

  it("a wrong type is a ConfigError naming the file and the key's path", () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ http: { cors: { allow_origins: "https://a.example" } } }, /http\.cors\.allow_origins/],
      [{ http: { disable_runs: "yes" } }, /http\.disable_runs/],
      [{ store: { index: { embed: "./e.ts:e", dims: 0 } } }, /store\.index\.dims/],
      [{ checkpointer: { ttl: { strategy: "archive" } } }, /checkpointer\.ttl\.strategy/],
      [{ auth: { path: 42 } }, /auth\.path/],
      [{ http: { cors: { allow_origin_regex: "(" } } }, /http\.cors\.allow_origin_regex/],
    ];
    for (const [config, path] of cases) {
      let err: unknown;
      try {
        load(config);
      } catch (e) {
        err = e;
      }
      expect(err, JSON.stringify(config)).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/langgraph-\d+\.json: invalid configuration/);
      expect((err as Error).message).toMatch(path);
    }
  });
});
