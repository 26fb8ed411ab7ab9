-- Up Migration
-- Webhooks to integrators: an organization's endpoints, the messages its events became (written in the
-- transaction of the change, with one delivery row per subscribed endpoint: the outbox), each delivery's
-- state and schedule, and every attempt made.

-- The signing secret is sealed (AES-256-GCM, keyring `webhook-secrets`); during a rotation the previous
-- one signs too until previous_secret_expires_at. failing_since: the first failed attempt since the last
-- success, which disables the endpoint once older than WEBHOOK_DISABLE_AFTER_SECONDS.
CREATE TABLE webhook_endpoints (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
  -- NULL: every event type; otherwise the types subscribed to.
  event_types text[] CHECK (event_types IS NULL OR cardinality(event_types) >= 1),
  enabled boolean NOT NULL DEFAULT true,
  disabled_reason text CHECK (disabled_reason IN ('manual', 'failing')),
  disabled_at timestamptz,
  secret_key_id text NOT NULL,
  secret_ciphertext text NOT NULL,
  previous_secret_key_id text,
  previous_secret_ciphertext text,
  previous_secret_expires_at timestamptz,
  failing_since timestamptz,
  last_success_at timestamptz,
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK (enabled = (disabled_reason IS NULL))
);
CREATE INDEX webhook_endpoints_org_created_idx ON webhook_endpoints (org_id, created_at, id);
-- The fan-out of an event reads the organization's enabled endpoints.
CREATE INDEX webhook_endpoints_org_enabled_idx ON webhook_endpoints (org_id) WHERE enabled;

-- One row per event that had at least one subscribed endpoint; the API and the `webhook-id` header spell
-- its id msg_ + the 32 hex digits of the uuid.
CREATE TABLE webhook_messages (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  event_type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_messages_org_created_idx ON webhook_messages (org_id, created_at DESC, id DESC);

-- A message to one endpoint. next_attempt_at is when its next attempt is due (the message's time at
-- first; pushed ahead while an attempt is in flight, so a worker that died hands it back by itself).
CREATE TABLE webhook_deliveries (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  message_id uuid NOT NULL REFERENCES webhook_messages(id) ON DELETE CASCADE,
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  -- Attempts of the current schedule (a resend starts a new one); the retry delay is chosen by it.
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  last_attempt_at timestamptz,
  last_status_code integer,
  -- Set by a resend: the first attempt of the schedule it starts is a manual one.
  resent_at timestamptz,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (endpoint_id, message_id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- What an endpoint's actor claims: its due deliveries, in the order they fell due.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (endpoint_id, next_attempt_at, message_id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_message_idx ON webhook_deliveries (message_id);
-- An endpoint's messages, newest first.
CREATE INDEX webhook_deliveries_endpoint_created_idx ON webhook_deliveries (endpoint_id, created_at DESC, message_id DESC);

CREATE TABLE webhook_attempts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  endpoint_id uuid NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  message_id uuid NOT NULL REFERENCES webhook_messages(id) ON DELETE CASCADE,
  trigger text NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
  status text NOT NULL CHECK (status IN ('succeeded', 'failed')),
  response_status_code integer,
  response_body text NOT NULL DEFAULT '',
  error text,
  latency_ms integer NOT NULL,
  url text NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_attempts_message_idx ON webhook_attempts (message_id, created_at DESC, id DESC);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['webhook_endpoints', 'webhook_messages', 'webhook_deliveries', 'webhook_attempts'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE webhook_attempts, webhook_deliveries, webhook_messages, webhook_endpoints;
