// The sections of langgraph.json (`graphs`, `ui`, `ui_config`, `store`, `checkpointer`, `auth`, `http`), typed
// after the official schema (langgraph-cli's schema.json). Keys it does not know are kept and reported as warnings,
// not refused.
import { z } from "zod";

/** A graph: `./path/file.ts:export`, or `{path, description}`. */
const GraphSpec = z.union([
  z.string().min(1),
  z.object({ path: z.string().min(1), description: z.string().optional() }).passthrough(),
]);

/** `graphs`: graph ids to their modules, at least one. */
export const GraphsSchema = z
  .record(z.string().min(1), GraphSpec)
  .refine((g) => Object.keys(g).length > 0, { message: "must name at least one graph" });

/** `ui`: agent names to component files (`./src/ui.tsx`). */
export const UiSchema = z.record(z.string(), z.string().min(1, "must be a file path"));

/** `ui_config`: packages the bundles share with the page instead of bundling them. */
export const UiConfigSchema = z.looseObject({ shared: z.array(z.string()).optional() });

const validRegex = (s: string) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
};

/** `http.cors`: narrows the CORS of the server (on by default for any origin). */
export const CorsConfigSchema = z.looseObject({
  allow_origins: z.array(z.string()).optional(),
  allow_origin_regex: z.string().refine(validRegex, "not a valid regular expression").optional(),
  allow_methods: z.array(z.string()).optional(),
  allow_headers: z.array(z.string()).optional(),
  allow_credentials: z.boolean().optional(),
  expose_headers: z.array(z.string()).optional(),
  max_age: z.number().int().nonnegative().optional(),
});
export type CorsConfig = z.infer<typeof CorsConfigSchema>;

/** Header patterns (exact names or `*` wildcards); exclusions win. */
const HeaderPatternsSchema = z.looseObject({
  includes: z.array(z.string()).nullish(),
  excludes: z.array(z.string()).nullish(),
});

export const HttpConfigSchema = z.looseObject({
  /** The project's own app, `./file.ts:export` (an object with `fetch(Request)`, e.g. a Hono app). */
  app: z.string().min(1).optional(),
  cors: CorsConfigSchema.nullish(),
  disable_assistants: z.boolean().optional(),
  disable_threads: z.boolean().optional(),
  disable_runs: z.boolean().optional(),
  disable_store: z.boolean().optional(),
  disable_meta: z.boolean().optional(),
  disable_mcp: z.boolean().optional(),
  disable_a2a: z.boolean().optional(),
  /** Protocol v2 (`/threads/{id}/commands`, `/threads/{id}/stream/events`); also off with `disable_runs`. */
  disable_protocol: z.boolean().optional(),
  disable_ui: z.boolean().optional(),
  disable_webhooks: z.boolean().optional(),
  configurable_headers: HeaderPatternsSchema.nullish(),
  logging_headers: HeaderPatternsSchema.nullish(),
  middleware_order: z.enum(["auth_first", "middleware_first"]).nullish(),
  enable_custom_route_auth: z.boolean().optional(),
  mount_prefix: z.string().optional(),
});
export type HttpConfig = z.infer<typeof HttpConfigSchema>;

export const StoreConfigSchema = z.looseObject({
  /** Semantic search: the project's embedding function, the vectors' size, the fields embedded. */
  index: z
    .looseObject({
      embed: z.string({ error: 'must be a "./file.ts:export" path' }).min(1),
      dims: z.number({ error: "must be a positive number" }).int().positive(),
      fields: z.array(z.string()).nullish(),
    })
    .nullish(),
  ttl: z
    .looseObject({
      default_ttl: z.number().nonnegative().nullish(),
      refresh_on_read: z.boolean().optional(),
      sweep_interval_minutes: z.number().int().positive().nullish(),
    })
    .nullish(),
});
export type StoreConfig = z.infer<typeof StoreConfigSchema>;

export const CheckpointerConfigSchema = z.looseObject({
  /** Default TTL of threads (minutes) and how often expired ones are swept. */
  ttl: z
    .looseObject({
      strategy: z.enum(["delete", "keep_latest"]).optional(),
      default_ttl: z.number().nonnegative().nullish(),
      sweep_interval_minutes: z.number().int().positive().nullish(),
    })
    .nullish(),
});
export type CheckpointerConfig = z.infer<typeof CheckpointerConfigSchema>;

/** Custom encryption at rest: the project's handlers, `./file.ts:export` (docs/encryption.md). */
export const EncryptionConfigSchema = z.looseObject({
  path: z.string().min(1),
});
export type EncryptionConfig = z.infer<typeof EncryptionConfigSchema>;

export const AuthConfigSchema = z.looseObject({
  /** The project's Auth object (@langchain/langgraph-sdk/auth), `./file.ts:export`. */
  path: z.string().min(1).optional(),
  disable_studio_auth: z.boolean().optional(),
  /** Security schemes merged into the OpenAPI document. */
  openapi: z
    .looseObject({
      securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())).optional(),
      security: z.array(z.record(z.string(), z.array(z.string()))).optional(),
      paths: z.record(z.string(), z.unknown()).optional(),
    })
    .optional(),
  cache: z
    .looseObject({
      cache_keys: z.array(z.string()).optional(),
      ttl_seconds: z.number().int().positive().optional(),
      max_size: z.number().int().positive().optional(),
    })
    .nullish(),
});
export type AuthConfig = z.infer<typeof AuthConfigSchema>;

/** A zod error as one line per issue, each naming its field (under `path`, when given): `  - http.cors: ...`. */
export function formatIssues(err: z.ZodError, path: readonly PropertyKey[] = []): string {
  return err.issues
    .map((i) => {
      const at = [...path, ...i.path];
      return `  - ${at.length ? at.map(String).join(".") : "(root)"}: ${i.message}`;
    })
    .join("\n");
}

/** Unwraps optional/nullable wrappers down to the schema inside. */
function inner(schema: z.ZodType): z.ZodType {
  let s = schema;
  while (s instanceof z.ZodOptional || s instanceof z.ZodNullable) s = s.unwrap() as z.ZodType;
  return s;
}

/**
 * The keys of `value` that `schema` does not declare, as dotted paths under `path` (nested objects too):
 * `http.disable_everything`, `store.index.model`.
 */
export function unknownKeys(schema: z.ZodType, value: unknown, path: string): string[] {
  const s = inner(schema);
  if (!(s instanceof z.ZodObject) || typeof value !== "object" || value === null || Array.isArray(value)) {
    return [];
  }
  const shape = s.shape as Record<string, z.ZodType>;
  return Object.entries(value).flatMap(([k, v]) =>
    k in shape ? unknownKeys(shape[k], v, `${path}.${k}`) : [`${path}.${k}`],
  );
}
