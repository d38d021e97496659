// Entry point of the images `hangar build` makes: `node entrypoint.js <defaults of serve> -- <command>`. The
// command (the image's CMD, or the arguments after its name) is a `hangar` command; one that is empty or starts
// with an option is `serve`. `serve` and `check` get the image's defaults (its langgraph.json, 0.0.0.0, the /data
// volume when no PostgreSQL is configured) unless the command gives its own. The CLI then runs in this process,
// which stays PID 1, so SIGTERM reaches the server and drains it.
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { settings } from "../../lib/settings.js";

/** The image's default options, by command. */
const APPLIES: Record<string, string[]> = {
  serve: ["--config", "--data-dir", "--host"],
  check: ["--config"],
};

/** Options an argument list gives (`--port 1`, `--port=1`, `-c x`). */
const given = (args: string[]) =>
  new Set(args.filter((a) => a.startsWith("-")).map((a) => (a === "-c" ? "--config" : a.split("=")[0])));

/** Whether PostgreSQL is configured (DATABASE_URL or an official name of it): serve then has no data dir. */
function onPostgres(): boolean {
  try {
    return !!settings().cluster.databaseUrl;
  } catch {
    // A malformed or contradictory setting: `serve` reports it, whichever its backend.
    return false;
  }
}

/** The `hangar` arguments of an entrypoint call (its argv after the script). */
export function hangarArgs(argv: string[], postgres: boolean): string[] {
  const sep = argv.indexOf("--");
  const defaults = sep >= 0 ? argv.slice(0, sep) : [];
  let command = sep >= 0 ? argv.slice(sep + 1) : argv;
  // `--version` and `--help` are the CLI's own; any other option is one of `serve`.
  if (["--version", "-V", "--help", "-h"].includes(command[0])) return command;
  if (command.length === 0 || command[0].startsWith("-")) command = ["serve", ...command];
  const applies = APPLIES[command[0]];
  if (!applies) return command;
  const own = given(command.slice(1));
  const added: string[] = [];
  for (let i = 0; i + 1 < defaults.length; i += 2) {
    const [name, value] = [defaults[i], defaults[i + 1]];
    if (!applies.includes(name) || own.has(name)) continue;
    if (name === "--data-dir" && (postgres || own.has("--migrate-only"))) continue;
    added.push(name, value);
  }
  return [command[0], ...added, ...command.slice(1)];
}

// Run as the image's entry point (imported by a test: only hangarArgs is used).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.argv = [process.argv[0], "hangar", ...hangarArgs(process.argv.slice(2), onPostgres())];
  await import("../main.js");
}
