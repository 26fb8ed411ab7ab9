-- Up Migration
-- Calls placed through a provider dialer (Twilio, Vapi), one row per attempt key: written before the
-- provider is asked, so a repeated request finds the call already placed (or looks it up at the
-- provider when the previous request died before its answer was stored), and reconcile() knows which
-- provider call to read for a report that never arrived.
CREATE TABLE dialer_provider_calls (
  idempotency_key text PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  provider text NOT NULL,
  phone_number text NOT NULL,
  from_number text,
  provider_call_id text,
  requests integer NOT NULL DEFAULT 1,
  requested_at timestamptz NOT NULL DEFAULT now(),
  placed_at timestamptz
);
CREATE UNIQUE INDEX dialer_provider_calls_provider_call_idx ON dialer_provider_calls (provider, provider_call_id)
  WHERE provider_call_id IS NOT NULL;

ALTER TABLE dialer_provider_calls ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON dialer_provider_calls USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE dialer_provider_calls;
