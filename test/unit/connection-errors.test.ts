// Unit: the one classification of broken connections (src/lib/errors.ts) that the PostgreSQL retries and the
// HTTP layers' 503 answers share.
import { describe, expect, it } from "vitest";
import {
  isConnectionLost,
  NotFoundError,
  statementMayHaveRun,
  statementNotRun,
  UnavailableError,
} from "../../src/lib/errors.ts";
import { retryable } from "../../src/lib/db/postgres.ts";

const err = (code: string, message = "x") => Object.assign(new Error(message), { code });

describe("connection errors", () => {
  it("a terminated backend or no connection: the statement did not run, any statement may be retried", () => {
    for (const e of [
      err("57P01"),
      err("57P02"),
      err("57P03"),
      err("53300", "sorry, too many clients already"),
      err("ECONNREFUSED"),
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
    ]) {
      expect(statementNotRun(e)).toBe(true);
      expect(statementMayHaveRun(e)).toBe(false);
      expect(retryable(e, false)).toBe(true);
      expect(isConnectionLost(e)).toBe(true);
    }
  });

  it("a connection broken mid-statement: retried only when running it twice is harmless", () => {
    for (const e of [
      err("ECONNRESET"),
      err("EPIPE"),
      err("ETIMEDOUT"),
      new Error("Connection terminated unexpectedly"),
    ]) {
      expect(statementNotRun(e)).toBe(false);
      expect(statementMayHaveRun(e)).toBe(true);
      expect(retryable(e, false)).toBe(false);
      expect(retryable(e, true)).toBe(true);
      expect(isConnectionLost(e)).toBe(true);
    }
  });

  it("other connection classes count as lost for an answer (503) but are not retried", () => {
    for (const e of [err("08006"), err("57P04"), err("EHOSTUNREACH"), new Error("Connection is closed.")]) {
      expect(isConnectionLost(e)).toBe(true);
      expect(retryable(e, true)).toBe(false);
    }
    expect(isConnectionLost(new UnavailableError("redis down"))).toBe(true);
  });

  it("everything else is not a connection problem", () => {
    for (const e of [
      err("23505"),
      err("42P01"),
      new NotFoundError("no"),
      new Error("boom"),
      null,
      undefined,
      "text",
    ]) {
      expect(isConnectionLost(e)).toBe(false);
      expect(retryable(e, true)).toBe(false);
    }
  });
});
