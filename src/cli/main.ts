// The `hangar` command line: parses flags and hands over to the commands.
import { Command, Option } from "commander";
import { VERSION } from "../server.js";
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

await program.parseAsync(process.argv);
