// The `hangar` command line: declares every command and its flags, and loads a command's module only when it
// runs (dynamic import in its action), so `hangar --version` and `--help` load nothing but commander.
import { Command, Option } from "commander";
import { VERSION } from "../lib/version.js";
import { DEFAULT_HOST_URL } from "./deploy/client.js";
import { portFlag } from "./port.js";
import { registerTypeScript } from "./typescript.js";

const program = new Command();
program.name("hangar").description("Self-hostable platform for LangGraph.js agents").version(VERSION);

/**
 * A valid --port wins over PORT (even a malformed PORT, which the settings would refuse), and PORT then says the
 * port asked for: to the settings, to the project's code, and to a process `dev` restarts.
 */
function portWins(command: Command): Command {
  return command.hook("preAction", (_, action) => {
    const port = action.opts<{ port?: string }>().port;
    if (port !== undefined && portFlag(port) !== undefined) process.env.PORT = port;
  });
}

/** The options dev and serve share. */
function serverCommand(name: string, description: string, defaultPort: string): Command {
  return portWins(program.command(name))
    .description(description)
    .option("-c, --config <path>", "path to langgraph.json", "./langgraph.json")
    .addOption(new Option("-p, --port <port>", `port to listen on (default ${defaultPort}, or $PORT)`))
    .option("--host <host>", "interface to listen on (0.0.0.0 for every interface)", "127.0.0.1")
    .option("--data-dir <dir>", "directory for the embedded database (default: .hangar beside the config)")
    .option("--n-jobs-per-worker <n>", "runs executing at once (default 10, or $N_JOBS_PER_WORKER)");
}

// Commands that import a project's code (graphs, auth, http app) register tsx's loader once their own modules
// are loaded (src/cli/typescript.ts says why, and how a project's modules are then imported).

serverCommand("dev", "Run the Agent Server for a project on embedded storage, reloading on changes", "2024")
  .option("--no-reload", "do not restart when project files change")
  // The official `langgraphjs dev` opens Studio unless told not to: its command lines work here as they are.
  .option("--no-browser", "accepted for the official CLI's command lines (Hangar opens no browser)")
  .action(async (opts) => {
    const { runDev } = await import("./dev.js");
    await registerTypeScript();
    process.exit(await runDev(opts));
  });

serverCommand(
  "serve",
  "Run the Agent Server for production (no reload); embedded storage unless DATABASE_URL is set",
  "8123",
)
  .option("--mode <mode>", "api, worker or all (api and worker need PostgreSQL + Redis)", "all")
  .option(
    "--migrate-only",
    "apply the PostgreSQL migrations of DATABASE_URL's schema, then exit (no project loaded, no Redis needed)",
  )
  .action(async (opts) => {
    const { runServe } = await import("./serve.js");
    await registerTypeScript();
    process.exit(await runServe(opts));
  });

program
  .command("check")
  .description(
    "Load a project's langgraph.json and import every graph, as the Agent Server would at start-up",
  )
  .option("-c, --config <path>", "path to langgraph.json", "./langgraph.json")
  .action(async (opts) => {
    const { runCheck } = await import("./check.js");
    await registerTypeScript();
    process.exit(await runCheck(opts));
  });

// ---- container images (as the official CLI's dockerfile, build and up)

/** The options the image commands share. */
function imageCommand(cmd: Command): Command {
  return cmd
    .option("-c, --config <path>", "path to langgraph.json", "./langgraph.json")
    .option(
      "--base-image <image>",
      "image of the server (default node:<node_version>-bookworm-slim); also of the build stage unless --build-image",
    )
    .option(
      "--build-image <image>",
      "image of the build stage, with python3, make and g++ (default node:<node_version>-bookworm)",
    );
}

imageCommand(
  program
    .command("dockerfile")
    .description("Write the project's Dockerfile (- prints it), with what it builds from (.hangar-docker/)")
    .argument("[path]", "where to write it (default: Dockerfile beside langgraph.json; - for stdout)"),
)
  .option("--add-docker-compose", "also write a docker-compose.yml: API, worker, PostgreSQL and Redis")
  .action(async (path: string | undefined, opts) => {
    const { runDockerfile } = await import("./docker/dockerfile-command.js");
    process.exit(await runDockerfile(path, opts));
  });

