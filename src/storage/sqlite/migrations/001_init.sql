-- Hangar embedded schema, version 1: assistants (with versions), threads, runs.
-- Checkpoints and pending writes live in the tables of @langchain/langgraph-checkpoint-sqlite.

CREATE TABLE assistants (
  assistant_id TEXT PRIMARY KEY,
  graph_id TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  context TEXT NOT NULL DEFAULT '{}',
  metadata TEXT NOT NULL DEFAULT '{}',
  name TEXT NOT NULL,
  description TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX assistants_graph_id ON assistants (graph_id);
CREATE INDEX assistants_created_at ON assistants (created_at);

CREATE TABLE assistant_versions (
  assistant_id TEXT NOT NULL REFERENCES assistants (assistant_id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  graph_id TEXT NOT NULL,
  config TEXT NOT NULL DEFAULT '{}',
  context TEXT NOT NULL DEFAULT '{}',
  metadata TEXT NOT NULL DEFAULT '{}',
  name TEXT NOT NULL,
  description TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (assistant_id, version)
);

CREATE TABLE threads (
  thread_id TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  state_updated_at TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  status TEXT NOT NULL DEFAULT 'idle',
  config TEXT NOT NULL DEFAULT '{}',
  "values" TEXT,
  interrupts TEXT NOT NULL DEFAULT '{}',
  error TEXT
);
CREATE INDEX threads_created_at ON threads (created_at);
CREATE INDEX threads_updated_at ON threads (updated_at);
CREATE INDEX threads_status ON threads (status, created_at);

CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  thread_id TEXT,
  assistant_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  status TEXT NOT NULL,
  metadata TEXT NOT NULL DEFAULT '{}',
  kwargs TEXT NOT NULL DEFAULT '{}',
  multitask_strategy TEXT NOT NULL DEFAULT 'enqueue'
);
CREATE INDEX runs_thread ON runs (thread_id, created_at);
CREATE INDEX runs_status ON runs (status);
