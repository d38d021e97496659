// `hangar check`: loads a project's langgraph.json and imports every graph (and the auth and http app it
// names, and bundles its ui), as the Agent Server would at start-up; one line per graph, exit 1 with the reason
// on the first failure.
import { resolve } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { loadUserApp } from "../api/http-config.js";
import { AuthError, Authorizer } from "../auth/auth.js";
import {
  applyEnv,
  assistantDefaultsFromEnv,
  ConfigError,
  loadProjectConfig,
} from "../lib/settings/project.js";
import { GraphLoadError, GraphRegistry } from "../graphs/registry.js";
import { bundleUi } from "../graphs/ui-bundle.js";
import { loadSettings, SettingsError, useSettings } from "../lib/settings.js";
import { configureLogging } from "../lib/logger.js";

export interface CheckOptions {
  config: string;
}

export async function runCheck(opts: CheckOptions): Promise<number> {
  try {
    // What graphs log while imported (the SDK's getLogger()) goes to stderr, beside the warnings.
    const log = configureLogging("pretty", { fd: 2 });
    const project = loadProjectConfig(resolve(opts.config), process.env);
    for (const w of project.warnings) console.error(`hangar check: warning: ${w}`);
    applyEnv(project.env);
    const env = useSettings(loadSettings(process.env));
    assistantDefaultsFromEnv(env.server.langgraphConfig);
    const given = project.fromEnv.length ? ` (sections from ${project.fromEnv.join(", ")})` : "";
    console.log(`config ok: ${project.hasFile ? project.configPath : project.projectDir}${given}`);
    const warnings = new Set<string>();
    for (const entry of project.graphs) {
      // One registry per graph, so each line says which graph was imported.
      const registry = new GraphRegistry(new MemorySaver(), undefined, log);
      await registry.loadAll([entry]);
      for (const w of registry.warnings) warnings.add(w);
      const spec = `${entry.file}${entry.exportName ? `:${entry.exportName}` : ""}`;
      console.log(`graph ok: ${entry.graphId} (${spec})`);
    }
    const auth = await Authorizer.load(project.projectDir, project.raw.auth, env.server.apiKeys);
    for (const w of warnings) console.error(`hangar check: warning: ${w}`);
    if (auth.custom) console.log("auth ok");
    if (await loadUserApp(project.projectDir, project.raw.http?.app)) console.log("http.app ok");
    const ui = await bundleUi(project.projectDir, project.raw.ui, project.raw.ui_config);
    for (const agent of ui?.keys() ?? []) console.log(`ui ok: ${agent}`);
    return 0;
  } catch (e) {
    if (
      e instanceof ConfigError ||
      e instanceof SettingsError ||
      e instanceof GraphLoadError ||
      e instanceof AuthError
    ) {
      console.error(`hangar check: ${e.message}`);
      return 1;
    }
    console.error(`hangar check: failed: ${(e as Error)?.stack ?? String(e)}`);
    return 1;
  }
}
