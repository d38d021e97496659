// langgraph.json: schema, validation with clear errors naming the file, and env loading (incl. the
// LANGGRAPH_CONFIG variable the official server reads: per-graph config of the system assistants).
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import { settings } from "../settings.js";
import {
  AuthConfigSchema,
  CheckpointerConfigSchema,
  HttpConfigSchema,
  StoreConfigSchema,
  unknownKeys,
} from "./sections.js";
import { ConfigError } from "../errors.js";
import { isObject } from "../objects.js";

const GraphSpec = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), description: z.string().optional() }).passthrough(),
]);

export const LanggraphConfigSchema = z
  .object({
    graphs: z.record(z.string().min(1), GraphSpec).refine((g) => Object.keys(g).length > 0, {
      message: "must name at least one graph",
    }),
    env: z
      .union([z.string(), z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))])
      .optional(),
    dependencies: z.array(z.string()).optional(),
    node_version: z.union([z.string(), z.number()]).optional(),
    dockerfile_lines: z.array(z.string()).optional(),
    store: StoreConfigSchema.nullish(),
    checkpointer: CheckpointerConfigSchema.nullish(),
    auth: AuthConfigSchema.nullish(),
    http: HttpConfigSchema.nullish(),
  })
  .passthrough();

/** The sections typed after the official schema, whose unknown keys are warned about. */
const SECTIONS = {
  store: StoreConfigSchema,
  checkpointer: CheckpointerConfigSchema,
  auth: AuthConfigSchema,
  http: HttpConfigSchema,
} as const;

export interface GraphEntry {
  graphId: string;
  /** Absolute path of the module. */
  file: string;
  /** Export name (default "default" is not assumed: the spec must name it, or we take the module's default). */
  exportName: string | undefined;
  description?: string;
}

export interface ProjectConfig {
  configPath: string;
  projectDir: string;
  graphs: GraphEntry[];
  env: Record<string, string>;
  /** What is wrong but not fatal (e.g. a missing env file); the server prints each once at start. */
  warnings: string[];
  raw: z.infer<typeof LanggraphConfigSchema>;
}

export { ConfigError } from "../errors.js";

function formatZodIssues(err: z.ZodError): string {
  return err.issues.map((i) => `  - ${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`).join("\n");
}

/** Parses a graph spec `./path/file.ts:export` into file and export name. */
export function parseGraphSpec(projectDir: string, graphId: string, spec: string): GraphEntry {
  const idx = spec.lastIndexOf(":");
  // A colon at index 1 could be a Windows drive letter; specs here are POSIX paths.
  const hasExport = idx > 1;
  const file = hasExport ? spec.slice(0, idx) : spec;
  const exportName = hasExport ? spec.slice(idx + 1) : undefined;
  if (hasExport && !exportName) {
    throw new ConfigError(`graph "${graphId}": spec "${spec}" has an empty export name after ":"`);
  }
  return { graphId, file: resolve(projectDir, file), exportName };
}

/** The variables of an env file (KEY=VALUE lines, as dotenv reads them); undefined when there is no such file. */
export function readEnvFile(path: string): Record<string, string> | undefined {
  return existsSync(path) ? parseDotenv(readFileSync(path)) : undefined;
}

/**
 * The project's env. A missing env file is a warning, not a refusal, as in the official CLI: templates name
 * `.env`, which is git-ignored and left out of deploys (whose values arrive as secrets instead).
 */
function loadEnv(
  projectDir: string,
  env: z.infer<typeof LanggraphConfigSchema>["env"],
  warnings: string[],
): Record<string, string> {
  if (env === undefined) return {};
  if (typeof env === "string") {
    const envPath = resolve(projectDir, env);
    const values = readEnvFile(envPath);
    if (!values) warnings.push(`Env file "${env}" not found (looked at ${envPath}). Continuing without it.`);
    return values ?? {};
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

/** Reads and validates a langgraph.json; throws ConfigError with a message naming the file and the problem. */
export function loadProjectConfig(configPath: string): ProjectConfig {
  const abs = resolve(configPath);
  if (!existsSync(abs)) throw new ConfigError(`${abs}: file not found`);
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(abs, "utf8"));
  } catch (e) {
    throw new ConfigError(`${abs}: invalid JSON: ${(e as Error).message}`);
  }
  const parsed = LanggraphConfigSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(`${abs}: invalid configuration:\n${formatZodIssues(parsed.error)}`);
  }
  const projectDir = dirname(abs);
  const graphs = Object.entries(parsed.data.graphs).map(([id, spec]) => {
    const entry = parseGraphSpec(projectDir, id, typeof spec === "string" ? spec : spec.path);
    if (typeof spec !== "string" && spec.description) entry.description = spec.description;
    return entry;
  });
  const warnings: string[] = [];
  for (const [name, schema] of Object.entries(SECTIONS)) {
    for (const key of unknownKeys(schema, parsed.data[name], name)) {
      warnings.push(`${abs}: ${key} is not a setting Hangar knows; ignored`);
    }
  }
  const env = loadEnv(projectDir, parsed.data.env, warnings);
  return { configPath: abs, projectDir, graphs, env, warnings, raw: parsed.data };
}

/** Applies the project's env to process.env without overriding what the user already exported. */
export function applyEnv(env: Record<string, string>): void {
  for (const [k, v] of Object.entries(env)) {
    if (process.env[k] === undefined) process.env[k] = v;
  }
}

/** Config and context of a graph's system assistant, from LANGGRAPH_CONFIG. */
export interface AssistantDefaults {
  config: Record<string, unknown>;
  context?: Record<string, unknown>;
}

/**
 * LANGGRAPH_CONFIG, read as the official JS server does: a JSON object mapping a graph id to the config of
 * its system assistant (`{"agent": {"configurable": {...}, "recursion_limit": 50, "context": {...}}}`;
 * `context` becomes the assistant's context). Throws ConfigError naming the variable when it is not that.
 */
export function assistantDefaultsFromEnv(
  raw: string | undefined = settings().server.langgraphConfig,
): Record<string, AssistantDefaults> {
  if (raw === undefined || raw.trim() === "") return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw new ConfigError(`LANGGRAPH_CONFIG: invalid JSON: ${(e as Error).message}`);
  }
  if (!isObject(json)) {
    throw new ConfigError("LANGGRAPH_CONFIG: must be a JSON object mapping graph ids to assistant configs");
  }
  const out: Record<string, AssistantDefaults> = {};
  for (const [graphId, value] of Object.entries(json)) {
    if (!isObject(value)) {
      throw new ConfigError(`LANGGRAPH_CONFIG.${graphId}: must be an object (the assistant's config)`);
    }
    const { context, ...config } = value;
    if (context !== undefined && !isObject(context)) {
      throw new ConfigError(`LANGGRAPH_CONFIG.${graphId}.context: must be an object`);
    }
    out[graphId] = { config, ...(context !== undefined ? { context } : {}) };
  }
  return out;
}
