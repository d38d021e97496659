// The `hangar` command line: parses flags and hands over to the commands.
import { Command, Option } from "commander";
import { VERSION } from "../lib/version.js";
import { runCheck } from "./check.js";
import { controlPlaneCommand } from "./control-plane.js";
import { deployCommand } from "./deploy.js";
import { runDev } from "./dev.js";
import { runServe } from "./serve.js";

const program = new Command();
program.name("hangar").description("Self-hostable platform for LangGraph.js agents").version(VERSION);

/** The options dev and serve share. */
function serverCommand(name: string, description: string, defaultPort: string): Command {
  return program
    .command(name)
    .description(description)
    .option("-c, --config <path>", "path to langgraph.json", "./langgraph.json")
    .addOption(new Option("-p, --port <port>", `port to listen on (default ${defaultPort}, or $PORT)`))
    .option("--host <host>", "interface to listen on (0.0.0.0 for every interface)", "127.0.0.1")
    .option("--data-dir <dir>", "directory for the embedded database (default: .hangar beside the config)")
    .option("--n-jobs-per-worker <n>", "runs executing at once", "10");
}

serverCommand("dev", "Run the Agent Server for a project on embedded storage, reloading on changes", "2024")
  .option("--no-reload", "do not restart when project files change")
  .action(async (opts) => {
    process.exit(await runDev(opts));
  });

serverCommand(
  "serve",
  "Run the Agent Server for production (no reload); embedded storage unless DATABASE_URL is set",
  "8123",
)
  .option("--mode <mode>", "api, worker or all (api and worker need PostgreSQL + Redis)", "all")
  .action(async (opts) => {
    process.exit(await runServe(opts));
  });

program
  .command("check")
  .description(
    "Load a project's langgraph.json and import every graph, as the Agent Server would at start-up",
  )
  .option("-c, --config <path>", "path to langgraph.json", "./langgraph.json")
  .action(async (opts) => {
    process.exit(await runCheck(opts));
  });

controlPlaneCommand(program);
deployCommand(program);

program
  .command("listener")
  .description(
    "Run a listener: roll out the deployments the control plane assigns to it on Kubernetes (polling; " +
      "--dry-run prints the objects)",
  )
  .option("--control-plane <url>", "the control plane's URL (or $HANGAR_CONTROL_PLANE_URL)")
  .option("--api-key <key>", "an API key of the listener's workspace (or $HANGAR_API_KEY)")
  .option("--listener-id <id>", "the listener's id (or $HANGAR_LISTENER_ID)")
  .option("--tenant-id <id>", "the listener's workspace, for an organization key reaching several")
  .option("--dry-run", "print the Kubernetes objects as YAML instead of applying them; report nothing")
  .option("--once", "one pass over the assignments, then exit (1 if a revision failed)")
  .option(
    "--image <uri>",
    `image of revisions without image_uri (default ghcr.io/hangar/agent-server:${VERSION})`,
  )
  .option("--database-url <url>", "PostgreSQL for prod deployments (a schema each)")
  .option("--redis-url <url>", "Redis for prod deployments (a key prefix each)")
  .option("--poll-interval <seconds>", "seconds between passes", "5")
  .option("--rollout-timeout <seconds>", "seconds a roll-out may take before the revision fails", "300")
  .action(async (opts) => {
    // Loaded on use: the Kubernetes client takes seconds to import.
    const { runListener } = await import("./listener.js");
    process.exit(await runListener(opts));
  });

await program.parseAsync(process.argv);
