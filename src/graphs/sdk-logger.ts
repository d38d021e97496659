// Registers the logger that `getLogger()` of `@langchain/langgraph-sdk/logging` returns, as the official
// server does before importing graphs, so a graph module calling it at import works; lines go to Hangar's log.
import { inspect } from "node:util";
import type { Logger } from "../lib/logger.js";

/** The global slot the SDK's `getLogger()` reads (`Symbol.for`, so every copy of the SDK sees it). */
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** winston's npm levels (what the SDK's Logger type names), most severe first, and the pino level of each. */
const LEVELS = {
  error: "error",
  warn: "warn",
  info: "info",
  help: "info",
  data: "info",
  prompt: "info",
  input: "info",
  http: "debug",
  verbose: "debug",
  debug: "debug",
  silly: "trace",
} as const;

function formatArgs(message: unknown, meta: unknown[]): string {
  const text = (v: unknown) => (typeof v === "string" ? v : inspect(v, { depth: 6, breakLength: Infinity }));
  return [message, ...meta].map(text).join(" ");
}

/**
 * Installs the SDK logger (a later call replaces it): each call is a line of `log` (a child marked
 * `source: "graph"`) at the matching pino level, so LOG_LEVEL and LOG_FORMAT apply to it as to Hangar's own.
 */
export function registerSdkLogger(log: Logger): void {
  const slot = globalThis as Record<symbol, unknown>;
  const graphLog = log.child({ source: "graph" });
  const logger: Record<string, (message: unknown, ...meta: unknown[]) => unknown> = {};
  for (const [level, pinoLevel] of Object.entries(LEVELS)) {
    logger[level] = (message: unknown, ...meta: unknown[]) => {
      if (graphLog.isLevelEnabled(pinoLevel)) graphLog[pinoLevel](formatArgs(message, meta));
      return logger;
    };
  }
  slot[SDK_LOGGER] = logger;
}
