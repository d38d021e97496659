// The CLI's logging set-up, shared by every command that logs (dev, serve, control-plane, listener): small, so
// that loading it never loads a server.
import { configureLogging, type LogFormat } from "../lib/logger.js";
import { SettingsError } from "../lib/settings.js";

/** Sets up the process's logger (LOG_LEVEL, LOG_FORMAT, else `defaultFormat`); false (said why) when wrong. */
export function setUpLogging(cmd: string, defaultFormat: LogFormat): boolean {
  try {
    configureLogging(defaultFormat);
    return true;
  } catch (e) {
    if (!(e instanceof SettingsError)) throw e;
    console.error(`hangar ${cmd}: ${e.message}`);
    return false;
  }
}
