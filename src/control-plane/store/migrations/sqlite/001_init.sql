-- Hangar control plane schema, version 1: tenancy, deployments and revisions, listeners, uploads, logs.
-- JSON columns hold the API's objects as text. `seq` columns give a stable order to rows created together.

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  plan TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE workspaces (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX workspaces_organization ON workspaces (organization_id);

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  organization_id TEXT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  workspace_id TEXT REFERENCES workspaces (id) ON DELETE CASCADE,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

CREATE TABLE deployments (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  name TEXT NOT NULL,
  source TEXT NOT NULL,
  source_config TEXT NOT NULL,
  source_revision_config TEXT NOT NULL,
  secrets TEXT NOT NULL,
  secret_references TEXT,
  status TEXT NOT NULL,
  deployment_type TEXT,
  listener_id TEXT,
  latest_revision_id TEXT,
  active_revision_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
-- A name is unique among a workspace's deployments that are not deleted.
CREATE UNIQUE INDEX deployments_tenant_name ON deployments (tenant_id, name) WHERE deleted_at IS NULL;
CREATE INDEX deployments_listener ON deployments (listener_id);

CREATE TABLE revisions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  deployment_id TEXT NOT NULL,
  status TEXT NOT NULL,
  source TEXT NOT NULL,
  source_revision_config TEXT NOT NULL,
  status_message TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX revisions_deployment ON revisions (deployment_id, seq);

CREATE TABLE listeners (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  version TEXT,
  compute_type TEXT NOT NULL,
  compute_id TEXT NOT NULL,
  compute_config TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, compute_id)
);

CREATE TABLE uploads (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  deployment_id TEXT,
  token_hash TEXT NOT NULL UNIQUE,
  path TEXT NOT NULL,
  state TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX uploads_path ON uploads (tenant_id, path);

CREATE TABLE logs (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  deployment_id TEXT NOT NULL,
  revision_id TEXT,
  kind TEXT NOT NULL,
  level TEXT NOT NULL,
  message TEXT NOT NULL,
  timestamp TEXT NOT NULL
);
CREATE INDEX logs_deployment ON logs (deployment_id, kind, seq);
