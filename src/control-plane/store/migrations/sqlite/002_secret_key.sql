-- Hangar control plane schema, version 2: settings the store keeps about itself. `secrets_key_id` is the public
-- fingerprint of the key that encrypts deployments' secrets (the `secrets` column then holds a JSON string
-- "hcp1:<key id>:<ciphertext>" instead of the array; rows of version 1 are encrypted when a control plane starts).
CREATE TABLE store_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
