-- Up Migration
CREATE TABLE campaigns (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  external_id text,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  status text NOT NULL DEFAULT 'paused' CHECK (status IN ('paused', 'active', 'completed', 'canceled')),
  configuration_id uuid,
  agent_number text,
  priority integer NOT NULL DEFAULT 0 CHECK (priority BETWEEN 0 AND 999999),
  -- A plain uuid: validated against agents at create, re-checked before each call.
  agent_id uuid,
  version integer,
  timezone text NOT NULL DEFAULT 'UTC',
  calling_window jsonb NOT NULL,
  max_attempts integer NOT NULL CHECK (max_attempts BETWEEN 1 AND 20),
  retry_backoff_seconds integer NOT NULL CHECK (retry_backoff_seconds >= 1),
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz,
  CHECK ((closed_at IS NOT NULL) = (status IN ('completed', 'canceled')))
);
CREATE INDEX campaigns_org_created_idx ON campaigns (org_id, created_at DESC, id DESC);
-- The dispatcher walks an organization's active campaigns by priority.
CREATE INDEX campaigns_org_active_idx ON campaigns (org_id, priority DESC, created_at) WHERE status = 'active';
-- A retried create with the same external_id is a 409, not a second campaign.
CREATE UNIQUE INDEX campaigns_org_external_idx ON campaigns (org_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE campaign_contacts (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  campaign_id uuid NOT NULL REFERENCES campaigns(id) ON DELETE CASCADE,
  external_id text,
  phone_numbers text[] NOT NULL CHECK (cardinality(phone_numbers) >= 1),
  timezone text,
  scheduled_at timestamptz,
  agent_id uuid,
  agent_config jsonb,
  agent_number text,
  agent_version integer,
  initial_context text,
  data jsonb,
  -- pending: waits for next_attempt_at; calling: attempt number `attempts` is in flight (dialed_at once
  -- the dialer accepted it); completed, failed, canceled: final.
  status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'calling', 'completed', 'failed', 'canceled')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz,
  dialed_at timestamptz,
  last_outcome text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- Due contacts of one campaign, earliest first: the dispatcher's page query.
CREATE INDEX campaign_contacts_due_idx ON campaign_contacts (campaign_id, next_attempt_at, id) WHERE status = 'pending';
-- Calls in flight per organization: the slot count.
CREATE INDEX campaign_contacts_calling_idx ON campaign_contacts (org_id, dialed_at) WHERE status = 'calling';
CREATE INDEX campaign_contacts_campaign_idx ON campaign_contacts (campaign_id, created_at, id);
CREATE INDEX campaign_contacts_status_idx ON campaign_contacts (campaign_id, status);

CREATE TABLE campaign_concurrency_settings (
  org_id uuid PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  concurrency_limit integer NOT NULL CHECK (concurrency_limit BETWEEN 0 AND 10000),
  created_by text NOT NULL,
  modified_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- The built-in simulated dialer's memory of the calls it placed: one row per idempotency key, so a
-- repeated request never rings twice, and a restarted worker can report calls whose report was lost.
CREATE TABLE dialer_simulated_calls (
  idempotency_key text PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  phone_number text NOT NULL,
  outcome text NOT NULL,
  duration_seconds integer NOT NULL,
  requests integer NOT NULL DEFAULT 1,
  placed_at timestamptz NOT NULL DEFAULT now(),
  due_at timestamptz NOT NULL,
  reported_at timestamptz
);
CREATE INDEX dialer_simulated_calls_unreported_idx ON dialer_simulated_calls (org_id, due_at) WHERE reported_at IS NULL;

-- Each attempt of a campaign contact is one conversation row (table of the agents area).
ALTER TABLE conversations
  ADD CONSTRAINT conversations_campaign_id_fkey FOREIGN KEY (campaign_id) REFERENCES campaigns(id) ON DELETE SET NULL;
CREATE INDEX conversations_campaign_idx ON conversations (campaign_id, created_at) WHERE campaign_id IS NOT NULL;

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['campaigns', 'campaign_contacts', 'campaign_concurrency_settings', 'dialer_simulated_calls'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP INDEX IF EXISTS conversations_campaign_idx;
ALTER TABLE conversations DROP CONSTRAINT IF EXISTS conversations_campaign_id_fkey;
DROP TABLE dialer_simulated_calls, campaign_concurrency_settings, campaign_contacts, campaigns;
