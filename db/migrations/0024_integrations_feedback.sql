-- Up Migration
-- Integrations: connect tokens (short-lived, single use, only their SHA-256 stored) and connected
-- third-party accounts, whose tokens live only in a workflow credential (sealed, write-only).
CREATE TABLE integration_connect_tokens (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  token_hash text NOT NULL UNIQUE,
  allowed_integrations text[] NOT NULL CHECK (cardinality(allowed_integrations) BETWEEN 1 AND 50),
  end_user_id text CHECK (end_user_id IS NULL OR length(end_user_id) BETWEEN 1 AND 200),
  connection_id uuid,
  success_url text NOT NULL,
  error_url text NOT NULL,
  created_by text NOT NULL,
  created_by_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  -- Set when the consent starts: the token is spent, the authorization runs under `oauth_state`.
  used_at timestamptz,
  integration text,
  oauth_state text UNIQUE,
  code_verifier text,
  completed_at timestamptz
);
CREATE INDEX integration_connect_tokens_org_idx ON integration_connect_tokens (org_id, created_at);
CREATE INDEX integration_connect_tokens_expiry_idx ON integration_connect_tokens (expires_at);

CREATE TABLE integration_connections (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  integration text NOT NULL,
  status text NOT NULL CHECK (status IN ('active', 'needs_reconnect', 'revoked')),
  external_account_id text NOT NULL,
  external_account_label text NOT NULL,
  granted_scopes text[] NOT NULL DEFAULT '{}',
  end_user_id text,
  connected_by text NOT NULL,
  -- The workflow credential holding the tokens; null once revoked.
  credential_id uuid REFERENCES workflow_credentials(id) ON DELETE SET NULL,
  status_reason text,
  connected_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX integration_connections_org_idx ON integration_connections (org_id, created_at DESC, id DESC);
CREATE UNIQUE INDEX integration_connections_credential_idx ON integration_connections (credential_id) WHERE credential_id IS NOT NULL;
-- Several accounts of one provider per organization, each once while not revoked.
CREATE UNIQUE INDEX integration_connections_account_idx ON integration_connections (org_id, integration, external_account_id)
  WHERE status <> 'revoked';

-- Per organization: origins a connect token's success_url / error_url may point at (none stored: the
-- service's own public origin only).
CREATE TABLE integration_settings (
  org_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  allowed_redirect_origins text[] NOT NULL CHECK (cardinality(allowed_redirect_origins) <= 50),
  modified_by text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE integration_settings ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON integration_settings
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

ALTER TABLE integration_connect_tokens ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON integration_connect_tokens
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);
ALTER TABLE integration_connections ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON integration_connections
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Feedback: global, not a tenant table (the organization is context only, and may be absent). Row-level
-- security is on with no policy: only the service's own role (the owner) reads it, never a tenant role.
CREATE TABLE feedback (
  id uuid PRIMARY KEY,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  org_id uuid REFERENCES organizations(id) ON DELETE SET NULL,
  category text NOT NULL,
  message text NOT NULL CHECK (length(message) BETWEEN 1 AND 5000),
  rating smallint CHECK (rating BETWEEN 1 AND 5),
  context jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(context) = 'object'),
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX feedback_created_idx ON feedback (created_at DESC, id DESC);
CREATE INDEX feedback_user_idx ON feedback (user_id);
CREATE INDEX feedback_org_idx ON feedback (org_id) WHERE org_id IS NOT NULL;
ALTER TABLE feedback ENABLE ROW LEVEL SECURITY;

-- Down Migration
DROP TABLE feedback;
DROP TABLE integration_connections;
DROP TABLE integration_connect_tokens;
DROP TABLE integration_settings;
