-- Version 4: crons (scheduled runs), on a thread or making a new thread per execution.
CREATE TABLE crons (
  cron_id TEXT PRIMARY KEY,
  assistant_id TEXT NOT NULL,
  thread_id TEXT,
  user_id TEXT,
  schedule TEXT NOT NULL,
  timezone TEXT,
  end_time TEXT,
  enabled INTEGER NOT NULL DEFAULT 1,
  on_run_completed TEXT NOT NULL DEFAULT 'delete',
  payload TEXT NOT NULL DEFAULT '{}',
  metadata TEXT NOT NULL DEFAULT '{}',
  next_run_date TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX crons_due ON crons (enabled, next_run_date);
CREATE INDEX crons_thread ON crons (thread_id);
