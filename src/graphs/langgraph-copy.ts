// The project's own @langchain/langgraph (1.0 up): which installed copy a graph was built with, its version
// (for /info and the start-up warning), and its Command/Send classes, so a resume or goto Hangar builds is
// one that copy accepts (it checks Send with instanceof).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Command as OwnCommand, Send as OwnSend } from "@langchain/langgraph";

type CommandClass = typeof OwnCommand;
type SendClass = typeof OwnSend;

export interface LangGraphCopy {
  /** The package's directory (real path). */
  dir: string;
  version: string;
  /** The classes of the copy the graph was built with; absent when it could not be told which. */
  Command?: CommandClass;
  Send?: SendClass;
}

const ownRequire = createRequire(import.meta.url);

/** The version of @langchain/langgraph Hangar itself is built with. */
export const HANGAR_LANGGRAPH_VERSION: string = ownRequire("@langchain/langgraph/package.json").version;
const HANGAR_CORE_VERSION: string = ownRequire("@langchain/core/package.json").version;

interface PackageJson {
  path: string;
  version: string;
  exports?: Record<string, unknown>;
}

/** The package.json of `name` as seen from `fromFile`; undefined when it is not installed there. */
function packageFrom(fromFile: string, name: string): PackageJson | undefined {
  try {
    const path = createRequire(fromFile).resolve(`${name}/package.json`);
    const json = JSON.parse(readFileSync(path, "utf8")) as {
      version?: string;
      exports?: Record<string, unknown>;
    };
    return { path, version: json.version ?? "0.0.0", exports: json.exports };
  } catch {
    return undefined;
  }
}

/** The file an exports entry names for `import` or `require` (conditions nest: `{import: {types, default}}`). */
function target(value: unknown, condition: "import" | "require"): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  return target(v[condition] ?? v.node ?? v.default, condition);
}

interface Classes {
  Pregel: abstract new (...args: never[]) => unknown;
  Command: CommandClass;
  Send: SendClass;
}

const loaded = new Map<string, Promise<Classes | undefined>>();

/** Loads the root and `./pregel` entries of one copy in one module format (ESM and CJS are distinct instances). */
function classesOf(pkg: PackageJson, condition: "import" | "require"): Promise<Classes | undefined> {
  const key = `${pkg.path}#${condition}`;
  let p = loaded.get(key);
  if (!p) {
    p = (async () => {
      const root = target(pkg.exports?.["."], condition);
      const pregel = target(pkg.exports?.["./pregel"], condition);
      if (!root || !pregel) return undefined;
      const dir = dirname(pkg.path);
      const req = createRequire(pkg.path);
      const load = async (file: string) =>
        (condition === "import"
          ? await import(pathToFileURL(join(dir, file)).href)
          : req(join(dir, file))) as Record<string, unknown>;
      const [r, pr] = await Promise.all([load(root), load(pregel)]);
      if (
        typeof pr.Pregel !== "function" ||
        typeof r.Command !== "function" ||
        typeof r.Send !== "function"
      ) {
        return undefined;
      }
      return { Pregel: pr.Pregel, Command: r.Command, Send: r.Send } as Classes;
    })().catch(() => undefined);
    loaded.set(key, p);
  }
  return p;
}

/**
 * The copy of @langchain/langgraph that `graph` (imported from `file`) comes from: the one installed where
 * the file is, in the module format whose Pregel class the graph is an instance of. Undefined when the
 * project has no @langchain/langgraph of its own to be found.
 */
export async function langGraphCopyOf(graph: object, file: string): Promise<LangGraphCopy | undefined> {
  const pkg = packageFrom(file, "@langchain/langgraph");
  if (!pkg) return undefined;
  const copy: LangGraphCopy = { dir: dirname(pkg.path), version: pkg.version };
  for (const condition of ["import", "require"] as const) {
    const classes = await classesOf(pkg, condition);
    if (classes && graph instanceof classes.Pregel) {
      copy.Command = classes.Command;
      copy.Send = classes.Send;
      break;
    }
  }
  return copy;
}

/** Whether a copy's classes differ from Hangar's own (so what Hangar builds must be rebuilt with them). */
export const isForeign = (copy: LangGraphCopy | undefined): boolean =>
  !!copy?.Command && copy.Command !== OwnCommand;

const isCommandLike = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && (v as { lg_name?: unknown }).lg_name === "Command";

/** Rebuilds a Command (and the Sends in its goto) made with Hangar's classes with the copy's classes. */
export function adaptInput(input: unknown, copy: LangGraphCopy): unknown {
  const { Command, Send } = copy;
  if (!Command || !Send || !isCommandLike(input) || input instanceof Command) return input;
  const toSend = (g: unknown) => {
    if (g instanceof Send || typeof g !== "object" || g === null) return g;
    const { node, args } = g as { node?: unknown; args?: unknown };
    return typeof node === "string" && args !== undefined ? new Send(node, args) : g;
  };
  const fields: Record<string, unknown> = {};
  for (const k of ["update", "resume", "graph"] as const) if (input[k] !== undefined) fields[k] = input[k];
  if (input.goto !== undefined && input.goto !== null) {
    fields.goto = Array.isArray(input.goto) ? input.goto.map(toSend) : toSend(input.goto);
  }
  return new Command(fields as ConstructorParameters<CommandClass>[0]);
}

/** 1.4.21 < 1.7.3: compares major.minor.patch (pre-release tags ignored). */
function older(version: string, than: string): boolean {
  const parts = (v: string) =>
    v
      .split("-")[0]
      .split(".")
      .map((n) => Number(n) || 0);
  const [a, b] = [parts(version), parts(than)];
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return false;
}

/**
 * Why a graph file cannot be served: its project's @langchain/langgraph is a 0.x release (what the templates of
 * create-langgraph 1.1 still pin). Its graphs would run on Hangar's 1.x checkpoints and fail at the first run,
 * so the start is refused with the upgrade to make. Undefined when the project's copy is 1.0 or later (or absent).
 */
export function unsupportedVersion(file: string): string | undefined {
  const pkg = packageFrom(file, "@langchain/langgraph");
  if (!pkg || !older(pkg.version, "1.0.0")) return undefined;
  const core = packageFrom(file, "@langchain/core");
  return (
    `the project's @langchain/langgraph is ${pkg.version} (at ${dirname(pkg.path)}${
      core ? `; @langchain/core ${core.version}` : ""
    }); Hangar serves @langchain/langgraph 1.0 and later. Upgrade the project: ` +
    "npm install @langchain/langgraph@^1 @langchain/core@^1 (and @langchain/langgraph-sdk@^1, langchain@^1 if used)"
  );
}

/**
 * The official server's warning when the project's LangGraph.js packages are older than the server expects
 * (here: than the versions Hangar is built with), or undefined when they are not.
 */
export function outdatedWarning(file: string): string | undefined {
  const outdated: string[] = [];
  for (const [name, required] of [
    ["@langchain/langgraph", HANGAR_LANGGRAPH_VERSION],
    ["@langchain/core", HANGAR_CORE_VERSION],
  ] as const) {
    const pkg = packageFrom(file, name);
    if (pkg && older(pkg.version, required)) {
      outdated.push(`${name} ${pkg.version} (required ^${required}, at ${dirname(pkg.path)})`);
    }
  }
  if (!outdated.length) return undefined;
  return (
    "Some LangGraph.js dependencies are not up to date. Please make sure to update them to the required " +
    `version: ${outdated.join(", ")}`
  );
}
