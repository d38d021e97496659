// The deployment request bodies (zod) the domain's rules take (create, PATCH), after the official document's
// request models; http/routes/schemas.ts validates requests and writes the OpenAPI document with them.
import { z } from "zod";

/** Any GUID-shaped id. */
export const uuid = () => z.guid();
/** An optional string that may be null. */
export const nullableString = () => z.string().nullable().optional();

export const DEPLOYMENT_SOURCES = [
  "github",
  "external_docker",
  "internal_docker",
  "internal_source",
] as const;
export const DEPLOYMENT_TYPES = ["dev_free", "dev", "prod"] as const;

const ResourceSpec = z
  .object({
    min_scale: z.number().int().nullable().optional(),
    max_scale: z.number().int().nullable().optional(),
    cpu: z.number().min(0.1).max(8).nullable().optional(),
    cpu_limit: z.number().min(0.1).max(16).nullable().optional(),
    memory_mb: z.number().int().nullable().optional(),
    memory_limit_mb: z.number().int().nullable().optional(),
    queue_min_scale: z.number().int().nullable().optional(),
    queue_max_scale: z.number().int().nullable().optional(),
    queue_cpu: z.number().min(0.1).max(8).nullable().optional(),
    queue_cpu_limit: z.number().min(0.1).max(16).nullable().optional(),
    queue_memory_mb: z.number().int().nullable().optional(),
    queue_memory_limit_mb: z.number().int().nullable().optional(),
  })
  .passthrough();

export const SourceConfigRequest = z.object({
  integration_id: uuid().nullable().optional(),
  repo_url: nullableString(),
  deployment_type: z.enum(DEPLOYMENT_TYPES).nullable().optional(),
  build_on_push: z.boolean().nullable().optional(),
  custom_url: nullableString(),
  resource_spec: ResourceSpec.nullable().optional(),
  listener_id: uuid().nullable().optional(),
  listener_config: z.object({ k8s_namespace: nullableString() }).nullable().optional(),
  install_command: nullableString(),
  build_command: nullableString(),
});

export const SourceRevisionConfigRequest = z.object({
  repo_ref: nullableString(),
  langgraph_config_path: nullableString(),
  image_uri: nullableString(),
  source_tarball_path: nullableString(),
});

export const Secret = z.object({ name: z.string().min(1), value: z.string() });
export const SecretReference = z.object({
  name: z.string().min(1),
  secret_name: z.string().min(1),
  secret_key: z.string().min(1),
});

export const DeploymentCreate = z.object({
  name: z.string().min(1),
  source: z.enum(DEPLOYMENT_SOURCES),
  source_config: SourceConfigRequest,
  source_revision_config: SourceRevisionConfigRequest,
  secrets: z.array(Secret),
  secret_references: z.array(SecretReference).nullable().optional(),
});
export type DeploymentCreateBody = z.infer<typeof DeploymentCreate>;

export const DeploymentPatch = z.object({
  revision_source: z.enum(["github", "internal_docker", "internal_source"]).nullable().optional(),
  source_config: SourceConfigRequest.nullable().optional(),
  source_revision_config: SourceRevisionConfigRequest.nullable().optional(),
  secrets: z.array(Secret).nullable().optional(),
  secret_references: z.array(SecretReference).nullable().optional(),
});
export type DeploymentPatchBody = z.infer<typeof DeploymentPatch>;
