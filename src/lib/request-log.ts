// One log line per HTTP request (method, path, status, ms), written when its response ends: streamed and
// hijacked responses (SSE) included. Fastify's own logger gets the same pino instance, quieter.
import { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from "fastify";
import type { Logger } from "./logger.js";

/**
 * The Fastify options that route its logger to `log`, without its own request lines (`logRequests` writes
 * one per request). Fastify logs each address it listens on at info, repeating ours: it gets a child at
 * warn, unless LOG_LEVEL asks for debug or trace.
 */
export function fastifyLogging(log: Logger): {
  loggerInstance: FastifyBaseLogger;
  logController: LogController;
} {
  const quiet = log.isLevelEnabled("debug") || !log.isLevelEnabled("warn");
  return {
    loggerInstance: quiet ? log : log.child({}, { level: "warn" }),
    logController: new LogController({ disableRequestLogging: true }),
  };
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
