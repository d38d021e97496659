// The error registry (src/lib/errors.ts): names and codes of the classes, the status of each code, and the bodies
// both HTTP layers answer with (a real Fastify app, requests injected without a socket).
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { installErrorHandler } from "../../src/api/errors.ts";
import { installCpErrorHandler } from "../../src/control-plane/http/errors.ts";
import {
  BusyError,
  codeOf,
  ConfigError,
  ConflictError,
  ERROR_CODES,
  ForbiddenError,
  HangarError,
  InvalidInputError,
  invalidInput,
  isConnectionLost,
  MigrationError,
  NotFoundError,
  TooLargeError,
  UnauthorizedError,
  UnavailableError,
} from "../../src/lib/errors.ts";
import { httpStatus } from "../../src/lib/http-errors.ts";
import { arrayLogger } from "../helpers/logs.ts";

const CLASSES = [
  [NotFoundError, "not_found", 404],
  [ConflictError, "conflict", 409],
  [BusyError, "busy", 409],
  [InvalidInputError, "invalid_input", 422],
  [TooLargeError, "too_large", 413],
  [UnauthorizedError, "unauthorized", 401],
  [ForbiddenError, "forbidden", 403],
  [UnavailableError, "unavailable", undefined],
  [ConfigError, "invalid_config", undefined],
  [MigrationError, "migration_failed", undefined],
] as const;

describe("the registry", () => {
  it.each(CLASSES)("%o has its name, its code and its status", (Class, code, status) => {
    const err = new Class("what happened");
    expect(err).toBeInstanceOf(HangarError);
    expect(err).toBeInstanceOf(Error);
    expect(err.name).toBe(Class.name);
    expect(err.code).toBe(code);
    expect(code in ERROR_CODES).toBe(true);
    expect(err.message).toBe("what happened");
    expect(httpStatus(err)).toBe(status);
  });

  it("names subclasses after themselves and keeps their parent's code", () => {
    class GraphBroken extends ConfigError {}
    const err = new GraphBroken("graph x: file not found");
    expect(err.name).toBe("GraphBroken");
    expect(err.code).toBe("invalid_config");
    expect(err).toBeInstanceOf(ConfigError);
  });

  it("keeps the field of invalid input, and the cause", () => {
    const cause = new Error("parse");
    expect(invalidInput("webhook: must be an http(s) URL", "webhook").details).toEqual({ field: "webhook" });
    expect(new InvalidInputError("x", {}, { cause }).cause).toBe(cause);
  });

  it("gives anything else the code internal and no status", () => {
    expect(codeOf(new Error("boom"))).toBe("internal");
    expect(codeOf("a string")).toBe("internal");
    expect(httpStatus(new Error("boom"))).toBeUndefined();
    expect(httpStatus(new HangarError("bug"))).toBeUndefined();
  });

  it("lets the project's auth handler choose the status of an auth refusal, and nothing else", () => {
    expect(httpStatus(new UnauthorizedError("teapot", { status: 418 }))).toBe(418);
    expect(httpStatus(new ForbiddenError("gone", { status: 404 }))).toBe(404);
    expect(httpStatus(new ForbiddenError("no", { status: undefined }))).toBe(403);
    expect(httpStatus(new NotFoundError("x", { status: 500 }))).toBe(404);
  });

  it("tells a lost connection from other failures", () => {
    expect(isConnectionLost(Object.assign(new Error("read"), { code: "ECONNRESET" }))).toBe(true);
    expect(isConnectionLost(Object.assign(new Error("terminating"), { code: "57P01" }))).toBe(true);
    expect(isConnectionLost(new Error("Connection terminated unexpectedly"))).toBe(true);
    expect(isConnectionLost(new UnavailableError("cannot reach PostgreSQL at db:5432"))).toBe(true);
    expect(isConnectionLost(Object.assign(new Error("duplicate key"), { code: "23505" }))).toBe(false);
    expect(isConnectionLost(new NotFoundError("Thread not found"))).toBe(false);
  });
});

/** A Fastify app whose route throws `err`, with one server's error handler. */
async function appThrowing(install: (app: FastifyInstance) => void, err: unknown): Promise<FastifyInstance> {
  const app = Fastify();
  install(app);
  app.get("/", async () => {
    throw err;
  });
  await app.ready();
  return app;
}

describe("the HTTP answers", () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  const logged: string[] = [];
  const agent = (a: FastifyInstance) => installErrorHandler(a, arrayLogger(logged));
  const controlPlane = (a: FastifyInstance) => installCpErrorHandler(a, arrayLogger(logged));

  it.each([
    [new NotFoundError('Thread "t" not found'), 404],
    [new BusyError('Thread "t" is busy with a run'), 409],
    [invalidInput("schedule: not a cron expression", "schedule"), 422],
    [new UnauthorizedError("Missing or invalid x-api-key header"), 401],
    [new ForbiddenError("Not allowed: threads:read"), 403],
  ])("the Agent Server answers %o with its status and {detail}", async (err, status) => {
    app = await appThrowing(agent, err);
    const res = await app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ detail: (err as Error).message });
  });

  it("the Agent Server answers an unexpected error with a 500 that says nothing, and logs it", async () => {
    app = await appThrowing(agent, new ConfigError("secret path /home/x"));
    const res = await app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: "Internal server error" });
    expect(logged.at(-1)).toContain("secret path /home/x");
  });

  it("the control plane answers with the same statuses, in FastAPI's shapes", async () => {
    app = await appThrowing(controlPlane, new ConflictError("A deployment named 'a' already exists."));
    let res = await app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ detail: "A deployment named 'a' already exists." });
    await app.close();

    app = await appThrowing(controlPlane, invalidInput("must be a UUID", "listener_id"));
    res = await app.inject({ method: "GET", url: "/" });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      detail: [
        {
          type: "value_error",
          loc: ["body", "listener_id"],
          msg: "Value error, must be a UUID",
          ctx: { error: "must be a UUID" },
        },
      ],
    });
  });
});
