// Request schemas of the control plane API (zod), after the official document's request models.
import { z } from "zod";
import { DEPLOYMENT_TYPES, nullableString, uuid } from "../../domain/schemas.js";

// The deployment bodies are the domain's (domain/schemas.ts); the routes and the OpenAPI document take them here.
export {
  DEPLOYMENT_SOURCES,
  DEPLOYMENT_TYPES,
  DeploymentCreate,
  DeploymentPatch,
  Secret,
  SecretReference,
  SourceConfigRequest,
  SourceRevisionConfigRequest,
  type DeploymentCreateBody,
  type DeploymentPatchBody,
} from "../../domain/schemas.js";

export const DEPLOYMENT_STATUSES = [
  "AWAITING_DATABASE",
  "READY",
  "UNUSED",
  "AWAITING_DELETE",
  "UNKNOWN",
] as const;
export const REVISION_STATUSES = [
  "CREATING",
  "QUEUED",
  "AWAITING_BUILD",
  "BUILDING",
  "AWAITING_DEPLOY",
  "DEPLOYING",
  "CREATE_FAILED",
  "BUILD_FAILED",
  "DEPLOY_FAILED",
  "DEPLOYED",
  "SKIPPED",
  "INTERRUPTED",
  "UNKNOWN",
] as const;
export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR"] as const;

/** limit (1-100, default 20) and offset (>= 0, default 0) of list endpoints. */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(20)
    .describe("Maximum number of resources to return."),
  offset: z.coerce
    .number()
    .int()
    .min(0)
    .default(0)
    .describe(
      "Pagination offset. Pass this value to subsequent requests to fetch the next page of resources.",
    ),
});

/** A comma separated list (or a repeated query parameter) as an array of trimmed, non-empty items. */
const splitList = (v: unknown) =>
  v === undefined || v === null
    ? undefined
    : (Array.isArray(v) ? v : [v])
        .flatMap((s) => String(s).split(","))
        .map((s) => s.trim())
        .filter(Boolean);
const commaList = <T extends z.ZodType>(item: T) => z.preprocess(splitList, z.array(item).optional());

// ---- listeners

export const ListenerIdParams = z.object({ listener_id: uuid() });

export const ListenerComputeConfig = z.object({
  k8s_namespaces: z
    .array(z.string().min(1))
    .nullable()
    .optional()
    .describe("Kubernetes namespaces the listener is configured for (compute_type k8s)."),
});

export const ListenerCreate = z.object({
  version: nullableString(),
  compute_type: z.literal("k8s"),
  compute_id: z.string().min(1),
  compute_config: ListenerComputeConfig,
});

export const ListenerPatch = z.object({
  version: nullableString(),
  compute_config: ListenerComputeConfig.nullable().optional(),
});

/** PUT: a full replacement; compute_type and compute_id may be given but must equal the stored ones. */
export const ListenerPut = z.object({
  version: nullableString(),
  compute_type: z.literal("k8s").optional(),
  compute_id: z.string().min(1).optional(),
  compute_config: ListenerComputeConfig,
});

// ---- deployments

export const DeploymentIdParams = z.object({ deployment_id: uuid() });
export const RevisionIdParams = z.object({ deployment_id: uuid(), revision_id: uuid() });

export const DeploymentListQuery = PageQuery.extend({
  name_contains: z.string().optional().describe("Name of the deployment to filter by."),
  status: z.string().optional().describe("`status` of the deployment to filter by."),
  deployment_type: z.enum(DEPLOYMENT_TYPES).optional().describe("Deployment type to filter by."),
  deployment_ids: commaList(uuid()).describe("Comma separated list of deployment IDs to filter by."),
});

export const DeploymentDeleteQuery = z.object({
  deployment_ids: z.preprocess(splitList, z.array(uuid()).min(1).max(100)),
});

export const RevisionListQuery = PageQuery.extend({
  status: commaList(z.enum(REVISION_STATUSES)).describe(
    "Comma separated list of revision `status` to filter by.",
  ),
});

// ---- logs

export const LogsBody = z
  .object({
    limit: z.number().int().min(1).max(1000).default(100),
    offset: z.number().int().min(0).default(0),
    order: z.enum(["asc", "desc"]).default("asc"),
    level: z
      .string()
      .transform((s) => (s.toUpperCase() === "WARN" ? "WARNING" : s.toUpperCase()))
      .pipe(z.enum(LOG_LEVELS))
      .nullable()
      .optional(),
    query: z.string().nullable().optional().describe("Only lines whose message contains this text."),
    start_time: z.iso.datetime({ offset: true }).nullable().optional(),
    end_time: z.iso.datetime({ offset: true }).nullable().optional(),
    revision_id: uuid().nullable().optional(),
  })
  .optional()
  .default({ limit: 100, offset: 0, order: "asc" });

// ---- listener side (Hangar extension)

export const ListenerRevisionParams = z.object({ listener_id: uuid(), revision_id: uuid() });
export const ListenerDeploymentParams = z.object({ listener_id: uuid(), deployment_id: uuid() });

export const RevisionStatusReport = z.object({
  status: z.enum(REVISION_STATUSES),
  message: z.string().nullable().optional(),
});

export const AssignmentPatch = z.object({
  active_revision_id: uuid().optional(),
  status: z.enum(DEPLOYMENT_STATUSES).optional(),
  /** Where the listener's cluster serves the deployment (its Service): its custom_url when it has none of its own. */
  url: z
    .string()
    .max(2048)
    .regex(/^https?:\/\/[^\s]+$/, "must be an http(s) URL")
    .optional(),
});

export const LogReport = z.object({
  lines: z
    .array(
      z.object({
        deployment_id: uuid(),
        revision_id: uuid().nullable().optional(),
        kind: z.enum(["build", "deploy"]).default("deploy"),
        level: z.enum(LOG_LEVELS).default("INFO"),
        message: z.string(),
        timestamp: z.iso.datetime({ offset: true }).optional(),
      }),
    )
    .max(10_000),
});
