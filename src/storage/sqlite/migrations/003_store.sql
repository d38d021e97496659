-- Version 3: the long-term store (items by namespace and key), with optional TTL.
-- The namespace is stored as its labels joined by U+001F, so a prefix is a string prefix.
CREATE TABLE store_items (
  namespace TEXT NOT NULL,
  key TEXT NOT NULL,
  value TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  ttl_minutes REAL,
  expires_at REAL,
  PRIMARY KEY (namespace, key)
);
CREATE INDEX store_items_expires ON store_items (expires_at) WHERE expires_at IS NOT NULL;
