-- Up Migration
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- The identity provider's ids are kept as strings (external_id); our own UUIDs are used inside.
CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  external_id text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id uuid PRIMARY KEY,
  external_id text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (org_id, user_id)
);

-- ak_ organization keys (org_id set, user_id = creator) and pat_ user tokens (org_id null).
-- key_id is the public lookup half; only an Argon2id hash of the secret is stored.
CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  kind text NOT NULL CHECK (kind IN ('organization', 'user')),
  key_id text NOT NULL UNIQUE,
  secret_hash text NOT NULL,
  org_id uuid REFERENCES organizations(id) ON DELETE CASCADE,
  user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name text NOT NULL,
  scopes text[] NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((kind = 'organization') = (org_id IS NOT NULL))
);
CREATE INDEX api_keys_org_idx ON api_keys (org_id, created_at) WHERE kind = 'organization';
CREATE INDEX api_keys_user_idx ON api_keys (user_id, created_at) WHERE kind = 'user';

-- Row-level security is defined for every tenant table but only binds roles that do not own the
-- tables (the service's own role owns them). A least-privilege role sets app.org_id per session.
ALTER TABLE api_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON api_keys
  USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE api_keys;
DROP TABLE memberships;
DROP TABLE users;
DROP TABLE organizations;
