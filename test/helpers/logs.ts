// A logger for tests that call the control plane's or the server's parts in-process: its entries are kept
// as human lines (message, context, stack) in an array, shown when a test fails.
import { createLogger, describeEntry, type Logger } from "../../src/lib/logger.ts";

/** A logger (at debug) whose entries are pushed to `lines`; `createLogger({ level: "silent" })` for none. */
export function arrayLogger(lines: string[]): Logger {
  return createLogger({
    level: "debug",
    destination: {
      write: (s: string) => void lines.push(describeEntry(JSON.parse(s) as Record<string, unknown>)),
    },
  });
}
