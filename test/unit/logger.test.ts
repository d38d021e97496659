// The logger's pure parts: LOG_LEVEL and LOG_FORMAT (read through the settings), secrets scrubbed from messages
// and fields, and the one-line description of an entry (pretty mode, and the control plane's deployment logs).
import { describe, expect, it } from "vitest";
import {
  configureLogging,
  createLogger,
  describeEntry,
  protectSecretEnv,
  protectSecrets,
  REDACTED,
  scrub,
} from "../../src/lib/logger.ts";
import { loadSettings } from "../../src/lib/settings.ts";

/** A JSON logger whose entries are kept, parsed. */
function captured(): { log: ReturnType<typeof createLogger>; entries: Record<string, unknown>[] } {
  const entries: Record<string, unknown>[] = [];
  const log = createLogger({ destination: { write: (s: string) => void entries.push(JSON.parse(s)) } });
  return { log, entries };
}

describe("configureLogging", () => {
  it("takes LOG_LEVEL, and LOG_FORMAT or else the command's default", () => {
    const log = configureLogging("pretty", { logging: loadSettings({ LOG_LEVEL: "Debug" }).logging });
    expect(log.level).toBe("debug");
    expect(loadSettings({ LOG_FORMAT: "JSON" }).logging.format).toBe("json");
    expect(() => loadSettings({ LOG_LEVEL: "loud" }).logging).toThrow(/LOG_LEVEL/);
  });
});

describe("secrets", () => {
  it("hides URL passwords, registered values and secret env values in messages, fields and errors", () => {
    protectSecrets(["deploy-secret-1234"]);
    protectSecretEnv({
      OPENAI_API_KEY: "sk-env-secret-5678",
      HANGAR_API_KEYS: "list-key-one,list-key-two",
      HANGAR_REDIS_PREFIX: "hangar-prefix:",
      DATABASE_URL: "postgres://app:db-pass-3141@db.internal:5432/app",
      REDIS_URL: "redis://cache.internal:6379",
    });
    // A URL's password is hidden wherever it shows; the server it names is not a secret.
    expect(scrub("password db-pass-3141")).toBe(`password ${REDACTED}`);
    expect(scrub("redis://cache.internal:6379 is down")).toBe("redis://cache.internal:6379 is down");
    expect(scrub("sent list-key-two")).toBe(`sent ${REDACTED}`);
    expect(scrub("postgres://user:pw-9911@db:5432/x")).toBe(`postgres://user:${REDACTED}@db:5432/x`);
    const { log, entries } = captured();
    log.info({ detail: "has deploy-secret-1234" }, "key sk-env-secret-5678 at redis://:pw-4242@r:6379");
    log.error({ err: new Error("failed with deploy-secret-1234") }, "boom");
    log.info({ headers: { authorization: "Bearer abc", "x-api-key": "k-1", cookie: "c" } }, "headers");
    const text = JSON.stringify(entries);
    for (const s of ["deploy-secret-1234", "sk-env-secret-5678", "pw-4242", "Bearer abc", "k-1"]) {
      expect(text).not.toContain(s);
    }
    // Only variables named as secrets are hidden.
    expect(scrub("prefix hangar-prefix:")).toBe("prefix hangar-prefix:");
  });
});

describe("describeEntry", () => {
  it("gives the message, the context as key=value, and an error's stack indented below", () => {
    const line = describeEntry({
      level: 50,
      time: 1,
      pid: 2,
      msg: "node threw",
      run_id: "r1",
      note: "two words",
      err: { type: "Error", message: "x", stack: "Error: x\n    at f (g.ts:1:1)" },
    });
    expect(line).toBe('node threw run_id=r1 note="two words"\n    Error: x\n        at f (g.ts:1:1)');
  });

  it("leaves out what a request line already says", () => {
    const entry = { msg: "GET /ok 200 1.5ms", method: "GET", url: "/ok", statusCode: 200, responseTime: 1.5 };
    expect(describeEntry({ ...entry, reqId: "req-1" })).toBe("GET /ok 200 1.5ms");
  });
});
