-- Hangar control plane schema on PostgreSQL, version 2: settings the store keeps about itself (as in
-- migrations/sqlite/002_secret_key.sql). `secrets_key_id` is the public fingerprint of the key that encrypts
-- deployments' secrets; the `secrets` column then holds a JSON string "hcp1:<key id>:<ciphertext>".
CREATE TABLE store_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
