// A control plane deployment and revision as a listener gets them (source `external_docker`, an image), for the
// tests that render Kubernetes objects with `renderRevision`.
import { randomUUID } from "node:crypto";
import type { Deployment, Revision } from "../../src/control-plane/domain/types.ts";

export const now = new Date().toISOString();

export function deployment(
  over: Partial<Deployment> = {},
  sourceConfig: Deployment["source_config"] = {},
): Deployment {
  return {
    id: randomUUID(),
    tenant_id: randomUUID(),
    name: "my-agent",
    source: "external_docker",
    source_config: { deployment_type: "dev", listener_id: randomUUID(), ...sourceConfig },
    source_revision_config: { image_uri: "registry.example.com/agents/my-agent:1.2.3" },
    secrets: [],
    status: "READY",
    latest_revision_id: null,
    active_revision_id: null,
    created_at: now,
    updated_at: now,
    ...over,
  };
}

export function revision(d: Deployment, over: Partial<Revision> = {}): Revision {
  return {
    id: randomUUID(),
    deployment_id: d.id,
    status: "QUEUED",
    source: d.source,
    source_revision_config: { ...d.source_revision_config },
    created_at: now,
    updated_at: now,
    ...over,
  };
}
