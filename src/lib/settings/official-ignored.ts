// The official Agent Server's environment variables that mean nothing to Hangar (its compose files, Helm values and
// images set them): a server says so once at start, one line each, naming what to use instead when there is one.
import type { Env } from "./env.js";

export interface IgnoredVar {
  /** The name, or with `prefix` the start of the names (`FF_`: the official server's feature flags). */
  name: string;
  prefix?: boolean;
  /** What it does there, and what Hangar has instead. */
  why: string;
}

export const IGNORED_OFFICIAL_VARS: readonly IgnoredVar[] = [
  {
    name: "BG_JOB_ISOLATED_LOOPS",
    why: "to run graphs with synchronous code off the API's thread, set HANGAR_GRAPH_THREADS",
  },
  {
    name: "CORS_ALLOW_ORIGINS",
    why: "to narrow CORS, set http.cors.allow_origins in langgraph.json (or LANGGRAPH_HTTP)",
  },
  { name: "CORS_CONFIG", why: "CORS is set by http.cors in langgraph.json (or LANGGRAPH_HTTP)" },
  {
    name: "DD_API_KEY",
    why: "Hangar does not wrap itself in Datadog's ddtrace-run; it serves Prometheus metrics at /metrics",
  },
  {
    name: "LANGGRAPH_AUTH_TYPE",
    why: "custom auth is auth.path in langgraph.json (or LANGGRAPH_AUTH); API keys without it are HANGAR_API_KEYS",
  },
  { name: "LANGGRAPH_CLOUD_LICENSE_KEY", why: "Hangar needs no license key" },
  { name: "LANGSMITH_LANGGRAPH_API_VARIANT", why: "Hangar has one variant" },
  { name: "LS_OTEL_INSTRUMENT", why: "Hangar has no OpenTelemetry instrumentation of its own" },
  {
    name: "MOUNT_PREFIX",
    why: "Hangar serves its API at the root path; behind a proxy, strip the prefix there",
  },
  { name: "REDIS_CLUSTER", why: "Hangar connects to one Redis server (REDIS_URL), not to a Redis Cluster" },
  { name: "REDIS_MAX_CONNECTIONS", why: "Hangar opens a fixed few Redis connections per process" },
  { name: "FF_", prefix: true, why: "it is a feature flag of the official server" },
];

/** One line per variable of `env` in IGNORED_OFFICIAL_VARS (set, and not empty), in the order of the names. */
export function ignoredOfficialVars(env: Env): string[] {
  const names = Object.keys(env)
    .filter((n) => env[n]?.trim())
    .sort();
  const lines: string[] = [];
  for (const name of names) {
    const known = IGNORED_OFFICIAL_VARS.find((v) => (v.prefix ? name.startsWith(v.name) : name === v.name));
    if (known) lines.push(`${name} is an official Agent Server variable that Hangar ignores: ${known.why}`);
  }
  return lines;
}
