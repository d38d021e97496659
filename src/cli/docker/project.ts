// What `hangar dockerfile`, `build` and `up` read of a project: langgraph.json's fields as the official CLI reads
// them for its images (node_version, dockerfile_lines, dependencies, env, graphs, ui, http, auth, store,
// checkpointer), the package manager its lockfile names, and the project's place in the image.
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, isAbsolute, join, relative, resolve } from "node:path";
import { ConfigError, loadProjectConfig } from "../../lib/settings/project.js";
import { SECTION_VARS, type SectionKey } from "../../lib/settings/section-vars.js";

/** How the project's production dependencies are installed, by the lockfile found beside its package.json. */
export type PackageManager =
  | { kind: "npm"; lockfile?: "package-lock.json" | "npm-shrinkwrap.json" }
  | { kind: "yarn"; lockfile: "yarn.lock"; berry: boolean }
  | { kind: "pnpm"; lockfile: "pnpm-lock.yaml" };

/** A folder of the project holding a package.json: its dependencies are installed in the image. */
export interface PackageDir {
  /** Relative to the project's directory, with `/` separators; `.` for the project itself. */
  dir: string;
  manager: PackageManager;
}

export interface DockerProject {
  /** The directory of langgraph.json: the build context, and the project's folder in the image. */
  projectDir: string;
  /** langgraph.json's file name in that directory. */
  configName: string;
  /** The project's folder in the image: `/deps/<directory name>`, as in the official images. */
  workdir: string;
  /** node_version (default 20): the major version, or a full one, of the public `node` images. */
  nodeVersion: string;
  dockerfileLines: string[];
  /** The project itself (when it has a package.json) and each local dependency with one. */
  packages: PackageDir[];
  /** `env` when it names a file (relative to the project): it never goes into the image. */
  envFile?: string;
  /** `env` when it is an object: the variables (Hangar also reads them from langgraph.json at start). */
  envVars: Record<string, string>;
  /** The sections the official images carry as variables (LANGSERVE_GRAPHS, ...), by section. */
  sections: Partial<Record<SectionKey, unknown>>;
  /** docker_compose_file: more services for `hangar up` (relative to the project). */
  composeFile?: string;
  /** What is worth saying but does not stop the command. */
  warnings: string[];
}

/**
 * The sections, with the variable the official image gives each (its Dockerfile's `ENV` lines): the ones the server
 * reads (src/lib/settings/section-vars.ts), so what an image carries is what its server understands.
 */
export const SECTION_VARIABLES = Object.fromEntries(
  Object.entries(SECTION_VARS).map(([key, v]) => [key, v.name]),
) as Record<SectionKey, string>;
export type { SectionKey };

/** The package manager of a folder with a package.json, by its lockfile (npm when there is none). */
export function packageManager(dir: string): PackageManager {
  if (existsSync(join(dir, "pnpm-lock.yaml"))) return { kind: "pnpm", lockfile: "pnpm-lock.yaml" };
  if (existsSync(join(dir, "yarn.lock"))) {
    // Yarn 2+ ("berry") keeps .yarnrc.yml, or names itself in packageManager; Yarn 1 has neither.
    let declared = "";
    try {
      declared = String(
        (JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { packageManager?: unknown })
          .packageManager ?? "",
      );
    } catch {
      // an unreadable package.json is npm's (or yarn's) to report when it installs
    }
    const berry = existsSync(join(dir, ".yarnrc.yml")) || /^yarn@([2-9]|\d\d)/.test(declared);
    return { kind: "yarn", lockfile: "yarn.lock", berry };
  }
  if (existsSync(join(dir, "npm-shrinkwrap.json"))) return { kind: "npm", lockfile: "npm-shrinkwrap.json" };
  if (existsSync(join(dir, "package-lock.json"))) return { kind: "npm", lockfile: "package-lock.json" };
  return { kind: "npm" };
}

/** A path of the project's directory as the image's Dockerfile names it (`/` separators). */
const posix = (p: string) => p.split("\\").join("/");

