// langgraph.json: schema, validation with clear errors naming the file, the sections the official image's variables
// give in its place (LANGSERVE_GRAPHS, ...), and env loading (incl. the LANGGRAPH_CONFIG variable the official server
// reads: per-graph config of the system assistants).
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parse as parseDotenv } from "dotenv";
import { z } from "zod";
import { loadSettings, settings, type Env } from "../settings.js";
import {
  AuthConfigSchema,
  CheckpointerConfigSchema,
  formatIssues,
  GraphsSchema,
  HttpConfigSchema,
  EncryptionConfigSchema,
  StoreConfigSchema,
  unknownKeys,
} from "./sections.js";
import { ignoredOfficialVars } from "./official-ignored.js";
import { sectionsFromEnv } from "./section-vars.js";
import { ConfigError } from "../errors.js";
import { isObject } from "../objects.js";

export const LanggraphConfigSchema = z
  .object({
    graphs: GraphsSchema,
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
    encryption: EncryptionConfigSchema.nullish(),
  })
  .passthrough();

/** The sections typed after the official schema, whose unknown keys are warned about. */
const SECTIONS = {
  store: StoreConfigSchema,
  checkpointer: CheckpointerConfigSchema,
  auth: AuthConfigSchema,
  http: HttpConfigSchema,
  encryption: EncryptionConfigSchema,
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
  /** The langgraph.json named (absolute), whether or not there is one (see `hasFile`). */
  configPath: string;
  /** Whether langgraph.json exists: without it, LANGSERVE_GRAPHS gave the graphs. */
  hasFile: boolean;
  /** The variables that gave sections (LANGSERVE_GRAPHS, LANGGRAPH_HTTP, ...), in place of the file's. */
  fromEnv: string[];
  projectDir: string;
  graphs: GraphEntry[];
  env: Record<string, string>;
  /** What is wrong but not fatal (e.g. a missing env file); the server prints each once at start. */
  warnings: string[];
  raw: z.infer<typeof LanggraphConfigSchema>;
}

export { ConfigError } from "../errors.js";

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

/** The JSON of langgraph.json; throws ConfigError naming the file when it is not JSON. */
function readConfigFile(abs: string): unknown {
  try {
    return JSON.parse(readFileSync(abs, "utf8"));
  } catch (e) {
    throw new ConfigError(`${abs}: invalid JSON: ${(e as Error).message}`);
  }
}

/** A graph's module and export, for comparing two `graphs` sections that name them differently. */
const graphTargets = (projectDir: string, graphs: unknown): string =>
  JSON.stringify(
    Object.entries(graphs as Record<string, string | { path: string }>)
      .map(([id, spec]) => {
        const e = parseGraphSpec(projectDir, id, typeof spec === "string" ? spec : spec.path);
        return [id, e.file, e.exportName ?? ""];
      })
      .sort(),
  );

/** JSON with its keys sorted, for comparing two sections. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    isObject(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );

/**
 * Reads and validates a project's configuration: its langgraph.json and, given the environment a server starts in
 * (`env`), the sections the official image's variables give there. A section given by its variable replaces the
 * file's, as in the official image, whose server reads only the variables; with LANGSERVE_GRAPHS the file may be
 * absent (the project's directory is then the one `configPath` names). The official server's variables that Hangar
 * ignores, in `env` or the project's env, are among the warnings. Throws ConfigError with a message naming the
 * file or the variable, and the problem.
 */
export function loadProjectConfig(configPath: string, env?: Env): ProjectConfig {
  const abs = resolve(configPath);
  const projectDir = dirname(abs);
  const sections = env ? sectionsFromEnv(loadSettings(env).sections) : [];
  const hasFile = existsSync(abs);
  if (!hasFile && !sections.some((s) => s.key === "graphs")) {
    throw new ConfigError(`${abs}: file not found (nor are the graphs given by LANGSERVE_GRAPHS)`);
  }
  const json = hasFile ? readConfigFile(abs) : {};
  const warnings: string[] = [];
  if (isObject(json)) {
    for (const { key, name, value } of sections) {
      const own = json[key];
      if (hasFile && own !== undefined && own !== null) {
        const same =
          key === "graphs" && isObject(own) && GraphsSchema.safeParse(own).success
            ? graphTargets(projectDir, own) === graphTargets(projectDir, value)
            : canonical(own) === canonical(value);
        if (!same) warnings.push(`${name} gives the ${key} section: used instead of ${abs}'s, which differs`);
      }
      json[key] = value;
    }
  }
  const parsed = LanggraphConfigSchema.safeParse(json);
  if (!parsed.success) {
    throw new ConfigError(`${abs}: invalid configuration:\n${formatIssues(parsed.error)}`);
  }
  const graphs = Object.entries(parsed.data.graphs).map(([id, spec]) => {
    const entry = parseGraphSpec(projectDir, id, typeof spec === "string" ? spec : spec.path);
    if (typeof spec !== "string" && spec.description) entry.description = spec.description;
    return entry;
  });
  for (const [name, schema] of Object.entries(SECTIONS)) {
    const from = sections.find((s) => s.key === name)?.name ?? abs;
    for (const key of unknownKeys(schema, parsed.data[name], name)) {
      warnings.push(`${from}: ${key} is not a setting Hangar knows; ignored`);
    }
  }
  const projectEnv = loadEnv(projectDir, parsed.data.env, warnings);
  if (env) warnings.push(...ignoredOfficialVars({ ...projectEnv, ...env }));
  return {
    configPath: abs,
    hasFile,
    fromEnv: sections.map((s) => s.name),
    projectDir,
    graphs,
    env: projectEnv,
    warnings,
    raw: parsed.data,
  };
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
