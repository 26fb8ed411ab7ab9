-- Up Migration
-- The voice runtime's records: a conversation knows its channel, the provider's call, the CRM contact,
-- why it ended, its summary and its recording; each turn is a row written as it is spoken, so a
-- restarted engine or worker loses no turn already heard.
ALTER TABLE conversations
  ADD COLUMN channel text CHECK (channel IN ('twilio', 'widget', 'sip', 'vapi', 'simulated')),
  ADD COLUMN call_id text,
  ADD COLUMN contact_id uuid,
  ADD COLUMN end_reason text,
  ADD COLUMN summary text,
  ADD COLUMN recording_key text,
  ADD COLUMN recording_channels text CHECK (recording_channels IN ('mono', 'dual')),
  ADD COLUMN recording_expires_at timestamptz,
  ADD COLUMN engine_id text;
CREATE INDEX conversations_recording_expiry_idx ON conversations (recording_expires_at) WHERE recording_key IS NOT NULL;
CREATE INDEX conversations_org_agent_started_idx ON conversations (org_id, agent_id, (coalesce(started_at, created_at)) DESC, id DESC);

CREATE TABLE conversation_turns (
  conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  seq integer NOT NULL CHECK (seq >= 0),
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  role text NOT NULL CHECK (role IN ('agent', 'caller', 'tool', 'system')),
  text text NOT NULL,
  -- An agent turn cut by the caller: the part the caller heard (the context keeps only that).
  heard_text text,
  interrupted boolean NOT NULL DEFAULT false,
  -- Milliseconds from the conversation's start.
  started_ms integer,
  ended_ms integer,
  audit jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (conversation_id, seq)
);
ALTER TABLE conversation_turns ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON conversation_turns USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE conversation_turns;
DROP INDEX IF EXISTS conversations_org_agent_started_idx;
DROP INDEX IF EXISTS conversations_recording_expiry_idx;
ALTER TABLE conversations DROP COLUMN channel, DROP COLUMN call_id, DROP COLUMN contact_id, DROP COLUMN end_reason,
  DROP COLUMN summary, DROP COLUMN recording_key, DROP COLUMN recording_channels, DROP COLUMN recording_expires_at,
  DROP COLUMN engine_id;
