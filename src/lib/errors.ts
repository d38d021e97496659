// The registry of Hangar's errors: every error Hangar raises on purpose is a HangarError with a stable `code`
// from ERROR_CODES and its class name; only the HTTP layers turn codes into statuses (lib/http-errors.ts).

/** Every code, with what it means. Codes are stable: callers, logs and tests may rely on them. */
export const ERROR_CODES = {
  not_found: "the thing named does not exist, or the caller may not see it",
  conflict: "the request contradicts what exists (an id or a name already taken, a run in the wrong state)",
  busy: "the thread is busy with a run",
  invalid_input: "a value of a request is not valid; `details.field` names it when known",
  too_large: "a body or an upload is larger than its limit",
  unauthorized: "no valid credentials",
  forbidden: "valid credentials, but the action is refused",
  unavailable: "a backing service (PostgreSQL, Redis) cannot be reached; trying again may succeed",
  invalid_config:
    "the configuration (langgraph.json, the environment, flags, the project's files) is not valid",
  startup_failed: "a server could not start (its port, its storage)",
  migration_failed: "a database schema could not be brought up to date",
  build_failed: "a revision of a deployment could not be built",
  start_failed: "a revision of a deployment could not be started",
  interrupted: "the work was superseded or cancelled before it finished",
  blocked_address: "an outgoing connection was refused by the network policy",
  remote_error: "another Hangar service answered with an error",
  deploy_failed: "a `hangar deploy` command failed",
  internal: "anything else: a bug",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

/** What an error says beyond its message. */
export interface ErrorDetails {
  /** The request field at fault (invalid_input). */
  field?: string;
  /** A status the project's own code chose (its auth handler raised an HTTPException with one). */
  status?: number;
  [key: string]: unknown;
}

/**
 * The base of every Hangar error. A subclass sets its code with `static override readonly code`; the name of
 * every instance is the name of its class.
 */
export class HangarError extends Error {
  static readonly code: ErrorCode = "internal";
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(message = "", details: ErrorDetails = {}, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = (new.target as typeof HangarError).code;
    this.details = details;
  }
}

/** The server cannot start: a setting, its storage, its port; the message says which, in one line. */
export class StartupError extends HangarError {
  static override readonly code = "startup_failed";
}

export class NotFoundError extends HangarError {
  static override readonly code = "not_found";
}
export class ConflictError extends HangarError {
  static override readonly code = "conflict";
}
export class BusyError extends HangarError {
  static override readonly code = "busy";
}
export class InvalidInputError extends HangarError {
  static override readonly code = "invalid_input";
}
export class TooLargeError extends HangarError {
  static override readonly code = "too_large";
}
export class UnauthorizedError extends HangarError {
  static override readonly code = "unauthorized";
}
export class ForbiddenError extends HangarError {
  static override readonly code = "forbidden";
}
export class UnavailableError extends HangarError {
  static override readonly code = "unavailable";
}
/** The configuration is not valid; the message names the file or variable and the problem. */
export class ConfigError extends HangarError {
  static override readonly code = "invalid_config";
}
/** A database schema could not be migrated (or is newer than this build). */
export class MigrationError extends HangarError {
  static override readonly code = "migration_failed";
}

export const notFound = (message: string) => new NotFoundError(message);
export const conflict = (message: string) => new ConflictError(message);
export const busy = (message: string) => new BusyError(message);
export const invalidInput = (message: string, field?: string) =>
  new InvalidInputError(message, field === undefined ? {} : { field });

/** The code of any error: its own for a HangarError, `internal` for anything else. */
export const codeOf = (err: unknown): ErrorCode => (err instanceof HangarError ? err.code : "internal");

const errCode = (e: unknown): string => {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
};
const errMessage = (e: unknown): string => {
  const message = (e as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : "";
};

/**
 * A PostgreSQL statement surely did not run: the server terminated the backend (57P01 admin shutdown, 57P02
 * crash, 57P03 cannot connect now), refused the connection (53300 too many connections), or there was no
 * connection to send it on.
 */
export function statementNotRun(e: unknown): boolean {
  const msg = errMessage(e);
  return (
    /^57P0[123]$/.test(errCode(e)) ||
    errCode(e) === "53300" || // too many connections: refused before any statement
    errCode(e) === "ECONNREFUSED" ||
    msg.includes("not queryable") ||
    msg.includes("timeout exceeded when trying to connect")
  );
}

/** The connection broke while a statement was on its way: it may or may not have run. */
export function statementMayHaveRun(e: unknown): boolean {
  return (
    ["ECONNRESET", "EPIPE", "ETIMEDOUT"].includes(errCode(e)) || /connection terminated/i.test(errMessage(e))
  );
}

/**
 * A lost or refused connection to PostgreSQL or Redis (the request may succeed when retried): the two cases
 * above, PostgreSQL's connection-exception and operator-intervention classes (08, 57P), unreachable hosts,
 * ioredis's closed connection, and Hangar's `unavailable` errors.
 */
export function isConnectionLost(err: unknown): boolean {
  if (err instanceof HangarError && err.code === "unavailable") return true;
  if (statementNotRun(err) || statementMayHaveRun(err)) return true;
  return /^(08|57P)|^EHOSTUNREACH$/.test(errCode(err)) || errMessage(err).includes("Connection is closed");
}
