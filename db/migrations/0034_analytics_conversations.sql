-- Up Migration
-- Analytics Assistant conversations: a user's questions in one organization, each a turn whose answer
-- streams through ui_streams (stream id = conversation id) and is kept once the turn ends.
CREATE TABLE analytics_conversations (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  owner_user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  -- the turn running; one at a time
  active_turn_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX analytics_conversations_owner_idx ON analytics_conversations (org_id, owner_user_id, created_at DESC, id DESC);

-- One question and its answer: the statements tried, the last result, the text; the transcript is
-- what the model read and wrote (later turns read it back).
CREATE TABLE analytics_turns (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL REFERENCES analytics_conversations(id) ON DELETE CASCADE,
  question text NOT NULL,
  status text NOT NULL CHECK (status IN ('running', 'completed', 'failed')),
  answer_message_id text NOT NULL,
  answer_parts jsonb NOT NULL DEFAULT '[]',
  answer_text text,
  transcript jsonb NOT NULL DEFAULT '[]',
  model text,
  error text,
  first_frame_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);
CREATE INDEX analytics_turns_conversation_idx ON analytics_turns (conversation_id, created_at, id);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['analytics_conversations', 'analytics_turns'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE analytics_turns;
DROP TABLE analytics_conversations;
