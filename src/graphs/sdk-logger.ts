// Registers the logger that `getLogger()` of `@langchain/langgraph-sdk/logging` returns, as the official
// server does before importing graphs, so a graph module calling it at import works; lines go to Hangar's log.
import { inspect } from "node:util";

/** The global slot the SDK's `getLogger()` reads (`Symbol.for`, so every copy of the SDK sees it). */
const SDK_LOGGER = Symbol.for("langgraph.api.sdk-logger");

/** winston's npm levels (what the SDK's Logger type names), most severe first; the cli levels rank as info. */
const RANK: Record<string, number> = {
  error: 0,
  warn: 1,
  info: 2,
  help: 2,
  data: 2,
  prompt: 2,
  input: 2,
  http: 3,
  verbose: 4,
  debug: 5,
  silly: 6,
};

function formatArgs(message: unknown, meta: unknown[]): string {
  const text = (v: unknown) => (typeof v === "string" ? v : inspect(v, { depth: 6, breakLength: Infinity }));
  return [message, ...meta].map(text).join(" ");
}

/**
 * Installs the SDK logger (a later call replaces it). Lines at or above
 * LOG_LEVEL (default info) are written through `log` as `[graph] <level>: <message> <meta>`.
 */
export function registerSdkLogger(log: (line: string) => void): void {
  const threshold = RANK[(process.env.LOG_LEVEL ?? "info").toLowerCase()] ?? RANK.info;
  const slot = globalThis as Record<symbol, unknown>;
  const logger: Record<string, (message: unknown, ...meta: unknown[]) => unknown> = {};
  for (const [level, rank] of Object.entries(RANK)) {
    logger[level] = (message: unknown, ...meta: unknown[]) => {
      if (rank <= threshold) log(`[graph] ${level}: ${formatArgs(message, meta)}`);
      return logger;
    };
  }
  slot[SDK_LOGGER] = logger;
}
