// The langgraph.json sections that the official Agent Server's images carry in environment variables (its CLI's
// Dockerfile writes `ENV LANGSERVE_GRAPHS='{...}'`, `LANGGRAPH_HTTP`, ...): declared, parsed and checked here.
import { z } from "zod";
import { envVar, text, type EnvVar } from "./env.js";
import {
  AuthConfigSchema,
  CheckpointerConfigSchema,
  formatIssues,
  GraphsSchema,
  HttpConfigSchema,
  StoreConfigSchema,
  UiConfigSchema,
  UiSchema,
} from "./sections.js";
import { ConfigError } from "../errors.js";

/** Each section with its variable, its shape, and what the docs say it holds. */
const SECTIONS = {
  graphs: {
    name: "LANGSERVE_GRAPHS",
    schema: GraphsSchema,
    doc:
      "a project needs no langgraph.json with it: the directory of `--config` (the working directory by " +
      "default) is the project's",
  },
  ui: { name: "LANGGRAPH_UI", schema: UiSchema, doc: "" },
  ui_config: { name: "LANGGRAPH_UI_CONFIG", schema: UiConfigSchema, doc: "" },
  store: { name: "LANGGRAPH_STORE", schema: StoreConfigSchema, doc: "" },
  checkpointer: { name: "LANGGRAPH_CHECKPOINTER", schema: CheckpointerConfigSchema, doc: "" },
  auth: { name: "LANGGRAPH_AUTH", schema: AuthConfigSchema, doc: "" },
  http: { name: "LANGGRAPH_HTTP", schema: HttpConfigSchema, doc: "" },
} satisfies Record<string, { name: string; schema: z.ZodType; doc: string }>;

export type SectionKey = keyof typeof SECTIONS;

/** The variables, by section; their text is parsed as JSON by `sectionsFromEnv`. */
export const SECTION_VARS = Object.fromEntries(
  Object.entries(SECTIONS).map(([key, s]) => [
    key,
    envVar(s.name, text, {
      doc:
        `as in the official server's images: the \`${key}\` section of langgraph.json, as JSON, in place of ` +
        `the file's (paths relative to the project's directory)${s.doc ? `; ${s.doc}` : ""}`,
      type: "JSON",
    }),
  ]),
) as { [K in SectionKey]: EnvVar<string | undefined> };

/** A section given by its variable. */
export interface SectionFromEnv {
  key: SectionKey;
  /** The variable's name. */
  name: string;
  value: unknown;
}

/**
 * The sections the variables give (`values`: their texts, by section; unset ones are left out), each parsed and
 * checked as langgraph.json's would be. Throws a ConfigError naming the variable and the field.
 */
export function sectionsFromEnv(values: { [K in SectionKey]?: string | undefined }): SectionFromEnv[] {
  const out: SectionFromEnv[] = [];
  for (const [key, { name, schema }] of Object.entries(SECTIONS) as [
    SectionKey,
    (typeof SECTIONS)[SectionKey],
  ][]) {
    const raw = values[key];
    if (raw === undefined || raw.trim() === "") continue;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch (e) {
      throw new ConfigError(`${name}: invalid JSON (the ${key} section): ${(e as Error).message}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      throw new ConfigError(`${name}: invalid ${key} section:\n${formatIssues(parsed.error, [key])}`);
    }
    out.push({ key, name, value: parsed.data });
  }
  return out;
}
