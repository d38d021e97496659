-- Version 4: the keys of encryption at rest that sealed data here (their public ids, never the keys), so a start
-- with a missing or another key is refused by name instead of reading garbage.
CREATE TABLE encryption_keys (
  key_id TEXT PRIMARY KEY,
  first_used_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