imageCommand(
  program
    .command("build")
    .description("Build the project's image with the local Docker: `hangar serve` on 0.0.0.0:8000")
    .requiredOption("-t, --tag <tag>", "the image's name and tag")
    .option(
      "--base-only",
      "Hangar without a project: the control plane's HANGAR_CP_IMAGE_BASE (docs/listener.md)",
    )
    .argument("[docker-args...]", "more arguments of docker build, after -- (e.g. -- --network host)"),
).action(async (dockerArgs: string[], opts) => {
  const { runBuild } = await import("./docker/build.js");
  process.exit(await runBuild(opts, dockerArgs));
});

imageCommand(
  program
    .command("up")
    .description("Build the project's image and run it with PostgreSQL and Redis under Docker Compose"),
)
  .option("-p, --port <port>", "the API's port on the host", "8123")
  .option(
    "--host <address>",
    "the address the API's port is published on (0.0.0.0: every interface)",
    "127.0.0.1",
  )
  .option("--wait", "return once every service is up and the API answers")
  .option("--watch", "build again and restart the servers when a project file changes")
  .option("-d, --docker-compose <file>", "a Compose file of more services (default: docker_compose_file)")
  .option(
    "--postgres-uri <uri>",
    "an existing PostgreSQL (no PostgreSQL service; the host is host.docker.internal)",
  )
  .option("--postgres-image <image>", "image of the PostgreSQL service", "postgres:16")
  .option("--redis-image <image>", "image of the Redis service", "redis:7")
  .option("--wait-timeout <seconds>", "how long --wait waits for the services", "300")
  .action(async (opts) => {
    const { runUp } = await import("./docker/up.js");
    process.exit(await runUp(opts));
  });

// ---- control-plane

const cp = portWins(program.command("control-plane"))
  .description("Run the control plane: deployments, revisions and listeners (API under /v2)")
  .addOption(new Option("-p, --port <port>", "port to listen on (default 8300, or $PORT)"))
  .option("--host <host>", "interface to listen on (0.0.0.0 for every interface)", "127.0.0.1")
  .option(
    "--data-dir <dir>",
    "directory of the control plane's data: its SQLite store unless DATABASE_URL is set, uploads, builds (default: .hangar-control-plane)",
  )
  .option("--public-url <url>", "URL clients reach the control plane at (default: from host and port)")
  .option("--no-reconcile", "serve the API only: do not build or run revisions on this machine")
  .action(async (opts) => {
    const { runControlPlane } = await import("./control-plane.js");
    process.exit(await runControlPlane(opts));
  });

const adm = cp
  .command("admin")
  .description(
    "Manage organizations, workspaces and API keys in the control plane's store (DATABASE_URL, else --data-dir; works whether it runs or not)",
  );
const dataDirOption = () =>
  new Option("--data-dir <dir>", "the control plane's data directory (default: .hangar-control-plane)");
/** Runs an admin action in ./control-plane-admin.ts, loaded now. */
const admin = async (cmd: Command, action: import("./control-plane-admin.js").AdminAction) => {
  const { runAdmin } = await import("./control-plane-admin.js");
  process.exit(await runAdmin(cmd, action));
};

adm
  .command("create-org")
  .description("Create an organization")
  .requiredOption("--name <name>", "its name")
  .option("--plan <plan>", "free, plus, enterprise or self_hosted_enterprise", "plus")
  .addOption(dataDirOption())
  .action((o: { name: string; plan: string }, cmd: Command) =>
    admin(cmd, { kind: "create-org", name: o.name, plan: o.plan }),
  );

adm
  .command("create-workspace")
  .description("Create a workspace (a tenant) in an organization")
  .requiredOption("--org <id>", "the organization's id")
  .requiredOption("--name <name>", "its name")
  .addOption(dataDirOption())
  .action((o: { org: string; name: string }, cmd: Command) =>
    admin(cmd, { kind: "create-workspace", org: o.org, name: o.name }),
  );

