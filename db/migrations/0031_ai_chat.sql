-- Up Migration
-- UI message streams: the frames of streamed assistant answers (AI SDK UI message stream protocol v1),
-- stored as they are written so a client replays them from its Last-Event-ID. A stream is a log of
-- segments (one HTTP response each, from `start` to `[DONE]`); ids increase within a stream and are
-- taken under the stream row's lock, so they commit in order. Shared by every area that streams answers.
CREATE TABLE ui_streams (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  last_frame_id bigint NOT NULL DEFAULT 0,
  segment_id uuid,
  segment_start_id bigint,
  segment_open boolean NOT NULL DEFAULT false
);
CREATE INDEX ui_streams_org_idx ON ui_streams (org_id);

CREATE TABLE ui_stream_frames (
  stream_id uuid NOT NULL REFERENCES ui_streams(id) ON DELETE CASCADE,
  id bigint NOT NULL,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  segment_id uuid NOT NULL,
  -- null: the segment's end (`data: [DONE]`)
  frame jsonb,
  -- which writer wrote it (e.g. `<turn>:<step>:model`), so a retried writer finds what its cut-off attempt left
  source text NOT NULL,
  -- written by an attempt that was cut off and redone: sent live, left out of the stored message
  abandoned boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (stream_id, id)
);
CREATE INDEX ui_stream_frames_source_idx ON ui_stream_frames (stream_id, source);

-- AI chat: a conversation of one user in one organization; its stream is ui_streams.id = chat id.
CREATE TABLE ai_chats (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  owner_user_id uuid NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title text NOT NULL CHECK (length(title) BETWEEN 1 AND 200),
  account_id uuid REFERENCES accounts(id) ON DELETE SET NULL,
  -- the turn running (streaming or waiting for an approval); one at a time
  active_turn_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ai_chats_owner_idx ON ai_chats (org_id, owner_user_id, created_at DESC, id DESC);

-- One user message and the assistant's answer to it. The transcript is what the model read and wrote
-- (tool calls and their outputs included): the history of later turns, always the server's own.
CREATE TABLE ai_chat_turns (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  chat_id uuid NOT NULL REFERENCES ai_chats(id) ON DELETE CASCADE,
  status text NOT NULL CHECK (status IN ('streaming', 'awaiting_approval', 'completed', 'stopped', 'failed')),
  user_message jsonb NOT NULL,
  assistant_message_id text NOT NULL,
  assistant_parts jsonb NOT NULL DEFAULT '[]',
  transcript jsonb NOT NULL DEFAULT '[]',
  model text,
  steps integer NOT NULL DEFAULT 0,
  -- set by POST /stop: the model call in flight sees it within half a second (the workflow is signaled too)
  stop_requested boolean NOT NULL DEFAULT false,
  -- where the turn's frames begin in the chat's stream
  first_frame_id bigint NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);
CREATE INDEX ai_chat_turns_chat_idx ON ai_chat_turns (chat_id, created_at, id);
CREATE UNIQUE INDEX ai_chat_turns_message_idx ON ai_chat_turns (chat_id, (user_message->>'id'));

-- What a finished step produced, written with its last frames: a retried activity returns it instead of
-- calling the model or committing again.
CREATE TABLE ai_chat_steps (
  turn_id uuid NOT NULL REFERENCES ai_chat_turns(id) ON DELETE CASCADE,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  step integer NOT NULL,
  kind text NOT NULL,
  result jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (turn_id, step, kind)
);

-- A change the assistant proposed, stored before its approval request is sent; single use.
CREATE TABLE ai_chat_approvals (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  chat_id uuid NOT NULL REFERENCES ai_chats(id) ON DELETE CASCADE,
  turn_id uuid NOT NULL REFERENCES ai_chat_turns(id) ON DELETE CASCADE,
  step integer NOT NULL,
  tool_call_id text NOT NULL,
  tool_name text NOT NULL,
  input jsonb NOT NULL,
  input_hash text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'expired', 'canceled')),
  reason text CHECK (reason IS NULL OR length(reason) <= 1000),
  decided_by_user_id uuid REFERENCES users(id) ON DELETE SET NULL,
  decided_at timestamptz,
  committed_at timestamptz,
  result jsonb,
  expires_at timestamptz NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (turn_id, tool_call_id)
);
CREATE INDEX ai_chat_approvals_chat_idx ON ai_chat_approvals (chat_id, created_at);

DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['ui_streams', 'ui_stream_frames', 'ai_chats', 'ai_chat_turns', 'ai_chat_steps', 'ai_chat_approvals'] LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant_isolation ON %I USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid)$p$, t);
  END LOOP;
END $$;

-- Down Migration
DROP TABLE ai_chat_approvals;
DROP TABLE ai_chat_steps;
DROP TABLE ai_chat_turns;
DROP TABLE ai_chats;
DROP TABLE ui_stream_frames;
DROP TABLE ui_streams;