/** Node versions the image may be built on: a major of at least 20 (Hangar's engines), optionally minor/patch. */
function nodeVersionOf(raw: unknown): string {
  if (raw === undefined || raw === null || raw === "") return "20";
  const text = String(raw);
  const m = /^(\d+)(\.\d+){0,2}$/.exec(text);
  if (!m || Number(m[1]) < 20) {
    throw new ConfigError(
      `node_version must be a Node version of at least 20 (e.g. "20", "22"), got '${text}'`,
    );
  }
  return text;
}

/**
 * Reads the project of `configPath` for an image. Throws ConfigError (naming the file or field) for what the
 * Agent Server would refuse, and for dependencies that are not folders inside the project.
 */
export function readDockerProject(configPath: string): DockerProject {
  const project = loadProjectConfig(resolve(configPath));
  const raw = project.raw as Record<string, unknown>;
  const projectDir = project.projectDir;
  const warnings = [...project.warnings];
  const name = basename(projectDir).replace(/[^A-Za-z0-9._-]/g, "-") || "app";
  const workdir = `/deps/${name}`;

  const packages: PackageDir[] = [];
  if (existsSync(join(projectDir, "package.json"))) {
    packages.push({ dir: ".", manager: packageManager(projectDir) });
  }
  const registryNames: string[] = [];
  for (const dep of project.raw.dependencies ?? []) {
    if (!dep.startsWith(".") && !isAbsolute(dep)) {
      registryNames.push(dep);
      continue;
    }
    const abs = resolve(projectDir, dep);
    const rel = relative(projectDir, abs);
    if (rel.startsWith("..") || isAbsolute(rel)) {
      throw new ConfigError(`dependencies: '${dep}' is outside the project's directory (${projectDir})`);
    }
    if (!existsSync(abs) || !statSync(abs).isDirectory()) {
      throw new ConfigError(`dependencies: '${dep}' is not a directory of the project (${abs})`);
    }
    if (rel !== "" && existsSync(join(abs, "package.json"))) {
      packages.push({ dir: posix(rel), manager: packageManager(abs) });
    }
  }
  if (registryNames.length) {
    warnings.push(
      `dependencies: ${registryNames.join(", ")} not installed (a Node project's packages come from its ` +
        "package.json, as with the official CLI)",
    );
  }

  const env = project.raw.env;
  let envFile: string | undefined;
  let envVars: Record<string, string> = {};
  if (typeof env === "string") {
    const rel = relative(projectDir, resolve(projectDir, env));
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
      throw new ConfigError(`env: the env file '${env}' is outside the project's directory`);
    }
    envFile = posix(rel);
  } else if (env) {
    envVars = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
  }

  const sections: DockerProject["sections"] = {};
  for (const key of Object.keys(SECTION_VARIABLES) as SectionKey[]) {
    const value = raw[key];
    if (value !== undefined && value !== null) sections[key] = value;
  }
  const lines = project.raw.dockerfile_lines ?? [];
  const composeFile = typeof raw.docker_compose_file === "string" ? raw.docker_compose_file : undefined;
  return {
    projectDir,
    configName: basename(project.configPath),
    workdir,
    nodeVersion: nodeVersionOf(project.raw.node_version),
    dockerfileLines: lines,
    packages,
    envFile,
    envVars,
    sections,
    composeFile,
    warnings,
  };
}

/** The graphs section with each local module as its path in the image (`/deps/<name>/src/graph.ts:graph`). */
export function graphsInImage(p: DockerProject): unknown {
  const graphs = p.sections.graphs as Record<string, string | { path: string; description?: string }>;
  const inImage = (spec: string) => {
    const idx = spec.lastIndexOf(":");
    const file = idx > 1 ? spec.slice(0, idx) : spec;
    if (!file.startsWith(".") && !isAbsolute(file)) return spec;
    const rel = posix(relative(p.projectDir, resolve(p.projectDir, file)));
    if (rel.startsWith("..")) return spec;
    return `${p.workdir}/${rel}${idx > 1 ? spec.slice(idx) : ""}`;
  };
  return Object.fromEntries(
    Object.entries(graphs).map(([id, spec]) => [
      id,
      typeof spec === "string" ? inImage(spec) : { ...spec, path: inImage(spec.path) },
    ]),
  );
}
