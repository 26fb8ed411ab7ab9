-- Up Migration
-- Meeting capture: one bot per meeting, its status history, and the webhook deliveries already
-- signalled (so a redelivery is acknowledged without a second signal). The CRM's `meeting` activity
-- needs no change: activities.type is free text.

CREATE TABLE meeting_bots (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  meeting_url text NOT NULL CHECK (length(meeting_url) BETWEEN 1 AND 2000),
  platform text NOT NULL CHECK (platform IN ('zoom', 'google_meet', 'microsoft_teams')),
  bot_name text NOT NULL CHECK (length(bot_name) BETWEEN 1 AND 100),
  join_at timestamptz,
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  deal_id uuid REFERENCES deals(id) ON DELETE SET NULL,
  contact_ids uuid[] NOT NULL DEFAULT '{}',
  status text NOT NULL DEFAULT 'scheduled' CHECK (status IN (
    'scheduled', 'joining', 'waiting_room', 'in_call', 'recording', 'call_ended', 'transcribing',
    'completed', 'failed', 'canceled')),
  status_reason text,
  vendor text NOT NULL,
  vendor_bot_id text,
  recording_id text,
  recording_url text,
  recording_started_at timestamptz,
  recording_ended_at timestamptz,
  transcript_id text,
  transcript text,
  attendees jsonb,
  activity_id uuid REFERENCES activities(id) ON DELETE SET NULL,
  leave_requested_at timestamptz,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  CHECK ((ended_at IS NOT NULL) = (status IN ('completed', 'failed', 'canceled')))
);
CREATE INDEX meeting_bots_org_created_idx ON meeting_bots (org_id, created_at DESC, id DESC);
CREATE INDEX meeting_bots_org_account_idx ON meeting_bots (org_id, account_id, created_at DESC, id DESC) WHERE account_id IS NOT NULL;
CREATE INDEX meeting_bots_account_fk_idx ON meeting_bots (account_id) WHERE account_id IS NOT NULL;
CREATE INDEX meeting_bots_deal_fk_idx ON meeting_bots (deal_id) WHERE deal_id IS NOT NULL;
CREATE INDEX meeting_bots_activity_fk_idx ON meeting_bots (activity_id) WHERE activity_id IS NOT NULL;

CREATE TABLE meeting_bot_events (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  bot_id uuid NOT NULL REFERENCES meeting_bots(id) ON DELETE CASCADE,
  status text NOT NULL,
  -- The vendor's own code (e.g. in_call_recording, fatal) and sub code, when the move came from it.
  vendor_code text,
  sub_code text,
  message text,
  occurred_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX meeting_bot_events_bot_idx ON meeting_bot_events (bot_id, created_at, id);

CREATE TABLE meeting_webhook_deliveries (
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  webhook_id text NOT NULL,
  bot_id uuid NOT NULL REFERENCES meeting_bots(id) ON DELETE CASCADE,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (webhook_id)
);
CREATE INDEX meeting_webhook_deliveries_org_idx ON meeting_webhook_deliveries (org_id, received_at);
CREATE INDEX meeting_webhook_deliveries_bot_idx ON meeting_webhook_deliveries (bot_id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['meeting_bots', 'meeting_bot_events', 'meeting_webhook_deliveries'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE meeting_webhook_deliveries, meeting_bot_events, meeting_bots;
