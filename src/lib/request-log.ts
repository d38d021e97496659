// One log line per HTTP request (method, path, status, ms), written when its response ends: streamed and
// hijacked responses (SSE) included. Fastify's own logger gets the same pino instance, quieter.
import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from "fastify";
import type { Logger } from "./logger.js";

/**
 * The Fastify options that route its logger to `log`, without its own request lines (`logRequests` writes
 * one per request): a child of `log` at warn, or at `log`'s level when LOG_LEVEL asks for debug or trace (or
 * for less than warn).
 */
export function fastifyLogging(log: Logger): {
  loggerInstance: FastifyBaseLogger;
  logController: LogController;
} {
  const own = log.isLevelEnabled("debug") || !log.isLevelEnabled("warn");
  return {
    loggerInstance: log.child({}, { level: own ? log.level : "warn" }),
    logController: new LogController({ disableRequestLogging: true }),
  };
}

/**
 * `app.listen`, without the line Fastify logs at info for each address it listens on ("Server listening at"):
 * the server says where it listens in its own line, and at LOG_LEVEL=debug Fastify's repeated it.
 */
export async function listen(app: FastifyInstance, opts: { host: string; port: number }): Promise<string> {
  const level = app.log.level;
  // Raised to warn only from below it (a server at error or silent stays so).
  if (["trace", "debug", "info"].includes(level)) app.log.level = "warn";
  try {
    return await app.listen(opts);
  } finally {
    app.log.level = level;
  }
}

export interface RequestLogOptions {
  /** Requests not to log (e.g. ones an app hands back to itself, logged already as the outer request). */
  skip?: (req: FastifyRequest) => boolean;
}

/**
 * Logs every request of `app` once its response is finished or its client left: `GET /ok 200 1.3ms`, with
 * the fields method, url (the path: a query string may hold secrets), statusCode and responseTime (ms).
 * Added first, so requests that hooks answer early (CORS preflights, authentication) are logged too.
 */
export function logRequests(app: FastifyInstance, log: Logger, opts: RequestLogOptions = {}): void {
  app.addHook("onRequest", (req, reply, done) => {
    const start = process.hrtime.bigint();
    reply.raw.once("close", () => {
      if (opts.skip?.(req)) return;
      const responseTime = Math.round(Number(process.hrtime.bigint() - start) / 10_000) / 100;
      const url = req.url.split("?")[0];
      const statusCode = reply.raw.statusCode;
      // A client that left before the end: the status is what was sent (or would have been).
      const aborted = !reply.raw.writableFinished;
      const level = statusCode >= 500 ? "error" : "info";
      log[level](
        { reqId: req.id, method: req.method, url, statusCode, responseTime, ...(aborted ? { aborted } : {}) },
        `${req.method} ${url} ${statusCode} ${responseTime}ms${aborted ? " (client left)" : ""}`,
      );
    });
    done();
  });
}
