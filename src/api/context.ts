// What every route module receives: storage, graphs, the run manager and thread state service.
import type { GraphRegistry } from "../graphs/registry.js";
import type { UiBundles } from "../graphs/ui-bundle.js";
import type { RunService } from "../runs/service.js";
import type { ThreadStateService } from "../runs/thread-state.js";
import type { Storage } from "../storage/types.js";
import type { Broker } from "../streams/channel.js";
import type { AddressPolicy } from "../runs/net-policy.js";
import type { Metrics } from "./metrics.js";
import type { Guard } from "./guard.js";
import type { HttpConfig, UserApp } from "./http-config.js";

export interface ApiContext {
  storage: Storage;
  graphs: GraphRegistry;
  runs: RunService;
  threadState: ThreadStateService;
  broker: Broker;
  metrics: Metrics;
  guard: Guard;
  /** The `http` section of langgraph.json. */
  http?: HttpConfig;
  /** The project's own app (http.app). */
  userApp?: UserApp;
  /** The bundled generative UI components of the `ui` section, by agent name. */
  ui?: UiBundles;
  /** checkpointer.ttl of langgraph.json: the TTL of threads created without one. */
  defaultTtl?: { ttl: number; strategy: "delete" | "keep_latest" };
  /** What webhooks may reach (this server's HANGAR_WEBHOOK_* settings). */
  webhooks: AddressPolicy;
  version: string;
  /** Serve the web console at /console. */
  console?: boolean;
  /** Custom encryption at rest is on: requests run in the scope of their user (lib/encryption-context.ts). */
  encryptionScoped?: boolean;
}

/** Keeps only the requested fields of a record (the `select` of search endpoints). */
export function pick<T extends object>(rec: T, select: string[] | undefined): Partial<T> {
  if (!select?.length) return rec;
  return Object.fromEntries(select.filter((k) => k in rec).map((k) => [k, (rec as any)[k]])) as Partial<T>;
}
