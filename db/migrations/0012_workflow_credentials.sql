-- Up Migration
-- Workflow credentials: metadata in plain columns, the value only as AES-256-GCM ciphertext tagged with
-- the id of the key that sealed it (so a key rotation can find and re-encrypt every older value).
CREATE TABLE workflow_credentials (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  description text NOT NULL DEFAULT '',
  -- A built-in refresher (fixed ids, see domain/credentials.ts); null: the value is typed in.
  refresher_workflow_id uuid,
  refresh_input jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(refresh_input) = 'object'),
  refresh_policy jsonb NOT NULL DEFAULT '{"type": "manual"}' CHECK (jsonb_typeof(refresh_policy) = 'object'),
  value_ciphertext text,
  value_key_id text,
  value_keys text[] NOT NULL DEFAULT '{}',
  -- What each entry of the value holds (key, type, source, updated_at), never the value itself.
  secrets jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(secrets) = 'array'),
  expires_at timestamptz,
  last_refresh_status text CHECK (last_refresh_status IN ('success', 'failed', 'running')),
  last_refresh_at timestamptz,
  last_refresh_error text,
  last_refresh_execution_id uuid,
  -- The refresh lock: held while refresh_locked_until is in the future.
  refresh_locked_until timestamptz,
  refresh_lock_holder uuid,
  temporal_schedule_id text,
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((value_ciphertext IS NULL) = (value_key_id IS NULL))
);
CREATE UNIQUE INDEX workflow_credentials_org_name_idx ON workflow_credentials (org_id, lower(name));
CREATE INDEX workflow_credentials_org_created_idx ON workflow_credentials (org_id, created_at DESC, id DESC);
-- The rotation command walks values sealed by a key other than the current one.
CREATE INDEX workflow_credentials_key_idx ON workflow_credentials (value_key_id) WHERE value_key_id IS NOT NULL;

ALTER TABLE workflow_credentials ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON workflow_credentials
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE workflow_credentials;
