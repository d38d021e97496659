// The process's one logger (pino): LOG_LEVEL and LOG_FORMAT (json, or pretty: one human line per entry),
// child loggers for context, and secrets (credentials in URLs, secret env values, auth headers) scrubbed.
import pino, { type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { prettyFactory } from "pino-pretty";
import { envVars, settings, type Env, type Settings } from "./settings.js";

export type { Logger };

export type LogFormat = NonNullable<Settings["logging"]["format"]>;

/** What replaces a secret in a log line. */
export const REDACTED = "[redacted]";

/** Values never written: secret env values and deployments' secrets (see `protectSecrets`). */
const secrets = new Set<string>();

/**
 * Env names whose values are secrets, beyond Hangar's own (declared `secret` in settings.ts): a project's
 * `..._KEY(S)`, `..._TOKEN(S)`, `..._SECRET`, `..._PASSWORD`, ... (e.g. `OPENAI_API_KEY` from its `.env`).
 */
const SECRET_NAME = /(^|_)(API_?KEYS?|KEYS?|TOKENS?|SECRETS?|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/** The password of a URL (`scheme://user:password@host`). */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:@/]*:)[^\s@/]+@/gi;

/** Values shorter than this are not worth hiding (and would blank common words). */
const MIN_SECRET = 6;

/** Never logs these values (a deployment's secrets, a token given at run time). */
export function protectSecrets(values: Iterable<string | undefined>): void {
  for (const v of values) if (v && v.length >= MIN_SECRET) secrets.add(v);
}

/** What of a secret env value to hide: a URL's password (the rest names a server), or the value (each item of a list). */
function secretParts(value: string): string[] {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    try {
      const { password } = new URL(value);
      return password ? [password, decodeURIComponent(password)] : [];
    } catch {
      return [value];
    }
  }
  return [value, ...value.split(",")];
}

/** Never logs the values of `env` that Hangar declares secret or whose names say so (e.g. `OPENAI_API_KEY`). */
export function protectSecretEnv(env: Env = process.env): void {
  const declared = new Set(envVars().flatMap(({ v }) => (v.secret ? [v.name] : [])));
  protectSecrets(
    Object.entries(env).flatMap(([k, v]) =>
      (declared.has(k) || SECRET_NAME.test(k)) && v ? secretParts(v) : [],
    ),
  );
}

/** `text` without URL passwords and registered secret values. */
export function scrub(text: string): string {
  let out = text.includes("://") ? text.replace(URL_PASSWORD, `$1${REDACTED}@`) : text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join(REDACTED);
  return out;
}

function scrubValue(v: unknown): unknown {
  return typeof v === "string" ? scrub(v) : v;
}

/** The top-level strings of a log call's context object, scrubbed (nested objects go through `redact`). */
function scrubObject(o: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = scrubValue(v);
  return out;
}

/** An error as logged: type, message and stack (scrubbed), and its code when it has one. */
function errSerializer(e: unknown): unknown {
  const s = pino.stdSerializers.err(e as Error) as unknown as Record<string, unknown> | undefined;
  if (!s || typeof s !== "object") return scrubValue(e);
  return scrubObject(s);
}

/** Headers and fields that hold credentials, wherever a log call puts them. */
const REDACT_PATHS = [
  "headers.authorization",
  'headers["x-api-key"]',
  "headers.cookie",
  'headers["set-cookie"]',
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  "req.headers.cookie",
  'res.headers["set-cookie"]',
  "password",
  "*.password",
  "secrets",
  "*.secrets",
  "env",
  "*.env",
];

/** Fields a pretty line does not repeat: in the message already, or noise for a reader. */
const PRETTY_OMIT = new Set([
  "level",
  "time",
  "pid",
  "hostname",
  "msg",
  "err",
  "method",
  "url",
  "statusCode",
  "responseTime",
  "reqId",
  "aborted",
]);