adm
  .command("create-key")
  .description("Create an API key for a workspace, or (--org) an organization key; the key is printed once")
  .option("--workspace <id>", "the workspace the key reaches")
  .option(
    "--org <id>",
    "an organization key: reaches every workspace of the organization (X-Tenant-Id picks one)",
  )
  .addOption(dataDirOption())
  .action((o: { workspace?: string; org?: string }, cmd: Command) =>
    admin(cmd, { kind: "create-key", workspace: o.workspace, org: o.org }),
  );

// ---- deploy

/** The options every `deploy` command takes. */
function withCommon(cmd: Command): Command {
  return cmd
    .option("--api-key <key>", "API key of the control plane (or $HANGAR_API_KEY, or HANGAR_API_KEY in .env)")
    .option("--host-url <url>", `the control plane's URL (or $HANGAR_HOST_URL; default ${DEFAULT_HOST_URL})`)
    .option(
      "--tenant-id <id>",
      "the workspace, for an organization key reaching several (or $HANGAR_TENANT_ID)",
    )
    .option("--json", "print JSON lines instead of text");
}

/** Runs a deploy subcommand in ./deploy.ts, loaded now. */
const deploy = async (c: import("./deploy.js").DeployCommand) => {
  const { runDeployCommand } = await import("./deploy.js");
  await runDeployCommand(c);
};
/** Options of a subcommand merged with those given to `deploy` itself (`hangar deploy --api-key k list`). */
const merged = <T>(cmd: Command): T => cmd.optsWithGlobals() as T;

const dep = withCommon(
  program
    .command("deploy")
    .description(
      "Deploy the project in the working directory to a control plane (create, or update by name), then follow it until it serves",
    ),
)
  .option("--name <name>", "the deployment's name (default: the directory's name, normalized)")
  .addOption(new Option("--deployment-type <type>", "dev or prod, for a new deployment (default dev)"))
  .option("-c, --config <path>", "path of langgraph.json in the project", "langgraph.json")
  .option("--no-wait", "return once the revision is queued")
  .option("--timeout <seconds>", "how long to wait for the revision", "900")
  .option("--image <uri>", "deploy this prebuilt image through a k8s listener (no upload, no build here)")
  .option(
    "--listener-id <id>",
    "the listener whose cluster runs it (without --image the control plane builds the project's image)",
  )
  .option("--namespace <ns>", "with --listener-id: the Kubernetes namespace (one of the listener's)")
  .action((opts) => deploy({ sub: "deploy", opts }));

withCommon(
  dep.command("list").description("List the deployments: id, name, type, latest revision status, URL"),
).action((_o: unknown, cmd: Command) => deploy({ sub: "list", opts: merged(cmd) }));

withCommon(dep.command("logs").description("Print a deployment's deploy or build logs"))
  .option("--name <name>", "the deployment's name (default: the directory's name, normalized)")
  .option("--deployment-id <id>", "the deployment's id")
  .option("--type <type>", "deploy or build", "deploy")
  .option("--revision-id <id>", "a revision (default for build logs: the latest)")
  .option("--level <level>", "only lines of this level: DEBUG, INFO, WARNING or ERROR")
  .option("--limit <n>", "the last n lines", "100")
  .option("-f, --follow", "keep printing new lines until interrupted")
  .action((_o: unknown, cmd: Command) => deploy({ sub: "logs", opts: merged(cmd) }));

withCommon(
  dep.command("delete").description("Delete a deployment (its processes stop, its URL stops answering)"),
)
  .argument("<id>", "the deployment's id (or its exact name)")
  .option("--force", "do not ask for confirmation")
  .action((id: string, _o: unknown, cmd: Command) => deploy({ sub: "delete", id, opts: merged(cmd) }));

