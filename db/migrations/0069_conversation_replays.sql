-- Up Migration
-- Replays: a recorded conversation run again through another version of its agent, turn by turn, so a
-- change is heard on real calls before it is published. A batch groups the replays of an agent's last
-- ended conversations. The result (each turn old and new side by side) is written when the replay ends.
CREATE TABLE conversation_replay_batches (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  version integer NOT NULL,
  call_tools boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL DEFAULT now()
);
ALTER TABLE conversation_replay_batches ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON conversation_replay_batches USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

CREATE TABLE conversation_replays (
  id uuid PRIMARY KEY,
  org_id uuid NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  agent_id uuid NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  conversation_id uuid NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  batch_id uuid REFERENCES conversation_replay_batches(id) ON DELETE CASCADE,
  version integer NOT NULL,
  call_tools boolean NOT NULL DEFAULT false,
  status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'completed', 'failed')),
  error text,
  -- Each caller turn with what it was heard as and where its audio came from, the old and the new answer.
  turns jsonb NOT NULL DEFAULT '[]',
  turn_count integer,
  changed_count integer,
  timings jsonb NOT NULL DEFAULT '{}',
  created_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz
);
CREATE INDEX conversation_replays_batch_idx ON conversation_replays (batch_id, created_at, id) WHERE batch_id IS NOT NULL;
CREATE INDEX conversation_replays_org_agent_idx ON conversation_replays (org_id, agent_id, created_at DESC);
ALTER TABLE conversation_replays ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_isolation ON conversation_replays USING (org_id = nullif(current_setting('app.org_id', true), '')::uuid);

-- Down Migration
DROP TABLE conversation_replays;
DROP TABLE conversation_replay_batches;
