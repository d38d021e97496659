-- Version 2: how many times a run was started (a run resumed after a crash is attempt 2, ...).
ALTER TABLE runs ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