const revisions = dep.command("revisions").description("A deployment's revisions");
withCommon(revisions.command("list").description("List a deployment's revisions, newest first (* = serving)"))
  .argument("<id>", "the deployment's id (or its exact name)")
  .action((id: string, _o: unknown, cmd: Command) =>
    deploy({ sub: "revisions list", id, opts: merged(cmd) }),
  );

// ---- listener

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
    const { runListener } = await import("./listener.js");
    process.exit(await runListener(opts));
  });

// ---- backup and restore (embedded data; --control-plane: the control plane's)

/** The options backup and restore share: which data directory, and what --force allows. */
function dataCommand(name: string, description: string, force: string): Command {
  return program
    .command(name)
    .description(description)
    .option(
      "-c, --config <path>",
      "path to langgraph.json (the data directory is .hangar beside it)",
      "./langgraph.json",
    )
    .option("--data-dir <dir>", "the data directory (default: .hangar beside the config)")
    .option("--control-plane", "a control plane's data directory instead (default .hangar-control-plane)")
    .option("--force", force);
}

dataCommand(
  "backup",
  "Copy an embedded Agent Server's data (running or not) consistently: its database through SQLite's backup API",
  "overwrite an existing backup",
)
  .requiredOption("-o, --out <path>", "the backup file, or a directory to write hangar.sqlite into")
  .action(async (opts) => {
    const { runBackup } = await import("./backup.js");
    process.exit(await runBackup(opts));
  });

dataCommand(
  "restore",
  "Restore a backup into a data directory no server is using; in-flight runs resume at the next start",
  "replace the data of a data directory that is not empty (never one in use)",
)
  .requiredOption("--from <path>", "the backup: a file, or a directory holding hangar.sqlite")
  .action(async (opts) => {
    const { runRestore } = await import("./backup.js");
    process.exit(await runRestore(opts));
  });

// ---- encryption at rest

program
  .command("encryption")
  .description("Encryption at rest of an Agent Server's data (LANGGRAPH_AES_KEY)")
  .command("reencrypt")
  .description(
    "Encrypt everything stored with the current LANGGRAPH_AES_KEY: values under an older key " +
      "(HANGAR_AES_PREVIOUS_KEYS) and values stored before encryption was on; safe while servers run",
  )
  .option(
    "-c, --config <path>",
    "path to langgraph.json (its env is read; the data directory is .hangar beside it)",
    "./langgraph.json",
  )
  .option(
    "--data-dir <dir>",
    "the embedded data directory (default: .hangar beside the config); with DATABASE_URL, PostgreSQL",
  )
  .action(async (opts) => {
    const { runReencrypt } = await import("./encryption.js");
    process.exit(await runReencrypt(opts));
  });

// ---- moving in from another Agent Server

/** Collects a repeatable option's values. */
const collect = (value: string, previous: string[] = []) => [...previous, value];

program
  .command("migrate")
  .description(
    "Copy assistants (every version), threads with their checkpoint history, crons and store items from any Agent " +
      "Server into a Hangar server; what the target has is skipped, so it can run again",
  )
  .option("--from <url>", "the source Agent Server's URL (or $HANGAR_MIGRATE_FROM)")
  .option("--to <url>", "the target Hangar server's URL (or $HANGAR_MIGRATE_TO)")
  .option("--from-api-key <key>", "sent to the source as x-api-key (or $HANGAR_MIGRATE_FROM_API_KEY)")
  .option("--to-api-key <key>", "sent to the target as x-api-key (or $HANGAR_MIGRATE_TO_API_KEY)")
  .option(
    "--from-header <header>",
    "a header for the source, 'Name: value' (repeatable; or $HANGAR_MIGRATE_FROM_HEADERS, one per line)",
    collect,
  )
  .option(
    "--to-header <header>",
    "a header for the target, 'Name: value' (repeatable; or $HANGAR_MIGRATE_TO_HEADERS, one per line)",
    collect,
  )
  .option("--dry-run", "count what would be copied; write nothing")
  .option("--json", "print the summary as JSON")
  .action(async (opts) => {
    const { runMigrate } = await import("./move-in/command.js");
    process.exit(await runMigrate(opts));
  });

await program.parseAsync(process.argv);
