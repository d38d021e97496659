-- Version 5: thread TTL (minutes, strategy delete | keep_latest) and when the thread expires.
ALTER TABLE threads ADD COLUMN ttl_minutes REAL;
ALTER TABLE threads ADD COLUMN ttl_strategy TEXT;
ALTER TABLE threads ADD COLUMN expires_at TEXT;
CREATE INDEX threads_expires ON threads (expires_at) WHERE expires_at IS NOT NULL;