function prettyValue(v: unknown): string {
  if (typeof v === "string") return /[\s"=]/.test(v) || v === "" ? JSON.stringify(v) : v;
  return typeof v === "object" && v !== null ? JSON.stringify(v) : String(v);
}

/**
 * An entry as one human line: the message, its context as `key=value`, and an error's stack indented below
 * (pretty mode; and the control plane's deployment logs, for the JSON lines of their Agent Servers).
 */
export function describeEntry(log: Record<string, unknown>, messageKey = "msg"): string {
  const context = Object.entries(log)
    .filter(([k, v]) => !PRETTY_OMIT.has(k) && k !== messageKey && v !== undefined)
    .map(([k, v]) => `${k}=${prettyValue(v)}`);
  const line = [String(log[messageKey] ?? ""), ...context].filter(Boolean).join(" ");
  const err = log.err as { stack?: string; message?: string } | undefined;
  const detail = err?.stack ?? err?.message;
  return detail ? `${line}\n    ${detail.split("\n").join("\n    ")}` : line;
}

export interface LoggerSettings {
  level?: string;
  format?: LogFormat;
  /** Where lines go (pretty ones too); default stdout (both the Agent Server's and the control plane's). */
  destination?: DestinationStream;
  /** The file descriptor written when no destination is given: 1 (stdout, the default) or 2 (stderr). */
  fd?: 1 | 2;
}

/** A new root logger. */
export function createLogger(settings: LoggerSettings = {}): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    base: { pid: process.pid },
    serializers: { err: errSerializer, error: errSerializer },
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    hooks: {
      logMethod(args, method) {
        const scrubbed = args.map((a) =>
          typeof a === "string"
            ? scrub(a)
            : a && typeof a === "object" && !(a instanceof Error)
              ? scrubObject(a as Record<string, unknown>)
              : a,
        );
        return method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
  };
  const prettyOptions = {
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    hideObject: true,
    messageFormat: (log: Record<string, unknown>, messageKey: string) => describeEntry(log, messageKey),
  };
  const given = settings.destination;
  let destination: DestinationStream;
  if (settings.format === "pretty") {
    // Each JSON line made pretty and written at once (no stream of its own between pino and the descriptor: a
    // Transform stream per line cost more than the formatting). A given destination (an in-process server's
    // log buffer in tests) gets lines without colours.
    const out = given ?? descriptor(settings.fd ?? 1);
    const prettify = prettyFactory({ ...prettyOptions, ...(given ? { colorize: false } : {}) });
    destination = { write: (line: string) => void out.write(prettify(line)) };
  } else {
    destination = given ?? descriptor(settings.fd ?? 1);
  }
  return pino(options, destination);
}

/**
 * A descriptor written without blocking: a line goes out at once when no write is in flight, and the lines logged
 * meanwhile go together in the next write (one system call per line cost a run about a millisecond under load).
 * Nothing waits for a minimum length, so a line is never held back; what is still queued is written when the
 * process exits (pino flushes its destinations on exit).
 */
const descriptor = (fd: number) => pino.destination({ dest: fd, sync: false });

let root: Logger | undefined;

/**
 * Sets up the process's logger from LOG_LEVEL and LOG_FORMAT (`defaultFormat` when unset: pretty for `dev`,
 * json for `serve` and `control-plane`) and returns it; secret env values are protected from here on. A
 * malformed variable throws the settings' SettingsError, naming it.
 */
export function configureLogging(
  defaultFormat: LogFormat,
  opts: { logging?: Settings["logging"]; fd?: 1 | 2 } = {},
): Logger {
  const { level, format } = opts.logging ?? settings().logging;
  protectSecretEnv();
  configured = { defaultFormat, fd: opts.fd };
  root = createLogger({ level, format: format ?? defaultFormat, fd: opts.fd });
  return root;
}

/** How the CLI configured the process's logger (its command's default format, the descriptor). */
let configured: { defaultFormat: LogFormat; fd?: 1 | 2 } | undefined;

/**
 * Makes the process's logger again from settings parsed after a project's `.env` was applied (it may set
 * LOG_LEVEL or LOG_FORMAT; what the environment sets still wins, see applyEnv) and returns it.
 */
export function reconfigureLogging(logging: Settings["logging"]): Logger {
  root = createLogger({
    level: logging.level,
    format: logging.format ?? configured?.defaultFormat ?? "json",
    fd: configured?.fd,
  });
  return root;
}

/** The process's logger: the configured one, else JSON at LOG_LEVEL (an embedding that did not configure). */
export function rootLogger(): Logger {
  if (!root) {
    protectSecretEnv();
    let level = "info";
    try {
      level = settings().logging.level;
    } catch {
      // A malformed LOG_LEVEL: the command that reads it says so; here, the default.
    }
    root = createLogger({ level, format: "json" });
  }
  return root;
}
