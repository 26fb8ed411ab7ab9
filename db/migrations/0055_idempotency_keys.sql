-- Up Migration
-- Idempotency-Key: one row per (organization, credential, key). The row is written, in a statement of its
-- own, before the request's handler runs (status NULL: still running, held until locked_until), so a
-- concurrent duplicate finds it; the answer is stored once the handler finished (status, headers and the
-- body sealed with AES-256-GCM). Rows live 24 hours (expires_at), swept by the API (services/idempotency.ts).
CREATE TABLE idempotency_keys (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  -- the credential: 'key:<api_keys.id>' for ak_/pat_ tokens, 'user:<users.id>' for sessions
  principal text NOT NULL CHECK (length(principal) <= 100),
  key text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
  -- SHA-256 of method, path and body
  fingerprint bytea NOT NULL,
  method text NOT NULL,
  path text NOT NULL,
  -- who holds the key while its request runs; a crashed holder's claim lapses at locked_until
  claim uuid NOT NULL,
  locked_until timestamptz,
  status smallint CHECK (status IS NULL OR status BETWEEN 100 AND 499),
  response_headers jsonb,
  response_key_id text,
  response_body text,
  created_at timestamptz NOT NULL DEFAULT now(),
  completed_at timestamptz,
  expires_at timestamptz NOT NULL,
  PRIMARY KEY (org_id, principal, key)
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
ALTER TABLE idempotency_keys ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON idempotency_keys USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE idempotency_keys;
