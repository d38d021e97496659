-- Hangar scale-out schema, version 1: the tables of the embedded schema (SQLite 001-006) on PostgreSQL,
-- with JSONB and GIN indexes for metadata search, and run leases for many worker processes.
-- Checkpoints live in the tables of @langchain/langgraph-checkpoint-postgres (its own migrations).

CREATE TABLE assistants (
  assistant_id UUID PRIMARY KEY,
  graph_id TEXT NOT NULL,
  config JSONB NOT NULL DEFAULT '{}',
  context JSONB NOT NULL DEFAULT '{}',
  metadata JSONB NOT NULL DEFAULT '{}',
  name TEXT NOT NULL,
  description TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX assistants_graph_id ON assistants (graph_id);
CREATE INDEX assistants_metadata ON assistants USING GIN (metadata jsonb_path_ops);

CREATE TABLE assistant_versions (
  assistant_id UUID NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  graph_id TEXT NOT NULL,
  config JSONB NOT NULL DEFAULT '{}',
  context JSONB NOT NULL DEFAULT '{}',
  metadata JSONB NOT NULL DEFAULT '{}',
  name TEXT NOT NULL,
  description TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (assistant_id, version)
);

CREATE TABLE threads (
  thread_id UUID PRIMARY KEY,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  state_updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  metadata JSONB NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'idle',
  config JSONB NOT NULL DEFAULT '{}',
  "values" JSONB,
  interrupts JSONB NOT NULL DEFAULT '{}',
  error JSONB,
  ttl_minutes DOUBLE PRECISION,
  ttl_strategy TEXT,
  expires_at TIMESTAMPTZ
);
CREATE INDEX threads_metadata ON threads USING GIN (metadata jsonb_path_ops);
CREATE INDEX threads_created_at ON threads (created_at);
CREATE INDEX threads_updated_at ON threads (updated_at);
CREATE INDEX threads_status ON threads (status, created_at);
CREATE INDEX threads_expires ON threads (expires_at) WHERE expires_at IS NOT NULL;

CREATE TABLE runs (
  run_id UUID PRIMARY KEY,
  thread_id UUID,
  assistant_id UUID NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  status TEXT NOT NULL,
  metadata JSONB NOT NULL DEFAULT '{}',
  kwargs JSONB NOT NULL DEFAULT '{}',
  multitask_strategy TEXT NOT NULL DEFAULT 'enqueue',
  attempt INTEGER NOT NULL DEFAULT 1,
  -- The worker holding a running run, and until when its lease lasts (renewed by its heartbeat).
  worker_id TEXT,
  lease_expires_at TIMESTAMPTZ,
  not_before TIMESTAMPTZ
);
CREATE INDEX runs_thread ON runs (thread_id, created_at);
CREATE INDEX runs_pending ON runs (created_at) WHERE status = 'pending';
CREATE INDEX runs_leases ON runs (lease_expires_at) WHERE status = 'running';

CREATE TABLE crons (
  cron_id UUID PRIMARY KEY,
  assistant_id UUID NOT NULL,
  thread_id UUID,
  user_id TEXT,
  schedule TEXT NOT NULL,
  timezone TEXT,
  end_time TIMESTAMPTZ,
  enabled BOOLEAN NOT NULL DEFAULT true,
  on_run_completed TEXT NOT NULL DEFAULT 'delete',
  payload JSONB NOT NULL DEFAULT '{}',
  metadata JSONB NOT NULL DEFAULT '{}',
  next_run_date TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX crons_due ON crons (next_run_date) WHERE enabled;
CREATE INDEX crons_thread ON crons (thread_id);

CREATE TABLE store_items (
  namespace TEXT[] NOT NULL,
  key TEXT NOT NULL,
  value JSONB NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  ttl_minutes DOUBLE PRECISION,
  expires_at TIMESTAMPTZ,
  embedding JSONB,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX store_items_expires ON store_items (expires_at) WHERE expires_at IS NOT NULL;
